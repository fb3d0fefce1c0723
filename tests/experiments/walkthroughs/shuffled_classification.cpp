#include "tests/experiments/walkthroughs/shuffled_classification.h"

#include <algorithm>
#include <random>
#include <vector>

#include "core/error.h"
#include "data/encoding/symbol_encoding.h"
#include "experiments/tasks/sequence_classification.h"
#include "experiments/tasks/task_factory.h"

namespace tn::walkthrough {

std::string shuffled_symbols(const std::string& text, uint64_t seed) {
  std::vector<std::string> symbols;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80 || symbols.empty()) symbols.emplace_back();  // a lead byte starts a code point
    symbols.back() += char(c);
  }
  std::mt19937_64 gen(seed);
  std::shuffle(symbols.begin(), symbols.end(), gen);
  std::string out;
  for (const std::string& s : symbols) out += s;
  return out;
}

std::unique_ptr<Task> make_shuffled_classification(const ExperimentSpec& spec, const std::string& data_root) {
  const std::string name = "shuffled_classification";
  require_model(spec, name, Arch::Encoder, HeadKind::Classification);
  const auto& source = require_source<SentenceSource>(spec, name, "labelled texts", "a reader such as imdb");
  if (source.pairs())
    throw ConfigError(spec.path + ": task: " + name + " takes one text per example, but " + spec.data->reader() +
                      " yields pairs; use task: retrieval");
  const TokenizerSpec tok = source.text_tokenizer();
  if (tok.kind != TokenizerSpec::Kind::Char)
    throw ConfigError(spec.path + ": data.tokenizer: " + name + " shuffles characters; use {type: char}");
  std::vector<SentenceSplit> splits = source.read_sentences(data_root);
  for (size_t s = 0; s < splits.size(); ++s)
    for (size_t row = 0; row < splits[s].rows.size(); ++row) {
      std::string& text = splits[s].rows[row].a;
      text = shuffled_symbols(text, spec.train.seed + (uint64_t(s) << 32) + row);
    }
  EncodedData data = encode_symbols(splits, tok, spec.data->tokens_per_sample());
  data.dataset = sentence_dataset_info(source);
  return make_classification_task(spec, std::move(data));
}

}  // namespace tn::walkthrough
