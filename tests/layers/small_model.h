#pragma once
// The tests' small model: a few layers of d_model 8 to 32, no dropout, built one way everywhere.
// A test names what it needs (arch, sizes, layer kinds, the diag block) and sets anything else on
// the config it gets back.
#include <cstdint>
#include <vector>

#include "layers/config/model_config.h"

namespace tn::test {

struct SmallModel {
  Arch arch = ModelConfig{}.arch;
  int64_t vocab_size = 40;
  int64_t d_model = 16;
  int64_t n_heads = 2;
  int64_t n_layers = 2;
  std::vector<MixerKind> layers = {};  // empty: left to ModelConfig (resolved from diag_layers)
  int64_t block_size = 0;              // the diag block; 0: ModelConfig's default
  double dropout = 0.0;
};

/// A ModelConfig of `s`'s sizes, d_ff = 2 × d_model, every other value ModelConfig's default.
inline ModelConfig small_model_config(const SmallModel& s = {}) {
  ModelConfig c;
  c.arch = s.arch;
  c.vocab_size = s.vocab_size;
  c.d_model = s.d_model;
  c.n_heads = s.n_heads;
  c.n_layers = s.n_layers;
  if (!s.layers.empty()) c.layers = s.layers;
  if (s.block_size > 0) c.attention.diag.block_size = s.block_size;
  c.channel_mixer.d_ff = 2 * s.d_model;
  c.dropout = s.dropout;
  return c;
}

}  // namespace tn::test
