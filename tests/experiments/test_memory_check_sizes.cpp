// The memory floor counts every size that allocates (hostile-input campaign, class 1): a diag
// layer's B·H·n·min(block_size, n) probabilities, a Performer layer's features, and the
// train.update_freq batches a step holds at once (update_freq 10^9 once passed --dry-run and grew
// to 3.4 GB in 13 s).
#include <doctest/doctest.h>

#include "core/error.h"
#include "experiments/runner/memory_check.h"

using namespace tn;

namespace {

ModelConfig small_model(MixerKind mixer) {
  ModelConfig c;
  c.vocab_size = 100;
  c.d_model = 32;
  c.n_heads = 4;
  c.n_layers = 2;
  c.layers = {mixer, MixerKind::NormAttention};
  c.channel_mixer.d_ff = 64;
  return c;
}

double extra_bytes(const ModelConfig& c, int64_t positions, int64_t longest) {
  return estimate_training_memory(c, positions, longest).activation_bytes -
         estimate_training_memory(c, positions).activation_bytes;
}

}  // namespace

TEST_CASE("memory check sizes: a diag layer adds B·H·n·min(block_size, n) probabilities") {
  ModelConfig c = small_model(MixerKind::Diag);
  c.attention.diag.block_size = 64;
  // 8 sequences of 500, 4 heads, blocks of 64: 8 · 4 · 500 · 64 floats.
  CHECK(extra_bytes(c, 8 * 500, 500) == doctest::Approx(4.0 * 8 * 4 * 500 * 64));
  c.attention.diag.n_heads = 2;  // its own head count
  CHECK(extra_bytes(c, 8 * 500, 500) == doctest::Approx(4.0 * 8 * 2 * 500 * 64));
  // A block past the sequence is the sequence: 2^20 counts as 500.
  c.attention.diag.block_size = int64_t{1} << 20;
  CHECK(extra_bytes(c, 8 * 500, 500) == doctest::Approx(4.0 * 8 * 2 * 500 * 500));
  c.layers = {MixerKind::DiagNormParallel, MixerKind::NormAttention};  // its diag branch
  CHECK(extra_bytes(c, 8 * 500, 500) == doctest::Approx(4.0 * 8 * 2 * 500 * 500));
}

TEST_CASE("memory check sizes: a Performer layer adds its random features of q and k") {
  ModelConfig c = small_model(MixerKind::Performer);
  c.attention.performer.features = 1000;
  CHECK(extra_bytes(c, 8 * 500, 500) == doctest::Approx(4.0 * 2 * 8 * 500 * 4 * 1000));
  c.attention.performer.features = int64_t{1} << 30;
  CHECK_THROWS_WITH_AS(check_fits_in_memory(estimate_training_memory(c, 8 * 500, 500), "spec.yaml"),
                       doctest::Contains("spec.yaml: the run needs at least"), ConfigError);
}

TEST_CASE("memory check sizes: the update_freq batches a step holds are counted") {
  const ModelConfig c = small_model(MixerKind::NormAttention);
  const double one = estimate_training_memory(c, 2048, 256, 1).total_bytes();
  const double many = estimate_training_memory(c, 2048, 256, 1001).total_bytes();
  CHECK(many - one == doctest::Approx(1000.0 * (12.0 * 2048 + 1024.0)));
  CHECK_THROWS_WITH_AS(check_fits_in_memory(estimate_training_memory(c, 2048, 256, 1000000000), "spec.yaml"),
                       doctest::Contains("train.update_freq"), ConfigError);
}

TEST_CASE("memory check sizes: an evaluation batch is counted, and refused with the key when it dominates") {
  // train.eval_batch_size 2^62 passed the check and ran out of memory at the first validation.
  ModelConfig c = small_model(MixerKind::Softmax);
  const MemoryEstimate usual = estimate_training_memory(c, 8 * 500, 500, 1, 8);
  CHECK(usual.total_bytes() == estimate_training_memory(c, 8 * 500, 500).total_bytes());  // the same batch: training dominates
  // 1,000 sequences of 500: per position 4·d + d_ff floats, and one softmax layer's 1000·4·500·2
  // row statistics.
  const MemoryEstimate wide = estimate_training_memory(c, 8 * 500, 500, 1, 1000);
  CHECK(wide.eval_bytes == doctest::Approx(4.0 * (1000.0 * 500 * (4 * 32 + 64) + 1000.0 * 4 * 500 * 2)));
  CHECK(wide.total_bytes() == doctest::Approx(wide.weight_bytes + wide.eval_bytes));
  CHECK_THROWS_WITH_AS(
      check_fits_in_memory(estimate_training_memory(c, 8 * 500, 500, 1, int64_t{1} << 62), "spec.yaml"),
      doctest::Contains("train.eval_batch_size"), ConfigError);
}
