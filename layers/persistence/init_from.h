#pragma once
// Starting a model from another run's weights (fine-tuning a pretrained encoder): the parameters
// the checkpoint has under the same name are copied, the others keep their fresh initialisation
// (a new head), and the checkpoint's other tensors (the pretraining head) are left out.
#include <string>
#include <vector>

#include "core/platform/io/safetensors.h"
#include "layers/models/transnormer.h"

namespace tn {

struct InitFromReport {
  std::vector<std::string> loaded;   // model entries copied from the checkpoint
  std::vector<std::string> created;  // model entries the checkpoint lacks: initialised afresh
  std::vector<std::string> ignored;  // checkpoint tensors the model has no entry for
  /// Head entries both have, initialised afresh because the checkpoint's head is another (the MLM
  /// head's head.dense under a classifier); in neither list above.
  std::vector<std::string> replaced;
};

/// Copies every tensor of `file` that `model` has an entry (parameter or buffer) of the same
/// name for. The output head (`head.*`) is copied only when the checkpoint's model had the same
/// head (its "transnormer.config" metadata): the MLM head's head.dense is not the classification
/// head's, though both have that name and shape (fairseq keeps lm_head and classification_heads
/// apart). Throws ConfigError naming the parameter, both shapes, `where` and the fix when a name
/// matches with another shape (another d_model, vocabulary or position count); nothing is copied
/// then.
InitFromReport init_from_weights(TransNormerModel& model, const SafetensorsFile& file, const std::string& where);

/// The checkpoint file that `train.init_from` names: the path itself, or
/// <dir>/checkpoint.safetensors for a run directory. Throws ConfigError when neither exists.
std::string init_from_checkpoint_path(const std::string& init_from);

}  // namespace tn
