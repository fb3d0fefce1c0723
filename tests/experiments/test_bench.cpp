// `transnormer bench` pieces that can be checked without timing anything: the analytic model FLOP
// count against a hand computation, and the per-mixer scaling routine on tiny sizes (rows well
// formed; tensor memory linear in n for the linear mixers, quadratic for softmax). No timing
// assertions: benchmarks never run inside ctest.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "experiments/bench/bench.h"
#include "experiments/bench/bench_flops.h"
#include "experiments/bench/bench_precision.h"
#include "experiments/bench/bench_trainer.h"
#include "core/runtime/math/stats.h"
#include "experiments/bench/bench_scaling.h"
#include "layers/config/model_config_json.h"

using namespace tn;
using nlohmann::json;

namespace {

/// d_model 8, 2 heads (d_head 4), 2 layers [diag (block 4), norm_attention], GLU d_ff 16, vocab 10.
ModelConfig tiny_config(const std::string& arch = "decoder") {
  const json model = {{"arch", arch},
                      {"vocab_size", 10},
                      {"d_model", 8},
                      {"n_heads", 2},
                      {"n_layers", 2},
                      {"layers", {"diag", "norm_attention"}},
                      {"attention", {{"diag", {{"block_size", 4}}}}},
                      {"channel_mixer", {{"type", "glu"}, {"d_ff", 16}}},
                      {"dropout", 0.0}};
  return model_config_from_json(model, "test_bench");
}

}  // namespace

TEST_CASE("bench model FLOPs of a tiny decoder match the hand count") {
  const ModelConfig c = tiny_config();
  // Batch 2 × 6 tokens: N = 12, d = 8, H = 2, D = 4, B·H = 4.
  const ModelFlops f = model_flops(c, 2, 6);
  // Projections: q, k, v, out per layer, 2·N·d² each: 4 · 2·12·64 = 6144; two layers.
  CHECK(f.projections == doctest::Approx(12288.0));
  // Diag, causal, blocks of 4 over 6 tokens: a full block (4·5/2 = 10 pairs) and a partial one of
  // 2 (3 pairs): 13 pairs, 4·13·D = 208 per (sequence, head), × 4 = 832.
  // NormAttention (no denominator): 4·T·D·D = 4·6·4·4 = 384 per (sequence, head), × 4 = 1536.
  CHECK(f.attention == doctest::Approx(832.0 + 1536.0));
  // GLU: three products of 2·N·d·d_ff = 2·12·8·16 = 3072 per layer: 9216; two layers.
  CHECK(f.channel_mixer == doctest::Approx(18432.0));
  // Tied LM head: 2·N·d·V = 2·12·8·10.
  CHECK(f.head == doctest::Approx(1920.0));
  CHECK(f.forward() == doctest::Approx(35008.0));
  CHECK(f.train_step() == doctest::Approx(105024.0));
}

TEST_CASE("bench attention core FLOPs, causal and bidirectional") {
  const ModelConfig c = tiny_config();
  // Bidirectional diag: blocks of 4 and 2 give 16 + 4 = 20 pairs: 4·20·4 · 4 = 1280.
  CHECK(mixer_core_flops(c, MixerKind::Diag, 2, 6, false) == doctest::Approx(1280.0));
  // Softmax: 21 causal pairs (6·7/2), 36 bidirectional: 4·P·4 · 4.
  CHECK(mixer_core_flops(c, MixerKind::Softmax, 2, 6, true) == doctest::Approx(1344.0));
  CHECK(mixer_core_flops(c, MixerKind::Softmax, 2, 6, false) == doctest::Approx(2304.0));
  // Linear family: the same count causal or not; classic linear attention adds the denominator
  // (v widened by a column of ones): 4·6·4·(4 + 1) · 4 = 1920.
  CHECK(mixer_core_flops(c, MixerKind::NormAttention, 2, 6, false) == doctest::Approx(1536.0));
  CHECK(mixer_core_flops(c, MixerKind::Linear, 2, 6, true) == doctest::Approx(1920.0));
  // Encoder arch makes the whole-model count bidirectional.
  const ModelFlops enc = model_flops(tiny_config("encoder"), 2, 6);
  CHECK(enc.attention == doctest::Approx(1280.0 + 1536.0));
}

TEST_CASE("bench scaling rows on tiny sizes are well formed") {
  const ModelConfig c = tiny_config();
  ScalingOptions options;
  options.seq_lens = {8, 20};
  options.mixers = {MixerKind::NormAttention, MixerKind::Diag, MixerKind::Softmax};
  options.reps = 1;
  options.warmup = 0;  // in process: worker_exe empty
  int seen = 0;
  const std::vector<ScalingRow> rows = run_scaling(c, options, [&seen](const ScalingRow&) { ++seen; });
  REQUIRE(rows.size() == 12);  // 3 mixers × {causal, bidirectional} × 2 lengths
  CHECK(seen == 12);
  CHECK(rows[0].mixer == "norm_attention");
  CHECK(rows[0].causal);
  CHECK(rows[0].seq_len == 8);
  CHECK(rows[2].mixer == "norm_attention");
  CHECK_FALSE(rows[2].causal);
  CHECK(rows[11].mixer == "softmax");
  CHECK(rows[11].seq_len == 20);
  for (const ScalingRow& row : rows) {
    CHECK_FALSE(row.skipped);
    CHECK(row.batch == 1);
    CHECK(row.fwd_bwd_s > 0.0);
    CHECK(row.fwd_s > 0.0);
    CHECK(row.fwd_s <= row.fwd_bwd_s);
    CHECK(row.memory == "pool");
    CHECK(row.peak_mb > 0.0);
    CHECK(row.peak_mb == row.tensor_mb);
    CHECK(row.saved_mb > 0.0);
    CHECK(row.saved_mb <= row.tensor_mb);
    CHECK(row.gflop > 0.0);
    const json j = scaling_row_json(row);
    for (const char* key : {"mixer", "seq_len", "causal", "fwd_bwd_s", "peak_mb"}) CHECK(j.contains(key));
    const ScalingRow back = scaling_row_from_json(j);
    CHECK(back.mixer == row.mixer);
    CHECK(back.seq_len == row.seq_len);
    CHECK(back.causal == row.causal);
    CHECK(back.fwd_bwd_s == row.fwd_bwd_s);
    CHECK(back.peak_mb == row.peak_mb);
  }
  const json ratios = scaling_ratios_json(rows);
  REQUIRE(ratios.size() == 6);
  CHECK(ratios[0]["from"] == 8);
  CHECK(ratios[0]["to"] == 20);
  CHECK(format_scaling_table(rows).find("norm_attention (causal)") != std::string::npos);
}

TEST_CASE("bench scaling skips sizes whose saved buffers exceed the limit and says so") {
  const ModelConfig c = tiny_config();
  ScalingOptions options;
  options.seq_lens = {8, 64};
  options.mixers = {MixerKind::Softmax};
  options.bidirectional = false;
  options.reps = 1;
  options.warmup = 0;
  // softmax keeps 2 floats per head and query row: 2 heads · 2 · n floats, 128 bytes at n = 8 and
  // 1,024 at n = 64; the limit sits between.
  options.max_quadratic_bytes = 512.0;
  const std::vector<ScalingRow> rows = run_scaling(c, options);
  REQUIRE(rows.size() == 2);
  CHECK_FALSE(rows[0].skipped);
  CHECK(rows[1].skipped);
  CHECK(rows[1].reason.find("softmax") != std::string::npos);
  CHECK(scaling_row_json(rows[1]).contains("skipped"));
  CHECK(format_scaling_table(rows).find("skipped") != std::string::npos);
}

TEST_CASE("bench scaling: tensor memory of every mixer, softmax included, is linear in n") {
  // Pool bytes are exact, so this is a deterministic check (no timing): doubling n doubles the
  // tensor high-water mark of norm_attention, diag and softmax. Softmax keeps two floats per query
  // row, not its n x n probabilities, which would make it grow ~4x (2 heads · 512² floats = 2 MiB
  // against 16 KiB per [n, d] tensor).
  const ModelConfig c = tiny_config();
  ScalingOptions options;
  options.seq_lens = {256, 512};
  options.mixers = {MixerKind::NormAttention, MixerKind::Diag, MixerKind::Softmax};
  options.bidirectional = false;
  options.reps = 1;
  options.warmup = 0;
  const std::vector<ScalingRow> rows = run_scaling(c, options);
  REQUIRE(rows.size() == 6);
  for (int m = 0; m < 3; ++m) {
    const double ratio = rows[2 * m + 1].tensor_mb / rows[2 * m].tensor_mb;
    CHECK_MESSAGE(ratio < 2.2, rows[2 * m].mixer << " tensor memory ratio " << ratio);
  }
}

TEST_CASE("bench scaling mixer names and defaults") {
  CHECK(parse_mixer_kind("norm_attention") == MixerKind::NormAttention);
  CHECK(parse_mixer_kind("diag") == MixerKind::Diag);
  CHECK_THROWS_AS(parse_mixer_kind("flash"), ConfigError);
  const std::vector<MixerKind> kinds = default_scaling_mixers(tiny_config());
  REQUIRE(kinds.size() == 3);
  CHECK(kinds[0] == MixerKind::Diag);
  CHECK(kinds[1] == MixerKind::NormAttention);
  CHECK(kinds[2] == MixerKind::Softmax);
}

TEST_CASE("bench trainer and precision comparison: the loss falls, pairs are well formed") {
  const ModelConfig config = tiny_config();
  BenchTrainer trainer(config, bench_train_spec(std::nullopt, 10), 2, 12, 0);
  CHECK(trainer.tokens_per_step() == 24);
  Tape tape;
  trainer.train_step(tape);
  const double first = trainer.last_loss();
  for (int i = 0; i < 30; ++i) CHECK(trainer.train_step(tape) > 0.0);
  CHECK(trainer.last_loss() < first);  // 30 AdamW steps on one fixed batch must fit it better

  BenchOptions options;
  options.batch = 2;
  options.seq_len = 12;
  options.steps = 3;
  options.warmup = 1;
  const PrecisionComparison c = compare_precisions(config, options);
  REQUIRE(c.f32_step_s.size() == 3);
  REQUIRE(c.bf16_step_s.size() == 3);
  CHECK(c.f32_median_s == median_of(c.f32_step_s));
  CHECK(c.speedup_of_medians == doctest::Approx(c.f32_median_s / c.bf16_median_s));
  CHECK(c.speedup_median > 0.0);
  CHECK(median_of({3.0, 1.0, 2.0, 10.0}) == 2.5);
  ModelConfig no_vocab = config;
  no_vocab.vocab_size = 0;
  CHECK_THROWS_AS(compare_precisions(no_vocab, options), ConfigError);
}

TEST_CASE("bench trainer with the mlm head: the masked-LM loss on 15 % of the positions, and its FLOPs") {
  json model = {{"arch", "encoder"}, {"head", "mlm"},  {"vocab_size", 40}, {"d_model", 8},
                {"n_heads", 2},      {"n_layers", 1},  {"dropout", 0.0}};
  const ModelConfig config = model_config_from_json(model, "test_bench");
  BenchTrainer trainer(config, bench_train_spec(std::nullopt, 10), 4, 20, 0);
  CHECK(trainer.tokens_per_step() == 80);  // every input position counts
  Tape tape;
  trainer.train_step(tape);
  CHECK(trainer.last_loss() == doctest::Approx(std::log(40.0)).epsilon(0.15));  // near uniform at first
  const double first = trainer.last_loss();
  for (int i = 0; i < 30; ++i) trainer.train_step(tape);
  CHECK(trainer.last_loss() < first);
  // The head on the masked 15 %: (2·N·d² + 2·N·d·V) · 0.15 with N = 80, d = 8, V = 40.
  CHECK(model_flops(config, 4, 20).head == doctest::Approx(0.15 * (2.0 * 80 * 64 + 2.0 * 80 * 8 * 40)));
}
