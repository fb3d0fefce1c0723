#pragma once
// Size-keyed caching allocator for tensor buffers (the PyTorch caching-allocator idea, on CPU).
// A request is rounded up to its size class (8 classes per doubling above 256 floats, so at most
// 12.5 % more than asked), a freed buffer goes back to the free list of its class, and the next
// request of that class takes it again, or, failing that, the smallest cached class up to twice
// the request (best fit): a training step that repeats its shapes does no malloc after step one,
// and batches of varying length (padded to their own longest) share buffers. The cache is
// bounded: a miss while more than max(512 MiB, the peak of the bytes in use) sit cached first
// returns every cached buffer to the system. Buffers of 1 MiB and more are pages mapped for
// them alone, so that returning them gives the memory back (the heap would keep it, fragmented).
// Buffers of 2 MiB and more also ask for transparent huge pages (madvise), so that faulting them in
// costs one fault per 2 MiB rather than per 4 KiB.
#include <cstddef>
#include <cstdint>

namespace tn {

struct Storage {
  float* ptr = nullptr;
  int64_t count = 0;     // floats asked for
  int64_t capacity = 0;  // floats held: count's size class, or a larger cached one (best fit)
  explicit Storage(int64_t count);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
};

/// Bytes currently cached (free) in the pool, and bytes handed out; for diagnostics and bench.
struct PoolStats {
  std::size_t cached_bytes = 0;
  std::size_t live_bytes = 0;
  std::size_t peak_live_bytes = 0;  // the most ever handed out at once
  std::size_t mallocs = 0;
};
PoolStats pool_stats();
/// Returns every cached buffer to the system (e.g. between runs of a sweep).
void pool_release_cached();
/// The size class of a request of `count` floats: count itself up to 256, else count rounded up
/// to a multiple of 2^(⌊log2 count⌋ − 3).
int64_t pool_size_class(int64_t count);

}  // namespace tn
