#include "data/tokenizers/id_lines.h"

#include <charconv>

#include "core/error.h"

namespace tn {

void append_id_line(const std::vector<int32_t>& ids, std::string& out) {
  char digits[16];
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ' ';
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, ids[i]);
    out.append(digits, end);
  }
  out += '\n';
}

void parse_id_line(std::string_view line, int64_t limit, const std::string& where, const char* vocabulary,
                   std::vector<int32_t>& ids) {
  ids.clear();
  size_t pos = 0;
  while (pos < line.size()) {
    if (line[pos] == ' ' || line[pos] == '\t' || line[pos] == '\r') {
      ++pos;
      continue;
    }
    size_t end = pos;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t' && line[end] != '\r') ++end;
    const std::string_view word = line.substr(pos, end - pos);
    int64_t id = 0;
    const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), id);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && ptr == word.data() + word.size() &&
                                                 (id < 0 || id >= limit)))
      throw DataError(where + ": the id " + std::string(word.substr(0, 24)) + " is outside 0.." +
                      std::to_string(limit - 1) + " of the " + vocabulary +
                      " (decode ids written by tokenize with the same --dict choice)");
    if (ec != std::errc() || ptr != word.data() + word.size())
      throw DataError(where + ": \"" + std::string(word.substr(0, 24)) +
                      "\" is not a token id (--decode reads lines of space-separated integers, as tokenize writes)");
    ids.push_back(static_cast<int32_t>(id));
    pos = end;
  }
}

std::string decode_id_line(std::string_view line, const Gpt2Bpe& bpe, const FairseqDict* dict,
                           const std::string& where, std::vector<int32_t>& ids) {
  const int64_t limit = dict ? dict->size() : bpe.size();
  parse_id_line(line, limit, where, dict ? "dictionary" : "GPT-2 vocabulary", ids);
  if (!dict) return bpe.decode(ids);
  std::vector<int32_t> gpt2;
  gpt2.reserve(ids.size());
  for (const int32_t id : ids)
    if (const int32_t g = dict->bpe_of(id); g >= 0) gpt2.push_back(g);
  return bpe.decode(gpt2);
}

}  // namespace tn
