#pragma once
// Random numbers, passed explicitly (no global RNG). SplitMix64 (Steele et al. 2014) drives
// everything: sequential draws for initialisation, and counter-based hashing for dropout masks so
// threads can fill disjoint ranges deterministically.
#include <cmath>
#include <cstdint>

namespace tn {

/// One SplitMix64 output for `state` (state is advanced by the caller).
inline uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next_u64() {
    state_ += 0x9E3779B97F4A7C15ULL;
    return splitmix64_mix(state_);
  }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  /// Standard normal (Box-Muller).
  double normal() {
    double u1 = uniform();
    while (u1 <= 0.0) u1 = uniform();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  /// A fresh 64-bit key for a counter-based stream (e.g. one dropout mask).
  uint64_t key() { return next_u64(); }
  /// The whole generator state, to save and restore (a resumed run continues the same stream).
  uint64_t state() const { return state_; }
  void set_state(uint64_t state) { state_ = state; }

 private:
  uint64_t state_;
};

/// Counter-based uniform in [0,1) from (key, index): the same mask whatever the thread split.
inline float counter_uniform(uint64_t key, uint64_t index) {
  return static_cast<float>(splitmix64_mix(key + 0x9E3779B97F4A7C15ULL * (index + 1)) >> 40) *
         0x1.0p-24f;
}

/// Inverted dropout's weight of entry `index` for key `key`: 0 (dropped) when
/// counter_uniform(key, index) < p, else keep_scale = 1/(1 − p). The one rule of every dropout
/// (core/runtime/ops/elementwise, the attention engines), so a backward regenerates the forward's mask.
inline float dropout_weight(uint64_t key, uint64_t index, float p, float keep_scale) {
  return counter_uniform(key, index) < p ? 0.0f : keep_scale;
}

}  // namespace tn
