#include "data/tokenizers/gpt2_bpe.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "data/text/utf8.h"

namespace tn {
namespace {

constexpr const char* kFetchHint =
    "`transnormer data fetch` fetches encoder.json, vocab.bpe and dict.txt into <data root>/gpt2_bpe/; "
    "or pass the folder holding them (--bpe-dir)";

/// GPT-2's pre-tokenizer (encoder.py): contractions, letters, digits, other symbols, each with one
/// optional leading space; whitespace runs leave their last space to the next word.
constexpr const char* kPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

/// GPT-2's bytes_to_unicode(): printable Latin-1 bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for
/// themselves, the other 68 bytes for U+0100.. in byte order. Returns the code point of each byte.
std::array<char32_t, 256> byte_to_code_point() {
  std::array<char32_t, 256> map{};
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    map[static_cast<size_t>(b)] = printable ? static_cast<char32_t>(b) : next++;
  }
  return map;
}

/// UTF-8 of one code point below U+0800 (all that bytes_to_unicode produces).
std::string utf8_of(char32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

/// `text` in double quotes with control bytes escaped, for error messages.
std::string printable(std::string_view text) {
  std::string s = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      s += '\\';
      s += c;
    } else if (u < 0x20 || u == 0x7F) {
      static const char* hex = "0123456789abcdef";
      s += "\\x";
      s += hex[u >> 4];
      s += hex[u & 15];
    } else {
      s += c;
    }
  }
  return s + "\"";
}

/// The file's text; DataError naming the path and the fetch hint when it is missing.
std::string read_vocab_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw DataError(path + ": no such file (" + kFetchHint + ")");
  return read_file(path);
}

/// "path:line:column" of byte `offset` of `text` (1-based line and column).
std::string location(const std::string& path, const std::string& text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < offset; ++i)
    if (text[i] == '\n') ++line, line_start = i + 1;
  return path + ":" + std::to_string(line) + ":" + std::to_string(offset - line_start + 1);
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(code, buffer, sizeof buffer);
  return reinterpret_cast<const char*>(buffer);
}

/// encoder.json's entries, read as SAX events: a flat object of integer ids. The first problem stops
/// the parse: a syntax error (its byte offset), or a value that is not an integer (its key).
struct EncoderEntries : nlohmann::json_sax<nlohmann::json> {
  std::vector<std::pair<std::string, int64_t>> entries;
  std::string current_key, problem, problem_key;
  size_t syntax_error_at = std::string::npos;
  int depth = 0;

  bool fail(const std::string& what) {
    problem = depth >= 1 ? what : "expected a JSON object of token → id at the top level";
    problem_key = depth >= 1 ? current_key : "";
    return false;
  }
  bool value(int64_t id) {
    if (depth != 1) return fail("");
    entries.emplace_back(std::move(current_key), id);
    return true;
  }
  bool null() override { return fail("has the id null, not an integer"); }
  bool boolean(bool) override { return fail("has a boolean id, not an integer"); }
  bool number_integer(number_integer_t v) override { return value(v); }
  bool number_unsigned(number_unsigned_t v) override {
    return v > static_cast<number_unsigned_t>(INT64_MAX) ? fail("has the id " + std::to_string(v) + ", too large")
                                                         : value(static_cast<int64_t>(v));
  }
  bool number_float(number_float_t, const string_t& text) override {
    return fail("has the id " + text + ", not an integer");
  }
  bool string(string_t& v) override { return fail("has the id \"" + v.substr(0, 20) + "\", not an integer"); }
  bool binary(binary_t&) override { return fail("has a binary id, not an integer"); }
  bool start_object(std::size_t) override {
    return ++depth == 1 ? true : fail("has an object as its id, not an integer");
  }
  bool key(string_t& k) override {
    current_key = std::move(k);
    return true;
  }
  bool end_object() override {
    --depth;
    return true;
  }
  bool start_array(std::size_t) override {
    return fail("has an array as its id, not an integer");
  }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    syntax_error_at = position == 0 ? 0 : position - 1;
    problem = e.what();
    return false;
  }
};

/// Token spelling → id while loading (open addressing, like the word cache).
class TokenIds {
 public:
  void add(std::string_view token, int32_t id) { table_.insert(token, detail::hash_bytes(token), {id}); }
  /// The id of `token`, or -1.
  int32_t find(std::string_view token) const {
    uint32_t count = 0;
    const int32_t* id = table_.find(token, detail::hash_bytes(token), count);
    return id ? *id : -1;
  }

 private:
  detail::WordCache table_;
};

/// encoder.json's entries, read through nlohmann's SAX interface (no document tree for 50k keys).
/// Throws DataError at a syntax error (with its line), a value that is no id, or an empty object.
EncoderEntries parse_encoder(const std::string& path, const std::string& text) {
  EncoderEntries encoder;
  nlohmann::json::sax_parse(text, &encoder);
  if (encoder.syntax_error_at != std::string::npos)
    throw DataError(location(path, text, encoder.syntax_error_at) + ": not valid JSON (" + encoder.problem + "); " +
                    kFetchHint + " again");
  if (!encoder.problem.empty()) {
    if (encoder.problem_key.empty()) throw DataError(path + ": " + encoder.problem + " (" + kFetchHint + " again)");
    throw DataError(path + ": key " + printable(encoder.problem_key) + " " + encoder.problem +
                    " (encoder.json must map each GPT-2 token to an id 0..N-1; " + kFetchHint + " again)");
  }
  if (encoder.entries.empty())
    throw DataError(path + ": the object is empty; expected GPT-2's token → id map (" + kFetchHint + " again)");
  return encoder;
}

/// The code points of a UTF-8 key (valid: the JSON parser checked it), each with its byte length.
template <typename Visit>
void for_each_code_point(const std::string& key, Visit visit) {
  const auto* k = reinterpret_cast<const unsigned char*>(key.data());
  for (size_t i = 0; i < key.size();) {
    char32_t cp = k[i];
    size_t len = 1;
    if (cp >= 0xF0) cp = ((cp & 0x07) << 18) | ((k[i + 1] & 0x3F) << 12) | ((k[i + 2] & 0x3F) << 6) | (k[i + 3] & 0x3F), len = 4;
    else if (cp >= 0xE0) cp = ((cp & 0x0F) << 12) | ((k[i + 1] & 0x3F) << 6) | (k[i + 2] & 0x3F), len = 3;
    else if (cp >= 0xC0) cp = ((cp & 0x1F) << 6) | (k[i + 1] & 0x3F), len = 2;
    if (!visit(cp)) return;
    i += len;
  }
}

/// A token's raw bytes, back from GPT-2's byte→unicode form; "" when a character has no byte.
std::string raw_bytes(const std::string& key, const std::array<int, 512>& byte_of) {
  std::string raw;
  bool ok = true;
  for_each_code_point(key, [&](char32_t cp) {
    ok = cp < byte_of.size() && byte_of[cp] >= 0;
    if (ok) raw += static_cast<char>(byte_of[cp]);
    return ok;
  });
  return ok ? raw : std::string();
}

/// The first character of `key` that no byte maps to (raw_bytes gave "").
char32_t first_unmapped(const std::string& key, const std::array<int, 512>& byte_of) {
  char32_t found = 0;
  for_each_code_point(key, [&](char32_t cp) {
    if (cp < byte_of.size() && byte_of[cp] >= 0) return true;
    found = cp;
    return false;
  });
  return found;
}

/// vocab.bpe: "#version: 0.2", then merges "A B", rank = order, each pair and its result tokens of
/// the encoder. Throws DataError naming the line.
void read_merges(const std::string& merges_path, const std::string& merges_text, const std::string& encoder_path,
                 const TokenIds& id_of, detail::PairTable& merges) {
  const auto bad_line = [&](size_t line, const std::string& problem) {
    return DataError(merges_path + ":" + std::to_string(line) + ": " + problem + " (" + kFetchHint + " again)");
  };
  size_t start = 0, line = 0;
  std::string joined;
  merges.reserve(static_cast<size_t>(std::count(merges_text.begin(), merges_text.end(), '\n')) + 1);
  while (start < merges_text.size()) {
    size_t end = merges_text.find('\n', start);
    if (end == std::string::npos) end = merges_text.size();
    const std::string_view text(merges_text.data() + start, end - start);
    start = end + 1;
    ++line;
    if (line == 1) {
      if (!text.starts_with("#version"))
        throw bad_line(1, "expected the header \"#version: 0.2\", found " + printable(text.substr(0, 40)));
      continue;
    }
    const size_t space = text.find(' ');
    if (space == std::string_view::npos || space == 0 || space + 1 == text.size() ||
        text.find(' ', space + 1) != std::string_view::npos)
      throw bad_line(line, "expected a merge of two symbols \"A B\", found " + printable(text));
    const std::string_view left = text.substr(0, space), right = text.substr(space + 1);
    joined.assign(left).append(right);
    const int32_t l = id_of.find(left), r = id_of.find(right), result = id_of.find(joined);
    if (l < 0 || r < 0)
      throw bad_line(line, "the symbol " + printable(l < 0 ? left : right) + " is not a token of " + encoder_path);
    if (result < 0) throw bad_line(line, "the merge's result " + printable(joined) + " is not a token of " + encoder_path);
    const int32_t rank = static_cast<int32_t>(line - 2);
    if (!merges.insert(l, r, detail::Merge{rank, result}))
      throw bad_line(line, "repeats the merge of line " + std::to_string(merges.find(l, r).rank + 2));
  }
  if (line == 0) throw bad_line(1, "the file is empty; expected \"#version: 0.2\" and the merges");
}

/// GPT-2's pre-tokenizer pattern, compiled with Unicode properties. Throws when PCRE2 cannot.
pcre2_code* compile_pattern() {
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kPattern), PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_UCP, &error, &error_offset, nullptr);
  if (!code)
    throw std::runtime_error("PCRE2 cannot compile the GPT-2 pattern at offset " + std::to_string(error_offset) +
                             ": " + pcre2_message(error) + " (is libpcre2-8 built with Unicode support?)");
  return code;
}

}  // namespace

void Gpt2Bpe::CodeFree::operator()(void* p) const { pcre2_code_free(static_cast<pcre2_code*>(p)); }
void Gpt2Bpe::MatchFree::operator()(void* p) const { pcre2_match_data_free(static_cast<pcre2_match_data*>(p)); }

Gpt2Bpe::Scratch::Scratch(const Gpt2Bpe& bpe)
    : match_data_(pcre2_match_data_create_from_pattern(static_cast<const pcre2_code*>(bpe.code_.get()), nullptr),
                  MatchFree{}) {
  if (!match_data_) throw std::bad_alloc();
}

Gpt2Bpe Gpt2Bpe::load(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw DataError(dir + ": no such folder, expected one holding GPT-2's encoder.json and vocab.bpe (" +
                    kFetchHint + ")");
  const std::string encoder_path = (std::filesystem::path(dir) / "encoder.json").string();
  const std::string merges_path = (std::filesystem::path(dir) / "vocab.bpe").string();
  const std::string encoder_text = read_vocab_file(encoder_path);
  const std::string merges_text = read_vocab_file(merges_path);

  Gpt2Bpe bpe;
  const EncoderEntries encoder = parse_encoder(encoder_path, encoder_text);
  const auto bad_key = [&](const std::string& key, const std::string& problem) {
    return DataError(encoder_path + ": key " + printable(key) + " " + problem +
                     " (encoder.json must map each GPT-2 token to an id 0..N-1; " + kFetchHint + " again)");
  };
  const size_t n = encoder.entries.size();
  std::array<int, 512> byte_of{};  // code point → byte, -1 when no byte maps there
  byte_of.fill(-1);
  const std::array<char32_t, 256> code_point = byte_to_code_point();
  for (int b = 0; b < 256; ++b) byte_of[code_point[static_cast<size_t>(b)]] = b;
  bpe.tokens_.resize(n);
  bpe.bytes_.resize(n);
  std::vector<bool> seen(n, false);
  TokenIds id_of;
  for (const auto& [key, id] : encoder.entries) {
    if (id < 0 || id >= static_cast<int64_t>(n))
      throw bad_key(key, "has the id " + std::to_string(id) + ", outside 0.." + std::to_string(n - 1) +
                             " for " + std::to_string(n) + " tokens");
    if (seen[static_cast<size_t>(id)])
      throw bad_key(key, "repeats the id " + std::to_string(id) + " of " +
                             printable(bpe.tokens_[static_cast<size_t>(id)]));
    if (key.empty()) throw bad_key(key, "is empty");
    if (id_of.find(key) >= 0) throw bad_key(key, "appears twice");
    seen[static_cast<size_t>(id)] = true;
    std::string raw = raw_bytes(key, byte_of);
    if (raw.empty()) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "U+%04X", static_cast<unsigned>(first_unmapped(key, byte_of)));
      throw bad_key(key, std::string("has the character ") + hex +
                             ", which GPT-2's byte→unicode form does not use (is this a byte-level BPE?)");
    }
    bpe.tokens_[static_cast<size_t>(id)] = key;
    bpe.bytes_[static_cast<size_t>(id)] = std::move(raw);
    id_of.add(key, static_cast<int32_t>(id));
  }
  for (int b = 0; b < 256; ++b) {
    const std::string symbol = utf8_of(code_point[static_cast<size_t>(b)]);
    const int32_t id = id_of.find(symbol);
    if (id < 0)
      throw DataError(encoder_path + ": has no token " + printable(symbol) + " for the byte " + std::to_string(b) +
                      " (a byte-level BPE needs all 256 single-byte tokens; " + kFetchHint + " again)");
    bpe.byte_token_[b] = id;
  }
  read_merges(merges_path, merges_text, encoder_path, id_of, bpe.merges_);
  bpe.code_.reset(compile_pattern());
  bpe.jit_ = pcre2_jit_compile(static_cast<pcre2_code*>(bpe.code_.get()), PCRE2_JIT_COMPLETE) == 0;
  bpe.own_scratch_ = std::make_unique<Scratch>(bpe);
  return bpe;
}

void Gpt2Bpe::merge_word(std::string_view word, Scratch& scratch) const {
  // encoder.py's bpe(): merge the lowest-ranked adjacent pair everywhere (left to right, no
  // overlaps) until no adjacent pair is a merge. Each pair's merge is looked up once and kept in
  // pairs_; after a round only the pairs beside a new symbol are looked up again.
  std::vector<int32_t>& symbols = scratch.symbols_;
  std::vector<detail::Merge>& pairs = scratch.pairs_;
  symbols.clear();
  for (const char c : word) symbols.push_back(byte_token_[static_cast<unsigned char>(c)]);
  pairs.resize(symbols.size());
  for (size_t i = 0; i + 1 < symbols.size(); ++i) pairs[i] = merges_.find(symbols[i], symbols[i + 1]);
  while (symbols.size() > 1) {
    int32_t best = INT32_MAX;
    for (size_t i = 0; i + 1 < symbols.size(); ++i) best = std::min(best, pairs[i].rank);
    if (best == INT32_MAX) break;
    // The pair of rank `best` is unique, so rank == best marks its occurrences.
    size_t kept = 0;
    bool last_merged = false;  // whether symbols[kept - 1] was made in this round
    for (size_t i = 0; i < symbols.size(); ++i) {
      if (i + 1 < symbols.size() && pairs[i].rank == best) {
        symbols[kept] = pairs[i].result;
        if (kept > 0) pairs[kept - 1] = merges_.find(symbols[kept - 1], symbols[kept]);
        ++kept;
        ++i;
        last_merged = true;
      } else {
        symbols[kept] = symbols[i];
        if (kept > 0)
          pairs[kept - 1] = last_merged ? merges_.find(symbols[kept - 1], symbols[kept]) : pairs[i - 1];
        ++kept;
        last_merged = false;
      }
    }
    symbols.resize(kept);
  }
}

void Gpt2Bpe::encode(std::string_view text, std::vector<int32_t>& out, Scratch& scratch) const {
  if (const size_t bad = invalid_utf8_at(text); bad != std::string_view::npos)
    throw DataError("GPT-2 BPE: the text is not valid UTF-8 (bad byte at offset " + std::to_string(bad) +
                    "); convert it to UTF-8");
  const auto* code = static_cast<const pcre2_code*>(code_.get());
  auto* match = static_cast<pcre2_match_data*>(scratch.match_data_.get());
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
  detail::WordCache& cache = scratch.cache_;
  size_t offset = 0;
  while (offset < text.size()) {
    const int rc = jit_ ? pcre2_jit_match(code, subject, text.size(), offset, 0, match, nullptr)
                        : pcre2_match(code, subject, text.size(), offset, PCRE2_NO_UTF_CHECK, match, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) throw std::runtime_error("GPT-2 BPE: PCRE2 match failed: " + pcre2_message(rc));
    const size_t begin = ovector[0], end = ovector[1];
    if (end <= begin) break;  // the pattern has no empty match; never reached
    offset = end;
    const std::string_view word = text.substr(begin, end - begin);
    if (word.size() == 1) {  // one byte: its own token, no merge applies
      out.push_back(byte_token_[static_cast<unsigned char>(word[0])]);
      continue;
    }
    const uint64_t hash = detail::hash_bytes(word);
    uint32_t count = 0;
    if (const int32_t* ids = cache.find(word, hash, count)) {
      out.insert(out.end(), ids, ids + count);
      continue;
    }
    merge_word(word, scratch);
    out.insert(out.end(), scratch.symbols_.begin(), scratch.symbols_.end());
    if (word.size() > Scratch::kMaxCachedWordBytes) continue;
    if (cache.size() >= Scratch::kMaxCachedWords || cache.id_count() >= Scratch::kMaxCachedIds ||
        cache.key_bytes() >= Scratch::kMaxCachedKeyBytes)
      cache.clear();
    cache.insert(word, hash, scratch.symbols_);
  }
}

void Gpt2Bpe::encode(std::string_view text, std::vector<int32_t>& out) const { encode(text, out, *own_scratch_); }

std::vector<int32_t> Gpt2Bpe::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  encode(text, ids);
  return ids;
}

std::string Gpt2Bpe::decode(const std::vector<int32_t>& ids) const {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= size())
      throw DataError("GPT-2 BPE: id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                      " is outside 0.." + std::to_string(size() - 1) + " (is it a fairseq dictionary id? decode "
                      "those through the dictionary)");
    text += bytes_[static_cast<size_t>(ids[i])];
  }
  return text;
}

}  // namespace tn
