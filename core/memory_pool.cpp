#include "core/memory_pool.h"

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

}  // namespace

Storage::Storage(int64_t n) : count(n) {
  Pool& p = pool();
  const int64_t key = n;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    auto it = p.free_lists.find(key);
    if (it != p.free_lists.end() && !it->second.empty()) {
      ptr = it->second.back();
      it->second.pop_back();
      p.stats.cached_bytes -= static_cast<std::size_t>(n) * sizeof(float);
      p.stats.live_bytes += static_cast<std::size_t>(n) * sizeof(float);
      return;
    }
    p.stats.mallocs++;
    p.stats.live_bytes += static_cast<std::size_t>(n) * sizeof(float);
  }
  std::size_t bytes = static_cast<std::size_t>(n > 0 ? n : 1) * sizeof(float);
  bytes = (bytes + kAlign - 1) / kAlign * kAlign;
  ptr = static_cast<float*>(std::aligned_alloc(kAlign, bytes));
  if (!ptr) throw std::bad_alloc();
}

Storage::~Storage() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.free_lists[count].push_back(ptr);
  p.stats.cached_bytes += static_cast<std::size_t>(count) * sizeof(float);
  p.stats.live_bytes -= static_cast<std::size_t>(count) * sizeof(float);
}

PoolStats pool_stats() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  return p.stats;
}

void pool_release_cached() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  for (auto& [count, list] : p.free_lists) {
    for (float* ptr : list) std::free(ptr);
    list.clear();
  }
  p.stats.cached_bytes = 0;
}

}  // namespace tn
