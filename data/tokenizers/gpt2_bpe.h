#pragma once
// GPT-2's byte-level BPE (Radford et al. 2019; OpenAI's encoder.py, which fairseq's gpt2_bpe_utils
// copies): the pre-tokenizer regex, the byte→unicode map, and merges applied by rank, read from
// encoder.json and vocab.bpe. The ids are GPT-2's; fairseq_dict.h maps them to a model's ids.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "data/tokenizers/bpe_tables.h"

namespace tn {

/// The GPT-2 tokenizer of one encoder.json + vocab.bpe pair (50,257 tokens and 50,000 merges for
/// GPT-2 itself; any consistent pair is accepted). Move-only.
///
/// Threads: the vocabulary and the compiled regex are read-only after load(). encode(text, out)
/// uses the object's own Scratch (the regex match block and the word cache), so it is NOT
/// thread-safe; threads that share one Gpt2Bpe each pass their own Scratch to the three-argument
/// encode().
class Gpt2Bpe {
 public:
  /// Free a PCRE2 compiled pattern / match block; they keep pcre2.h out of this header.
  struct CodeFree {
    void operator()(void* p) const;
  };
  struct MatchFree {
    void operator()(void* p) const;
  };

  /// Per-caller mutable state of encode(): one PCRE2 match block, reused for every match, and a
  /// cache from a pre-token's bytes to its ids. Make one from the Gpt2Bpe it is used with.
  class Scratch {
   public:
    /// Cache bounds: more words, ids or key bytes than these clear it (so it stays below ~60 MB on
    /// any input); longer words are not cached.
    static constexpr size_t kMaxCachedWords = size_t{1} << 19, kMaxCachedIds = size_t{1} << 22,
                            kMaxCachedKeyBytes = size_t{1} << 24, kMaxCachedWordBytes = 128;
    explicit Scratch(const Gpt2Bpe& bpe);

   private:
    friend class Gpt2Bpe;
    std::unique_ptr<void, MatchFree> match_data_;  // pcre2_match_data_8
    detail::WordCache cache_;
    std::vector<int32_t> symbols_;      // the word being merged
    std::vector<detail::Merge> pairs_;  // merge of symbols_[i], symbols_[i + 1]
  };

  /// Reads DIR/encoder.json (a JSON object token → id, ids exactly 0..N-1) and DIR/vocab.bpe (a
  /// "#version" header line, then one merge "A B" per line, highest priority first) and compiles
  /// the pre-tokenizer regex with PCRE2 (JIT when the machine supports it). Throws DataError naming
  /// the file for: a missing or unreadable file (the fix: `transnormer data fetch` fetches them into
  /// <data root>/gpt2_bpe/, or pass the folder); bad JSON (file:line:column); a key whose id is not
  /// an integer, a duplicate or out-of-range id, a token that is not in byte→unicode form, a byte
  /// without its single-byte token (naming the key); in vocab.bpe (file:line) a missing header, a
  /// line that is not two symbols, a repeated merge, or a merge whose symbols or result are not
  /// tokens of encoder.json.
  static Gpt2Bpe load(const std::string& dir);

  Gpt2Bpe(Gpt2Bpe&&) noexcept = default;
  Gpt2Bpe& operator=(Gpt2Bpe&&) noexcept = default;

  /// Appends the GPT-2 ids of `text` to `out`: the regex's pre-tokens, each as UTF-8 bytes merged
  /// by rank (encoder.py's bpe()). `text` must be valid UTF-8: callers check it first with
  /// invalid_utf8_at (data/text/utf8.h) to name their file and line; encode itself throws a
  /// DataError giving only the byte offset. Not thread-safe (uses this object's Scratch).
  void encode(std::string_view text, std::vector<int32_t>& out) const;
  /// As above with the caller's Scratch (made from this object): safe on many threads, one Scratch each.
  void encode(std::string_view text, std::vector<int32_t>& out, Scratch& scratch) const;
  /// The GPT-2 ids of `text` (see encode above).
  std::vector<int32_t> encode(std::string_view text) const;

  /// The bytes the ids stand for, concatenated (decode(encode(s)) == s for valid UTF-8 s). Ids that
  /// cut a character in two give bytes that are not UTF-8; they are returned as they are. Throws
  /// DataError naming the first id outside 0..size()-1 and its position.
  std::string decode(const std::vector<int32_t>& ids) const;

  /// Number of tokens (ids 0..size()-1): 50,257 for GPT-2.
  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }
  /// Token `id` as encoder.json spells it (byte→unicode form, e.g. "Ġthe" for " the"); its raw bytes
  /// are decode({id}). Precondition: 0 <= id < size().
  const std::string& token(int32_t id) const { return tokens_[static_cast<size_t>(id)]; }
  /// Number of merges read from vocab.bpe (50,000 for GPT-2).
  int64_t merge_count() const { return static_cast<int64_t>(merges_.size()); }
  /// Whether the regex runs through PCRE2's JIT (false when the machine lacks JIT support).
  bool jit() const { return jit_; }

 private:
  Gpt2Bpe() = default;
  /// Leaves the BPE ids of `word` in scratch.symbols_.
  void merge_word(std::string_view word, Scratch& scratch) const;

  std::vector<std::string> tokens_;  // encoder.json spelling, index = id
  std::vector<std::string> bytes_;   // raw bytes of each token, index = id
  int32_t byte_token_[256] = {};     // id of the single-byte token of each byte
  detail::PairTable merges_;         // (left id, right id) → rank and result
  std::unique_ptr<void, CodeFree> code_;  // pcre2_code_8, compiled (and JIT-compiled) once
  bool jit_ = false;
  std::unique_ptr<Scratch> own_scratch_;  // for the two-argument encode
};

}  // namespace tn
