#pragma once
// The two hot lookups of GPT-2 BPE (gpt2_bpe.h) as open-addressing hash tables: merge pair → rank,
// and pre-token bytes → ids (the word cache). std::unordered_map spent most of encode's time in
// its prime-modulus division and bucket chains (docs/performance.md, "GPT-2 BPE").
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace tn::detail {

/// 64-bit hash of a short byte string: 8-byte words through a multiply-xorshift mix.
inline uint64_t hash_bytes(std::string_view s) {
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ (s.size() * 0xC2B2AE3D27D4EB4FULL);
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
    h ^= h >> 32;
  }
  if (i < s.size()) {
    uint64_t w = 0;
    std::memcpy(&w, s.data() + i, s.size() - i);
    h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
  }
  h ^= h >> 29;
  h *= 0xC4CEB9FE1A85EC53ULL;
  return h ^ (h >> 32);
}

/// A merge's priority (rank: lower merges first) and the token it makes.
struct Merge {
  int32_t rank = INT32_MAX, result = -1;
};

/// Fixed set of (left id, right id) → Merge, built once; linear probing in a power-of-two table at
/// most half full.
class PairTable {
 public:
  /// Makes room for `count` pairs (call once, before insert).
  void reserve(size_t count) {
    size_t capacity = 16;
    while (capacity < 2 * count) capacity *= 2;
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
  }
  /// Adds a pair; false (and no change) when it is already present. reserve() must have room.
  bool insert(int32_t left, int32_t right, Merge merge) {
    const uint64_t key = pack(left, right);
    for (size_t i = slot_of(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == kEmpty) {
        slots_[i] = Slot{key, merge};
        ++size_;
        return true;
      }
      if (slots_[i].key == key) return false;
    }
  }
  /// The merge of the adjacent pair, or a Merge with rank INT32_MAX when the pair is none.
  Merge find(int32_t left, int32_t right) const {
    const uint64_t key = pack(left, right);
    for (size_t i = slot_of(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return slots_[i].merge;
      if (slots_[i].key == kEmpty) return Merge{};
    }
  }
  size_t size() const { return size_; }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // ids are >= 0, so no pair packs to this
  struct Slot {
    uint64_t key = kEmpty;
    Merge merge;
  };
  static uint64_t pack(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  size_t slot_of(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ULL) >> 20) & mask_; }

  std::vector<Slot> slots_;
  size_t mask_ = 0, size_ = 0;
};

/// Pre-token bytes → their ids, with keys and ids kept back to back in two arrays. Grows by
/// doubling (at most half full); clear() drops everything but keeps the memory.
class WordCache {
 public:
  /// The cached ids of `word` (hash = hash_bytes(word)), or nullptr with count 0 when absent.
  const int32_t* find(std::string_view word, uint64_t hash, uint32_t& count) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key_len == 0) return nullptr;
      if (s.hash == hash && s.key_len == word.size() && std::memcmp(keys_.data() + s.key_begin, word.data(), word.size()) == 0) {
        count = s.ids_count;
        return ids_.data() + s.ids_begin;
      }
    }
  }
  /// Adds a word (not present, non-empty) and its ids.
  void insert(std::string_view word, uint64_t hash, const std::vector<int32_t>& ids) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    Slot s{hash, static_cast<uint32_t>(keys_.size()), static_cast<uint32_t>(word.size()),
           static_cast<uint32_t>(ids_.size()), static_cast<uint32_t>(ids.size())};
    keys_.append(word);
    ids_.insert(ids_.end(), ids.begin(), ids.end());
    place(s);
    ++size_;
  }
  void clear() {
    slots_.assign(slots_.size(), Slot{});
    keys_.clear();
    ids_.clear();
    size_ = 0;
  }
  size_t size() const { return size_; }
  size_t id_count() const { return ids_.size(); }
  size_t key_bytes() const { return keys_.size(); }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t key_begin = 0, key_len = 0;  // key_len 0: empty slot
    uint32_t ids_begin = 0, ids_count = 0;
  };
  void place(const Slot& s) {
    size_t i = s.hash & mask_;
    while (slots_[i].key_len != 0) i = (i + 1) & mask_;
    slots_[i] = s;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 4096 : 2 * old.size(), Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& s : old)
      if (s.key_len != 0) place(s);
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0, size_ = 0;
  std::string keys_;
  std::vector<int32_t> ids_;
};

}  // namespace tn::detail
