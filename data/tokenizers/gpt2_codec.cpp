#include "data/tokenizers/gpt2_codec.h"

namespace tn {

Gpt2Codec Gpt2Codec::load(const std::string& bpe_dir, const std::string& dict_path) {
  Gpt2Bpe bpe = Gpt2Bpe::load(bpe_dir);
  FairseqDict dict = FairseqDict::load(dict_path, bpe);
  return Gpt2Codec{std::move(bpe), std::move(dict)};
}

void Gpt2Codec::encode_line(std::string_view line, std::vector<int32_t>& out) const {
  const size_t first = out.size();
  bpe.encode(line, out);
  for (size_t i = first; i < out.size(); ++i) out[i] = dict.index_of_bpe(out[i]);
}

std::string Gpt2Codec::decode_ids(const std::vector<int32_t>& ids) const {
  std::vector<int32_t> gpt2;
  gpt2.reserve(ids.size());
  for (const int32_t id : ids)
    if (const int32_t g = dict.bpe_of(id); g >= 0) gpt2.push_back(g);
  return bpe.decode(gpt2);
}

}  // namespace tn
