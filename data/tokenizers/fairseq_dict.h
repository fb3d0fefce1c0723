#pragma once
// fairseq's dictionary for GPT-2 BPE models (fairseq Dictionary.load on the dict.txt of
// RoBERTa / fairseq's gpt2_bpe): the model's ids of GPT-2 ids, with fairseq's four specials first
// and RoBERTa's <mask> last.
#include <cstdint>
#include <string>
#include <vector>

#include "data/tokenizers/gpt2_bpe.h"

namespace tn {

/// Model ids: <s>=0, <pad>=1, </s>=2, <unk>=3, then dict.txt's symbols in file order from 4, then
/// <mask> (50,265 ids for the real dict.txt: 50,257 GPT-2 ids and madeupword0000..0002).
class FairseqDict {
 public:
  static constexpr int32_t kBos = 0, kPad = 1, kEos = 2, kUnk = 3;

  /// Reads a dict.txt of lines "SYMBOL COUNT" (COUNT a non-negative integer), each SYMBOL a GPT-2
  /// id of `bpe` as a decimal string (0..bpe.size()-1, no sign or leading zeros) or a filler
  /// "madeupwordNNNN". Throws DataError naming path:line for a malformed line, a duplicate symbol
  /// (and the line it first appeared on) or a symbol of neither kind; and naming the path when a
  /// GPT-2 id of `bpe` is missing from the file (how many, and the first), i.e. the dictionary
  /// belongs to another vocabulary; a missing file names the fetch fix.
  static FairseqDict load(const std::string& path, const Gpt2Bpe& bpe);

  int32_t bos() const { return kBos; }
  int32_t pad() const { return kPad; }
  int32_t eos() const { return kEos; }
  int32_t unk() const { return kUnk; }
  /// <mask>, the last id (50264 for the real dict).
  int32_t mask() const { return static_cast<int32_t>(bpe_of_.size()) - 1; }

  /// The model id of a GPT-2 id; unk() when the dictionary lacks it (load() refuses such a
  /// dictionary, so only an id outside 0..bpe.size()-1 gets unk()).
  int32_t index_of_bpe(int32_t gpt2_id) const;
  /// The GPT-2 id of a model id; -1 for the five specials and the madeupwords. Throws DataError for
  /// a model id outside 0..size()-1.
  int32_t bpe_of(int32_t model_id) const;
  /// Number of model ids, specials included (50,265 for the real dict).
  int64_t size() const { return static_cast<int64_t>(bpe_of_.size()); }
  /// Every model id's symbol, index = id: "<s>", "<pad>", "</s>", "<unk>", the file's symbols
  /// ("13", "262", ..., "madeupword0002"), "<mask>" — the checkpoint's vocabulary list.
  std::vector<std::string> symbols() const;
  /// Whether `model_id` is one of <s>, <pad>, </s>, <unk>, <mask> (madeupwords are not).
  bool is_special(int32_t model_id) const { return model_id <= kUnk || model_id == mask(); }
  /// The file this dictionary was read from.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> file_symbols_;  // the file's symbols in order (model ids 4..)
  std::vector<int32_t> bpe_of_;            // model id → GPT-2 id or -1
  std::vector<int32_t> index_of_bpe_;      // GPT-2 id → model id
};

}  // namespace tn
