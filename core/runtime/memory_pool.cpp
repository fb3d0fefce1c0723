#include "core/runtime/memory_pool.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include <sys/mman.h>

// Under AddressSanitizer a cached buffer is poisoned while it waits in the pool, so a pointer kept
// past its tensor's life is reported where it is used (use-after-poison), not only once a release
// hands the buffer back to malloc, where the write would corrupt the heap.
#if defined(__SANITIZE_ADDRESS__)
#define TN_POOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TN_POOL_ASAN 1
#endif
#endif
#ifdef TN_POOL_ASAN
#include <sanitizer/asan_interface.h>
#define TN_POOL_POISON(ptr, bytes) ASAN_POISON_MEMORY_REGION(ptr, bytes)
#define TN_POOL_UNPOISON(ptr, bytes) ASAN_UNPOISON_MEMORY_REGION(ptr, bytes)
#else
#define TN_POOL_POISON(ptr, bytes) ((void)(ptr), (void)(bytes))
#define TN_POOL_UNPOISON(ptr, bytes) ((void)(ptr), (void)(bytes))
#endif

namespace tn {
namespace {

struct Pool {
  std::mutex mutex;
  std::map<int64_t, std::vector<float*>> free_lists;  // by size class (floats), ordered for best fit
  PoolStats stats;
};

Pool& pool() {
  static Pool* instance = new Pool();  // never destroyed: storages may outlive static teardown
  return *instance;
}

constexpr std::size_t kAlign = 64;
constexpr std::size_t kMinCacheCap = std::size_t{512} << 20;
// Buffers from this size up are mapped pages of their own, so that freeing one returns it to the
// system. Through malloc they would come from the heap whenever glibc's adaptive mmap threshold
// has risen past them (it follows the largest block freed, up to 32 MiB), and batches of varying
// length then fragment the heap: ListOps batches sorted by length grew a 3 GB step to 12 GB.
constexpr std::size_t kMapBytes = std::size_t{1} << 20;
// Mapped buffers from this size up ask for transparent huge pages (madvise; the kernel's default
// mode is often "madvise"): a buffer of n bytes then faults in n / 2 MiB times instead of n / 4 KiB.
// Softmax attention's probabilities (GBs, new whenever a batch is longer than the last) made a
// ListOps softmax run take 46,000 page faults a second, a fifth of its time (docs/performance.md).
constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

/// The bytes held by a buffer of `capacity` floats (at least one float, whole 64-byte lines).
std::size_t buffer_bytes(int64_t capacity) {
  const std::size_t bytes = static_cast<std::size_t>(capacity > 0 ? capacity : 1) * sizeof(float);
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

/// A new 64-byte-aligned buffer of `bytes`; throws std::bad_alloc when the system has no memory.
float* allocate_buffer(std::size_t bytes) {
  void* ptr = nullptr;
  if (bytes >= kMapBytes) {
    ptr = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ptr == MAP_FAILED) ptr = nullptr;
    // A hint: where the kernel has no huge pages (or THP is off) the buffer keeps small pages.
    if (ptr && bytes >= kHugePageBytes) madvise(ptr, bytes, MADV_HUGEPAGE);
  } else {
    ptr = std::aligned_alloc(kAlign, bytes);
  }
  if (!ptr) throw std::bad_alloc();
  return static_cast<float*>(ptr);
}

/// Returns a buffer of allocate_buffer(buffer_bytes(capacity)) to the system.
void free_buffer(float* ptr, int64_t capacity) {
  const std::size_t bytes = buffer_bytes(capacity);
  TN_POOL_UNPOISON(ptr, bytes);
  if (bytes >= kMapBytes) {
    munmap(ptr, bytes);
  } else {
    std::free(ptr);
  }
}

/// Frees every cached buffer; the caller holds the mutex.
void release_locked(Pool& p) {
  for (auto& [capacity, list] : p.free_lists) {
    for (float* ptr : list) free_buffer(ptr, capacity);
    list.clear();
  }
  p.stats.cached_bytes = 0;
}

}  // namespace

int64_t pool_size_class(int64_t count) {
  if (count <= 256) return count;
  const int shift = std::bit_width(static_cast<uint64_t>(count)) - 4;  // ⌊log2 count⌋ − 3
  const int64_t step = int64_t{1} << shift;
  return (count + step - 1) / step * step;
}

Storage::Storage(int64_t n) : count(n), capacity(pool_size_class(n)) {
  Pool& p = pool();
  const int64_t key = capacity;
  const std::size_t held = static_cast<std::size_t>(capacity) * sizeof(float);
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    // Best fit: the smallest cached class that holds the request, up to twice its size, so a
    // batch shorter than the last one reuses its buffers.
    for (auto it = p.free_lists.lower_bound(key); it != p.free_lists.end() && it->first <= 2 * key; ++it) {
      if (it->second.empty()) continue;
      ptr = it->second.back();
      it->second.pop_back();
      capacity = it->first;
      TN_POOL_UNPOISON(ptr, buffer_bytes(capacity));
      const std::size_t taken = static_cast<std::size_t>(capacity) * sizeof(float);
      p.stats.cached_bytes -= taken;
      p.stats.live_bytes += taken;
      p.stats.peak_live_bytes = std::max(p.stats.peak_live_bytes, p.stats.live_bytes);
      return;
    }
    // The cap follows the peak of live bytes (so the process holds at most twice that), not the current ones: between two steps almost
    // nothing is live, and releasing then would make every step fault its pages in afresh.
    if (p.stats.cached_bytes > std::max(kMinCacheCap, p.stats.peak_live_bytes)) release_locked(p);
    p.stats.mallocs++;
    p.stats.live_bytes += held;
    p.stats.peak_live_bytes = std::max(p.stats.peak_live_bytes, p.stats.live_bytes);
  }
  try {
    ptr = allocate_buffer(buffer_bytes(capacity));
  } catch (const std::bad_alloc&) {
    std::lock_guard<std::mutex> lock(p.mutex);
    p.stats.mallocs--;
    p.stats.live_bytes -= held;
    throw;
  }
}

Storage::~Storage() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  TN_POOL_POISON(ptr, buffer_bytes(capacity));
  p.free_lists[capacity].push_back(ptr);
  p.stats.cached_bytes += static_cast<std::size_t>(capacity) * sizeof(float);
  p.stats.live_bytes -= static_cast<std::size_t>(capacity) * sizeof(float);
}

PoolStats pool_stats() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  return p.stats;
}

void pool_release_cached() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  release_locked(p);
}

}  // namespace tn
