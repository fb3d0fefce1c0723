#include "core/memory_pool.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace tn {
namespace {

struct Pool {
  std::mutex mutex;
  std::unordered_map<int64_t, std::vector<float*>> free_lists;
  PoolStats stats;
};

Pool& pool() {
  static Pool* instance = new Pool();  // never destroyed: storages may outlive static teardown
  return *instance;
}

constexpr std::size_t kAlign = 64;
constexpr std::size_t kMinCacheCap = std::size_t{512} << 20;

/// Frees every cached buffer; the caller holds the mutex.
void release_locked(Pool& p) {
  for (auto& [count, list] : p.free_lists) {
    for (float* ptr : list) std::free(ptr);
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
    auto it = p.free_lists.find(key);
    if (it != p.free_lists.end() && !it->second.empty()) {
      ptr = it->second.back();
      it->second.pop_back();
      p.stats.cached_bytes -= held;
      p.stats.live_bytes += held;
      return;
    }
    if (p.stats.cached_bytes > std::max(kMinCacheCap, 2 * p.stats.live_bytes)) release_locked(p);
    p.stats.mallocs++;
    p.stats.live_bytes += held;
  }
  std::size_t bytes = static_cast<std::size_t>(capacity > 0 ? capacity : 1) * sizeof(float);
  bytes = (bytes + kAlign - 1) / kAlign * kAlign;
  ptr = static_cast<float*>(std::aligned_alloc(kAlign, bytes));
  if (!ptr) throw std::bad_alloc();
}

Storage::~Storage() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
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
