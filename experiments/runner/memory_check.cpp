#include "experiments/runner/memory_check.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "core/system.h"
#include "layers/attention/mixer_table.h"
#include "layers/inputs/input_table.h"

namespace tn {

namespace {
/// What a batch a step holds takes beyond its activations: ids, targets and a padding mask per
/// position (12 bytes), and the object with its bookkeeping (1 KiB).
constexpr double kBatchBytesPerPosition = 12.0;
constexpr double kBatchBytes = 1024.0;
}  // namespace

double estimate_parameter_count(const ModelConfig& c) {
  const double d = static_cast<double>(c.d_model), V = static_cast<double>(c.vocab_size);
  const double d_ff = static_cast<double>(c.channel_mixer.d_ff);
  double n = input_entry(c.input.kind).parameters(c);       // embed_tokens, or Linear(1 -> d)
  if (!c.tie_embeddings) n += V * d;                        // lm_head
  if (c.positional == Positional::Learned) n += static_cast<double>(c.max_positions) * d;
  const double projections = 4.0 * (d * d + d);
  const double channel = c.channel_mixer.type == ChannelMixerKind::GLU ? 3.0 * d * d_ff : 2.0 * d * d_ff + d + d_ff;
  const double norms = 2.0 * 2.0 * d;                       // two residual-branch norms, weight and bias at most
  n += static_cast<double>(c.n_layers) * (projections + channel + norms);
  switch (c.head) {
    case HeadKind::LM: break;
    case HeadKind::MLM: n += d * d + d + 2.0 * d + V; break;  // dense, layer norm, output bias
    case HeadKind::Classification:  // dense (dense_tanh only), out_proj
      n += (c.classifier == Classifier::DenseTanh ? d * d + d : 0.0) + d * static_cast<double>(c.num_classes);
      break;
    case HeadKind::Retrieval: n += 4.0 * d * d + d + d * static_cast<double>(c.num_classes); break;
  }
  return n;
}

MemoryEstimate estimate_training_memory(const ModelConfig& c, int64_t positions, int64_t longest,
                                        int64_t update_freq) {
  MemoryEstimate e;
  e.parameters = estimate_parameter_count(c);
  e.weight_bytes = 16.0 * e.parameters;
  const double p = static_cast<double>(positions), d = static_cast<double>(c.d_model);
  const double per_layer = 8.0 * d + 2.0 * static_cast<double>(c.channel_mixer.d_ff);
  e.activation_bytes = 4.0 * (p * per_layer * static_cast<double>(c.n_layers) +
                              512.0 * static_cast<double>(c.vocab_size));
  // The step's update_freq batches, all filled before its first forward.
  e.activation_bytes += static_cast<double>(std::max<int64_t>(update_freq, 1)) * (kBatchBytesPerPosition * p + kBatchBytes);
  if (longest > 0)
    for (const MixerKind kind : c.layers)
      if (const MixerEntry* entry = find_mixer(kind); entry && entry->saved_floats)
        e.activation_bytes += 4.0 * entry->saved_floats(c, std::max<int64_t>(1, positions / longest), longest);
  return e;
}

void check_fits_in_memory(const MemoryEstimate& e, const std::string& what) {
  const MemoryLimit limit = memory_limit();
  const double available = limit.bytes;
  if (available <= 0 || e.total_bytes() <= available) return;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s: the run needs at least %.1f GiB (%.3g parameters: %.1f GiB with gradients and AdamW "
                "moments; activations of one batch: %.1f GiB), more than the %.1f GiB this process may use (%s); "
                "lower model.d_model, model.n_layers, the vocabulary, train.batch_size, train.update_freq or the "
                "sequence length (data.seq_len; data.max_length or data.max_positions for the classification "
                "readers)",
                what.c_str(), e.total_bytes() / 1073741824.0, e.parameters, e.weight_bytes / 1073741824.0,
                e.activation_bytes / 1073741824.0, available / 1073741824.0, limit.source.c_str());
  throw ConfigError(buf);
}

}  // namespace tn
