#pragma once
// Model checkpoints (names: docs/model.md §12): safetensors with the resolved model section in
// __metadata__["transnormer.config"] and, for language models, the vocabulary as a JSON list in
// "transnormer.vocab". Loading is strict: names and shapes must equal the model's exactly.
#include <memory>
#include <string>
#include <vector>

#include "core/platform/io/safetensors.h"
#include "layers/models/transnormer.h"

namespace tn {

struct LoadedCheckpoint {
  std::unique_ptr<TransNormerModel> model;
  std::vector<std::string> vocab;  // empty when the file holds none
  int64_t step = -1;                // the training step it was saved at ("transnormer.step"); -1 when not recorded
};

/// Writes every parameter and buffer (F32) plus config and vocab (if non-empty), atomically;
/// step >= 0 is recorded as "transnormer.step" (the training step, for --resume).
void save_checkpoint(const std::string& path, const TransNormerModel& model,
                     const std::vector<std::string>& vocab, int64_t step = -1);

/// Reads the header and its config, builds the model and loads its tensors. Throws DataError naming
/// the file for a missing/corrupt file or a missing config, a config that describes a larger model
/// than the file holds (parameter_floor against the values the header lists, checked before the
/// model is built or any tensor read), tensors missing, unexpected, mis-shaped or stored as
/// integers, and a vocabulary whose size is not the model's vocab_size; ConfigError for an invalid
/// config (naming the file and the key).
LoadedCheckpoint load_checkpoint(const std::string& path);

/// `path`, or, when it is a folder (a run directory), its checkpoint.safetensors: what the verbs
/// that take --checkpoint read. A folder without one throws DataError saying what it is (a sweep
/// folder, a smoke run that kept none, no run).
std::string checkpoint_file(const std::string& path);

/// Copies `file`'s tensors into `model` (strict, as above); `where` names the source in errors.
void load_weights(TransNormerModel& model, const SafetensorsFile& file, const std::string& where);

}  // namespace tn
