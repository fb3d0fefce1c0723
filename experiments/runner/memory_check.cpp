#include "experiments/runner/memory_check.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "core/platform/system.h"
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
  const double channel = c.channel_mixer.type == ChannelMixerKind::GLU ? 3.0 * d * d_ff : 2.0 * d * d_ff + d + d_ff;
  const double norms = 2.0 * 2.0 * d;                       // two residual-branch norms, weight and bias at most
  for (const MixerKind kind : c.layers) {  // each layer's token mixer, as its table entry counts it
    const MixerEntry* entry = find_mixer(kind);
    n += (entry ? mixer_parameters(*entry, c) : 4.0 * (d * d + d)) + channel + norms;
  }
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

namespace {

/// The evaluation floor of `batch` sequences of `longest` (estimate_training_memory).
double eval_floor_bytes(const ModelConfig& c, int64_t batch, int64_t longest) {
  const double positions = static_cast<double>(batch) * static_cast<double>(longest);
  double widest = 0;
  for (const MixerKind kind : c.layers)
    if (const MixerEntry* entry = find_mixer(kind); entry && entry->saved_floats)
      widest = std::max(widest, entry->saved_floats(c, batch, longest));
  return 4.0 * (positions * (4.0 * static_cast<double>(c.d_model) + static_cast<double>(c.channel_mixer.d_ff)) +
                widest);
}

}  // namespace

MemoryEstimate estimate_training_memory(const ModelConfig& c, int64_t positions, int64_t longest,
                                        int64_t update_freq, int64_t eval_batch) {
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
  if (eval_batch > 0 && longest > 0) e.eval_bytes = eval_floor_bytes(c, eval_batch, longest);
  return e;
}

void check_fits_in_memory(const MemoryEstimate& e, const std::string& what, const std::string& fix) {
  const MemoryLimit limit = memory_limit();
  const double available = limit.bytes;
  if (available <= 0 || e.total_bytes() <= available) return;
  char eval_buf[64] = "";
  if (e.eval_bytes > e.activation_bytes)
    std::snprintf(eval_buf, sizeof eval_buf, "; of one evaluation batch: %.1f GiB", e.eval_bytes / 1073741824.0);
  const std::string eval_part = eval_buf;
  char buf[640];
  std::snprintf(buf, sizeof buf,
                "%s: the run needs at least %.1f GiB (%.3g parameters: %.1f GiB with gradients and AdamW "
                "moments; activations of one batch: %.1f GiB%s), more than the %.1f GiB this process may use (%s); ",
                what.c_str(), e.total_bytes() / 1073741824.0, e.parameters, e.weight_bytes / 1073741824.0,
                e.activation_bytes / 1073741824.0, eval_part.c_str(), available / 1073741824.0, limit.source.c_str());
  if (!fix.empty()) throw ConfigError(buf + fix);
  throw ConfigError(std::string(buf) + "lower model.d_model, model.n_layers, the vocabulary, train.batch_size, " +
                    "train.update_freq" + (e.eval_bytes > e.activation_bytes ? ", train.eval_batch_size" : "") +
                    " or the sequence length (data.seq_len; data.max_length or data.max_positions for the "
                    "classification readers)");
}

}  // namespace tn
