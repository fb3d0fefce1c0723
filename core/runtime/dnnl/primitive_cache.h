#pragma once
// The one kind of primitive cache: oneDNN primitives (with the memory descriptors they run on) are
// created once per key and reused, since creating one costs far more than running it at the sizes
// of a training step. Each op keeps one process-wide cache (core/runtime/dnnl/engine.h).
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace tn {

/// h combined with v (boost's hash_combine), for the hash of a composite key.
inline size_t hash_mix(size_t h, size_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

/// Key → immutable Value, find-or-create under one mutex (make() runs under the lock, so a key is
/// built once even when threads race for it). With max_entries > 0 the cache is bounded: an insert
/// into a full cache first drops every entry (for keys that vary a lot, such as a mask's row
/// count); a value handed out before stays alive through its shared_ptr.
template <class Key, class Value, class Hash = std::hash<Key>>
class PrimitiveCache {
 public:
  explicit PrimitiveCache(size_t max_entries = 0) : max_entries_(max_entries) {}
  PrimitiveCache(const PrimitiveCache&) = delete;
  PrimitiveCache& operator=(const PrimitiveCache&) = delete;

  /// The value for key; the first call for a key stores make()'s result (make returns a Value).
  /// Exceptions from make() propagate and store nothing.
  template <class Make>
  std::shared_ptr<const Value> get(const Key& key, Make&& make) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end()) return it->second;
    auto value = std::make_shared<const Value>(make());
    if (max_entries_ > 0 && entries_.size() >= max_entries_) entries_.clear();
    return entries_.emplace(key, std::move(value)).first->second;
  }

  /// Entries held now.
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<Key, std::shared_ptr<const Value>, Hash> entries_;
  size_t max_entries_;
};

}  // namespace tn
