#include "data/tokenizers/tokenizer_spec.h"

namespace tn {

namespace {
const std::vector<std::pair<std::string, TokenizerSpec::Kind>>& kinds() {
  static const std::vector<std::pair<std::string, TokenizerSpec::Kind>> k = {{"word", TokenizerSpec::Kind::Word},
                                                                              {"gpt2", TokenizerSpec::Kind::Gpt2},
                                                                              {"char", TokenizerSpec::Kind::Char},
                                                                              {"listops", TokenizerSpec::Kind::ListOps}};
  return k;
}

bool has_vocabulary(TokenizerSpec::Kind kind) {
  return kind == TokenizerSpec::Kind::Char || kind == TokenizerSpec::Kind::ListOps;
}
}  // namespace

nlohmann::ordered_json TokenizerSpec::to_json() const {
  switch (kind) {
    case Kind::Word: return "word";
    case Kind::Gpt2: return {{"type", "gpt2"}, {"bpe_dir", bpe_dir}, {"dict", dict}};
    case Kind::Char: return {{"type", "char"}, {"min_freq", min_freq}};
    case Kind::ListOps: return {{"type", "listops"}, {"min_freq", min_freq}};
  }
  return nullptr;
}

TokenizerSpec resolve_tokenizer(const JsonSection& data, const std::string& key, const TokenizerSpec& fallback) {
  const nlohmann::json* v = data.get(key);
  if (!v) return fallback;
  TokenizerSpec out;
  if (v->is_string()) {
    out.kind = data.choice(key, fallback.kind, kinds());
    if (out.kind == fallback.kind) out.min_freq = fallback.min_freq;
    return out;
  }
  const JsonSection s = data.section(key);
  s.check_keys({"type", "bpe_dir", "dict", "min_freq"}, true);
  // Without `type`: gpt2 when the mapping names its files, else the reader's own tokenizer (so
  // `--set data.tokenizer.min_freq=3` keeps a char reader's char).
  const bool names_bpe_files = s.has("bpe_dir") || s.has("dict");
  out.kind = s.choice("type", names_bpe_files ? TokenizerSpec::Kind::Gpt2 : fallback.kind, kinds());
  for (const char* only : {"bpe_dir", "dict"})
    if (out.kind != TokenizerSpec::Kind::Gpt2 && s.has(only))
      s.fail(only, "applies to the gpt2 tokenizer only", "remove it, or set type: gpt2");
  if (!has_vocabulary(out.kind) && s.has("min_freq"))
    s.fail("min_freq", "applies to the char and listops tokenizers only", "remove it");
  if (has_vocabulary(out.kind)) {
    out.min_freq = s.at_least("min_freq", s.integer("min_freq", out.kind == fallback.kind ? fallback.min_freq : 1), 1,
                              "use 1 to keep every symbol of the training split");
    return out;
  }
  if (out.kind == TokenizerSpec::Kind::Word) return out;
  out.bpe_dir = s.string("bpe_dir", out.bpe_dir);
  out.dict = s.string("dict", out.dict);
  if (out.bpe_dir.empty()) s.fail("bpe_dir", "is empty", "name the folder holding encoder.json and vocab.bpe");
  if (out.dict.empty()) s.fail("dict", "is empty", "name fairseq's dict.txt (gpt2_bpe/dict.txt)");
  return out;
}

}  // namespace tn
