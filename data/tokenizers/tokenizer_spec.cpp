#include "data/tokenizers/tokenizer_spec.h"

namespace tn {

nlohmann::ordered_json TokenizerSpec::to_json() const {
  if (kind == Kind::Word) return "word";
  return {{"type", "gpt2"}, {"bpe_dir", bpe_dir}, {"dict", dict}};
}

TokenizerSpec resolve_tokenizer(const JsonSection& data, const std::string& key, const TokenizerSpec& fallback) {
  const nlohmann::json* v = data.get(key);
  if (!v) return fallback;
  const std::vector<std::pair<std::string, TokenizerSpec::Kind>> kinds = {{"word", TokenizerSpec::Kind::Word},
                                                                           {"gpt2", TokenizerSpec::Kind::Gpt2}};
  TokenizerSpec out;
  if (v->is_string()) {
    out.kind = data.choice(key, fallback.kind, kinds);
    return out;
  }
  const JsonSection s = data.section(key);
  s.check_keys({"type", "bpe_dir", "dict"}, true);
  out.kind = s.choice("type", TokenizerSpec::Kind::Gpt2, kinds);
  if (out.kind == TokenizerSpec::Kind::Word) {
    if (s.has("bpe_dir") || s.has("dict"))
      s.fail(s.has("bpe_dir") ? "bpe_dir" : "dict", "applies to the gpt2 tokenizer only",
             "remove it, or set type: gpt2");
    return out;
  }
  out.bpe_dir = s.string("bpe_dir", out.bpe_dir);
  out.dict = s.string("dict", out.dict);
  if (out.bpe_dir.empty()) s.fail("bpe_dir", "is empty", "name the folder holding encoder.json and vocab.bpe");
  if (out.dict.empty()) s.fail("dict", "is empty", "name fairseq's dict.txt (gpt2_bpe/dict.txt)");
  return out;
}

}  // namespace tn
