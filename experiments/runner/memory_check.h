#pragma once
// Refusing a run that cannot fit before anything is allocated: `--set model.d_model=100000000`
// would otherwise end in std::bad_alloc after minutes, and a huge batch in a swap storm. The
// estimate is a floor (what training surely needs), so a run that fits is never refused.
#include <algorithm>
#include <cstdint>
#include <string>

#include "layers/config/model_config.h"

namespace tn {

struct MemoryEstimate {
  double parameters = 0;  // estimated parameter count of the model
  double weight_bytes = 0;      // weights, gradients and the two AdamW moments: 16 bytes per parameter
  double activation_bytes = 0;  // what one batch's forward keeps for the backward, at least
  double eval_bytes = 0;        // what one evaluation batch's forward holds at once, at least
  double total_bytes() const { return weight_bytes + std::max(activation_bytes, eval_bytes); }
};

/// Parameters of `config`, counted from its shapes without building it: embeddings (and the
/// untied output matrix, learned positions), per layer the four d×d projections with biases, the
/// channel mixer and the norms, and the head's own layers. Within a few percent of
/// TransNormerModel::params().parameter_count() (tested); mixer-specific extras such as URPE's
/// angles are left out.
double estimate_parameter_count(const ModelConfig& config);

/// The floor of one training step's memory for a batch of `positions` token positions
/// (batch × sequence length): 16 bytes per parameter, plus per layer and position the mixer's
/// saved q, k, v, output and norm inputs (8·d floats) and the channel mixer's hidden states
/// (2·d_ff floats), plus one 512-row chunk of output logits, plus the `update_freq` batches a step
/// holds at once (train.update_freq; 12 bytes per position and 1 KiB each). With `longest` (the
/// longest sequence of a batch, > 0) also what each layer's mixer keeps beyond that
/// (MixerEntry::saved_floats, for positions / longest sequences of `longest`: softmax attention's
/// two row statistics, DiagAttention's n·min(block_size, n) probabilities, Performer's features).
/// With `eval_batch` (train.eval_batch_size, > 0) and `longest`, also the floor of one evaluation
/// batch of eval_batch sequences of `longest`, whose layers run one after another without a tape:
/// per position 4·d + d_ff floats and the widest layer's saved_floats (they are made in evaluation
/// too); the run needs the larger of the two activation floors.
MemoryEstimate estimate_training_memory(const ModelConfig& config, int64_t positions, int64_t longest = 0,
                                        int64_t update_freq = 1, int64_t eval_batch = 0);

/// Throws ConfigError naming `what` (e.g. the spec path) with the estimate, the memory this process
/// may use (memory_limit: physical memory, ulimit -v or its cgroup's limit, whichever is least) and
/// the fix when the estimate exceeds that memory. `fix`, when given, replaces the spec keys the
/// message names (bench names its --batch and --seq-len).
void check_fits_in_memory(const MemoryEstimate& estimate, const std::string& what, const std::string& fix = "");

}  // namespace tn
