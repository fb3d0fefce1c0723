#include "layers/attention/mixer_flops.h"

namespace tn {

double dense_projection_flops(const ModelConfig& config, int64_t batch, int64_t seq_len, double count) {
  const double N = static_cast<double>(batch) * static_cast<double>(seq_len);
  const double d = static_cast<double>(config.d_model);
  return count * 2.0 * N * d * d;
}

double attended_pairs(double w, bool causal) { return causal ? w * (w + 1.0) / 2.0 : w * w; }

double pairwise_core_flops(const ModelConfig& config, int64_t batch, double pairs) {
  const double bh = static_cast<double>(batch) * static_cast<double>(config.n_heads);
  return bh * 4.0 * pairs * static_cast<double>(config.d_head());
}

double linear_core_flops(const ModelConfig& config, int64_t batch, int64_t seq_len, double key_width,
                         bool denominator) {
  const double bh = static_cast<double>(batch) * static_cast<double>(config.n_heads);
  const double D = static_cast<double>(config.d_head());
  return bh * 4.0 * static_cast<double>(seq_len) * key_width * (D + (denominator ? 1.0 : 0.0));
}

}  // namespace tn
