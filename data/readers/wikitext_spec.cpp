#include "data/readers/wikitext_spec.h"

#include <string>
#include <vector>

#include "core/error.h"
#include "data/data_root.h"
#include "data/readers/split_files.h"
#include "data/readers/wikitext.h"

namespace tn {

nlohmann::ordered_json WikitextSpec::to_json() const {
  return {{"reader", reader()},
          {"train", nullable_file(train)},
          {"valid", nullable_file(valid)},
          {"test", nullable_file(test)},
          {"split_valid_from_train", split_valid_from_train},
          {"seq_len", seq_len},
          {"tokenizer", tokenizer.to_json()}};
}

bool WikitextSpec::equals(const DataSpec& other) const {
  const auto* o = dynamic_cast<const WikitextSpec*>(&other);
  return o && train == o->train && valid == o->valid && test == o->test &&
         split_valid_from_train == o->split_valid_from_train && seq_len == o->seq_len &&
         tokenizer == o->tokenizer;
}

namespace {

/// The lines of the file data.<key> names; DataError naming the file when it holds none (a split
/// given but empty would otherwise be skipped without a word).
std::vector<std::string> read_split(const std::string& path, const char* key) {
  std::vector<std::string> lines = read_lines(path);
  if (lines.empty())
    throw DataError(path + ": is empty, but data." + key + " names it; give the split's text (WikiText: " +
                    "`transnormer data fetch` fetches it) or leave data." + key + " out");
  return lines;
}

}  // namespace

TextSplits WikitextSpec::read_text(const std::string& data_root) const {
  TextSplits out;
  out.train_file = data_path(data_root, train);
  out.train = read_split(out.train_file, "train");
  if (split_valid_from_train > 0) {
    auto split = tn::split_valid_from_train(std::move(out.train), split_valid_from_train);
    out.train = std::move(split.first);
    out.valid = std::move(split.second);
    out.valid_file = out.train_file + " (last " + std::to_string(out.valid.size()) + " lines)";
  } else if (!valid.empty()) {
    out.valid_file = data_path(data_root, valid);
    out.valid = read_split(out.valid_file, "valid");
  }
  if (!test.empty()) {
    out.test_file = data_path(data_root, test);
    out.test = read_split(out.test_file, "test");
  }
  return out;
}

std::shared_ptr<const DataSpec> resolve_wikitext_spec(const JsonSection& s) {
  s.check_keys({"reader", "train", "valid", "test", "split_valid_from_train", "seq_len", "tokenizer"}, true);
  auto d = std::make_shared<WikitextSpec>();
  if (!s.has("train"))
    s.fail("train", "is required",
           "add data.train: a WikiText-layout .tokens file (relative paths are taken from the data root)");
  d->train = s.string("train", "");
  if (d->train.empty()) s.fail("train", "is empty", "give the training file's path");
  d->valid = s.has("valid") ? s.string("valid", "") : "";
  d->test = s.has("test") ? s.string("test", "") : "";
  d->split_valid_from_train = s.number("split_valid_from_train", d->split_valid_from_train);
  if (!(d->split_valid_from_train >= 0 && d->split_valid_from_train < 1))
    s.fail("split_valid_from_train",
           "must lie in [0, 1), got " + nlohmann::json(d->split_valid_from_train).dump(),
           "use a fraction such as 0.1 (0: no split)");
  d->seq_len = s.at_least("seq_len", s.integer("seq_len", d->seq_len), 1, "use a positive length such as 256");
  d->tokenizer = resolve_tokenizer(s, "tokenizer", d->tokenizer);
  if (!d->valid.empty() && d->split_valid_from_train > 0)
    s.fail("split_valid_from_train", "cannot be combined with data.valid",
           "give data.valid or data.split_valid_from_train, not both: remove one", {"valid"});
  return d;
}

}  // namespace tn
