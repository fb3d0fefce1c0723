#pragma once
// Text ↔ model ids for GPT-2 BPE models trained with fairseq (RoBERTa and its kin): the GPT-2 BPE
// then the fairseq dictionary. What readers of raw text use.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/tokenizers/fairseq_dict.h"
#include "data/tokenizers/gpt2_bpe.h"

namespace tn {

/// A GPT-2 BPE and the dictionary that maps its ids to a model's. Move-only; encode_line shares the
/// BPE's Scratch, so it is not thread-safe (see Gpt2Bpe).
struct Gpt2Codec {
  Gpt2Bpe bpe;
  FairseqDict dict;

  /// Gpt2Bpe::load(bpe_dir), then FairseqDict::load(dict_path, bpe); their DataErrors pass through.
  static Gpt2Codec load(const std::string& bpe_dir, const std::string& dict_path);

  /// Appends the model ids of one line (without its newline; no <s> or </s> added). The line must be
  /// valid UTF-8 (the caller checks, to name its file and line; see Gpt2Bpe::encode).
  void encode_line(std::string_view line, std::vector<int32_t>& out) const;
  /// The text of model ids; the specials and the madeupwords are skipped. Throws DataError for an id
  /// outside 0..dict.size()-1.
  std::string decode_ids(const std::vector<int32_t>& ids) const;
};

}  // namespace tn
