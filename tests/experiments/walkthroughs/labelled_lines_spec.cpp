#include "tests/experiments/walkthroughs/labelled_lines_spec.h"

#include <algorithm>

#include "data/data_root.h"
#include "tests/experiments/walkthroughs/labelled_lines.h"

namespace tn::walkthrough {

LabelledLinesSpec::LabelledLinesSpec() {
  tokenizer.kind = TokenizerSpec::Kind::Char;
  tokenizer.min_freq = 1;
}

nlohmann::ordered_json LabelledLinesSpec::to_json() const {
  return {{"reader", reader()}, {"path", path}, {"labels", labels}, {"max_length", max_length},
          {"tokenizer", tokenizer.to_json()}};
}

bool LabelledLinesSpec::equals(const DataSpec& other) const {
  const auto* o = dynamic_cast<const LabelledLinesSpec*>(&other);
  return o && o->path == path && o->labels == labels && o->max_length == max_length && o->tokenizer == tokenizer;
}

SentenceTarget LabelledLinesSpec::target() const {
  SentenceTarget t;
  t.num_classes = static_cast<int32_t>(labels.size());
  t.label_names = labels;
  t.metrics = {"accuracy"};
  return t;
}

std::vector<SentenceSplit> LabelledLinesSpec::read_sentences(const std::string& data_root) const {
  const std::string dir = data_path(data_root, path);
  using Role = SentenceSplit::Role;
  return {read_labelled_lines(dir + "/train.tsv", "train", Role::Train, labels),
          read_labelled_lines(dir + "/valid.tsv", "valid", Role::Valid, labels),
          read_labelled_lines(dir + "/test.tsv", "test", Role::Test, labels)};
}

std::shared_ptr<const DataSpec> resolve_labelled_lines_spec(const JsonSection& s) {
  s.check_keys({"reader", "path", "labels", "max_length", "tokenizer"}, true);
  auto d = std::make_shared<LabelledLinesSpec>();
  d->path = s.string("path", "");
  if (d->path.empty()) s.fail("path", "is missing or empty", "name the folder of train.tsv, valid.tsv and test.tsv");
  const nlohmann::json* labels = s.get("labels");
  if (!labels || !labels->is_array() || labels->size() < 2)
    s.fail("labels", "must list at least two label names", "write labels: [neg, pos]");
  for (const nlohmann::json& l : *labels) {
    if (!l.is_string() || l.get<std::string>().empty()) s.fail("labels", "holds a non-string or empty name", "quote each label");
    if (std::find(d->labels.begin(), d->labels.end(), l.get<std::string>()) != d->labels.end())
      s.fail("labels", "names \"" + l.get<std::string>() + "\" twice", "list each label once");
    d->labels.push_back(l.get<std::string>());
  }
  d->max_length = s.at_least("max_length", s.integer("max_length", d->max_length), 2,
                             "give the longest text in characters, <eos> included");
  d->tokenizer = resolve_tokenizer(s, "tokenizer", d->tokenizer);
  if (d->tokenizer.kind != TokenizerSpec::Kind::Char)
    s.fail("tokenizer", "must be char for the labelled_lines reader", "use {type: char, min_freq: 1}");
  return d;
}

}  // namespace tn::walkthrough
