#pragma once
// Size-keyed caching allocator for tensor buffers (the PyTorch caching-allocator idea, on CPU).
// A freed buffer goes back to a free list of its exact byte size and is handed out again to the next
// request of that size, so a training step that repeats its shapes does no malloc after step one.
#include <cstddef>
#include <cstdint>

namespace tn {

struct Storage {
  float* ptr = nullptr;
  int64_t count = 0;  // floats
  explicit Storage(int64_t count);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
};

/// Bytes currently cached (free) in the pool, and bytes handed out; for diagnostics and bench.
struct PoolStats {
  std::size_t cached_bytes = 0;
  std::size_t live_bytes = 0;
  std::size_t mallocs = 0;
};
PoolStats pool_stats();
/// Returns every cached buffer to the system (e.g. between runs of a sweep).
void pool_release_cached();

}  // namespace tn
