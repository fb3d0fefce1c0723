#pragma once
// Lines of token ids, as `transnormer tokenize` writes them and `tokenize --decode` reads them:
// decimal ids separated by spaces (tabs and a trailing '\r' also accepted).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/tokenizers/fairseq_dict.h"
#include "data/tokenizers/gpt2_bpe.h"

namespace tn {

/// Appends `ids` to `out` as one line: decimal ids separated by single spaces, then '\n'.
void append_id_line(const std::vector<int32_t>& ids, std::string& out);

/// The ids of one line, each in 0..limit-1, into `ids` (cleared first). `where` (file:line) and
/// `vocabulary` ("GPT-2 vocabulary") go into the messages. Throws DataError for a word that is not
/// an integer or an id outside the range, each with the fix.
void parse_id_line(std::string_view line, int64_t limit, const std::string& where, const char* vocabulary,
                   std::vector<int32_t>& ids);

/// The text of one line of ids (tokenize --decode): GPT-2 ids, or with `dict` the dictionary's model
/// ids (specials and madeupwords skipped). The bytes are returned as the ids give them (ids that cut
/// a character may give bytes that are not UTF-8). `ids` is scratch space. Throws as parse_id_line.
std::string decode_id_line(std::string_view line, const Gpt2Bpe& bpe, const FairseqDict* dict,
                           const std::string& where, std::vector<int32_t>& ids);

}  // namespace tn
