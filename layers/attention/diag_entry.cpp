// The mixer table's entry for `diag` (DiagAttention, docs/model.md §7): block_size w, the inner
// activation (relu for T1, softmax for T2), the norm over d (srmsnorm for T1), and optionally its
// own head count (n_heads; the official LRA Image and Retrieval models give it 4, the rest 8).
#include <algorithm>

#include "layers/attention/diag_attention.h"
#include "layers/attention/mixer_flops.h"
#include "layers/attention/mixer_table.h"
#include "layers/config/model_limits.h"

namespace tn {
namespace {


void resolve(const JsonSection& s, bool strict, AttentionOptions& options) {
  s.check_keys({"block_size", "inner", "norm", "n_heads"}, strict);
  DiagOptions o;
  o.block_size = s.at_least("block_size", s.integer("block_size", o.block_size), 1,
                            "use a positive block width w such as 64");
  s.at_most("block_size", o.block_size, kMaxModelPositions,
            "use a block width such as 64; a block is at most as long as a sequence may be (2^20 positions)");
  o.inner = s.choice("inner", o.inner, diag_inner_names());
  o.norm = read_norm(s, "norm", o.norm);
  if (s.has("n_heads"))
    o.n_heads = s.at_least("n_heads", s.integer("n_heads", 0), 1, "use a head count dividing d_model, or leave it out for the model's");
  options.diag = o;
}

nlohmann::json to_json(const AttentionOptions& options) {
  const DiagOptions& o = options.diag;
  std::string inner;
  for (const auto& [name, value] : diag_inner_names())
    if (value == o.inner) inner = name;
  nlohmann::json out = {{"block_size", o.block_size}, {"inner", inner}, {"norm", to_string(o.norm)}};
  if (o.n_heads > 0) out["n_heads"] = o.n_heads;  // the reference's keys otherwise
  return out;
}

std::unique_ptr<TokenMixer> make(const ModelConfig& config, ParamStore& store, const std::string& prefix, Rng& rng) {
  return std::make_unique<DiagAttention>(config, config.attention.diag, store, prefix, rng);
}

/// The softmax count with the pairs summed over blocks of w = block_size (the last block partial).
double core_flops(const ModelConfig& config, int64_t batch, int64_t seq_len, bool causal) {
  const int64_t W = std::max<int64_t>(config.attention.diag.block_size, 1);
  double pairs = 0;
  for (int64_t start = 0; start < seq_len; start += W)
    pairs += attended_pairs(static_cast<double>(std::min(W, seq_len - start)), causal);
  return pairwise_core_flops(config, batch, pairs);
}

double projection_flops(const ModelConfig& config, int64_t batch, int64_t seq_len) {
  return dense_projection_flops(config, batch, seq_len, 4.0);
}

/// The probabilities kept for the backward: B·H·n·min(w, n), H the diag's own head count when it
/// has one (layers/attention/attention_ops.cpp: a block past the sequence is the sequence).
double saved_floats(const ModelConfig& config, int64_t batch, int64_t seq_len) {
  const int64_t heads = config.attention.diag.n_heads > 0 ? config.attention.diag.n_heads : config.n_heads;
  const auto n = static_cast<double>(seq_len);
  return static_cast<double>(batch) * static_cast<double>(heads) * n *
         static_cast<double>(std::min(config.attention.diag.block_size, std::max<int64_t>(seq_len, 1)));
}

}  // namespace

MixerEntry diag_mixer_entry() {
  // The finite-difference variants leave the norm out: with ReLU inside, a row whose every score is
  // negative is exactly zero, and SRMSNorm maps a zero row to 0 but a tiny one to unit RMS, a jump
  // that finite differences cannot cross (relu + srmsnorm is checked against PyTorch's autograd
  // instead: golden dec_diag_relu and dec_t1). With ReLU a step of 1e-3 keeps every score of the
  // probe on its side of zero, except under a change of URPE's theta, which moves every score at
  // once (theta's gradient is checked by the kernel tests and the golden cases).
  return {
      .kind = MixerKind::Diag,
      .name = "diag",
      .decode = DecodeForm::RecurrentState,
      .resolve = resolve,
      .to_json = to_json,
      .make = make,
      .core_flops = core_flops,
      .projection_flops = projection_flops,
      .saved_floats = saved_floats,
      .test_variants =
          {
              {.name = "diag relu srmsnorm, block 16",
               .setup = [](ModelConfig& c) { c.attention.diag.block_size = 16; },
               .probe_size = 16},
              {.name = "diag softmax, block 16",
               .setup = [](ModelConfig& c) { c.attention.diag = {16, DiagInner::Softmax, NormKind::None}; },
               .probe_size = 16},
              {.name = "diag relu srmsnorm, block 8",
               .setup = [](ModelConfig& c) { c.attention.diag.block_size = 8; },
               .probe_size = 8},
              {.name = "diag relu, no norm, block 8",
               .setup = [](ModelConfig& c) { c.attention.diag = {8, DiagInner::Relu, NormKind::None}; },
               .probe_size = 8,
               .grad_probes = {{.batch = 1, .seq_len = 19, .with_theta = false, .eps = 1e-3}}},
              {.name = "diag relu srmsnorm, block 8, its own single head",
               .setup = [](ModelConfig& c) { c.attention.diag = {8, DiagInner::Relu, NormKind::SRMSNorm, 1}; },
               .probe_size = 8},
              {.name = "diag softmax, no norm, block 8",
               .setup = [](ModelConfig& c) { c.attention.diag = {8, DiagInner::Softmax, NormKind::None}; },
               .probe_size = 8,
               .grad_probes = {{.batch = 1, .seq_len = 19, .with_theta = true, .eps = 1e-2}}},
          },
  };
}

}  // namespace tn
