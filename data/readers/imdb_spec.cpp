#include "data/readers/imdb_spec.h"

#include <cmath>

#include "data/batching/batch_stream.h"
#include "data/data_root.h"
#include "data/readers/imdb.h"

namespace tn {

namespace {
const std::vector<std::pair<std::string, ImdbSpec::Valid>> kValid = {
    {"holdout", ImdbSpec::Valid::Holdout}, {"test", ImdbSpec::Valid::Test}};

std::string valid_name(ImdbSpec::Valid v) { return v == ImdbSpec::Valid::Test ? "test" : "holdout"; }

SentenceSplit make_split(std::string name, SentenceSplit::Role role, std::string file,
                         std::vector<SentenceExample> rows) {
  SentenceSplit s;
  s.name = std::move(name);
  s.role = role;
  s.file = std::move(file);
  s.rows = std::move(rows);
  return s;
}
}  // namespace

ImdbSpec::ImdbSpec() {
  tokenizer.kind = TokenizerSpec::Kind::Char;
  tokenizer.min_freq = 15;
}

nlohmann::ordered_json ImdbSpec::to_json() const {
  return {{"reader", reader()},
          {"path", path},
          {"valid", valid == Valid::None ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(valid_name(valid))},
          {"valid_fraction", valid_fraction},
          {"test", test},
          {"max_length", max_length},
          {"tokenizer", tokenizer.to_json()}};
}

bool ImdbSpec::equals(const DataSpec& other) const {
  const auto* o = dynamic_cast<const ImdbSpec*>(&other);
  return o && o->path == path && o->valid == valid && o->valid_fraction == valid_fraction && o->test == test &&
         o->max_length == max_length && o->tokenizer == tokenizer;
}

SentenceTarget ImdbSpec::target() const {
  SentenceTarget t;
  t.num_classes = 2;
  t.label_names = {"neg", "pos"};
  t.metrics = {"accuracy"};
  return t;
}

std::vector<SentenceSplit> ImdbSpec::read_sentences(const std::string& data_root) const {
  const std::string where = data_path(data_root, path);
  ImdbReviews reviews = read_imdb(where, valid == Valid::Test || test);  // the test reviews only when used
  std::vector<SentenceSplit> out;
  std::vector<SentenceExample> train = std::move(reviews.train), held;
  std::string train_file = where + " (train)";
  if (valid == Valid::Holdout) {
    const auto n = static_cast<int64_t>(train.size());
    const auto k = static_cast<int64_t>(std::llround(valid_fraction * static_cast<double>(n)));
    std::vector<uint8_t> out_of_train(train.size(), 0);
    const std::vector<int64_t> order = epoch_order(n, 0, 0);
    for (int64_t i = 0; i < k; ++i) out_of_train[order[i]] = 1;
    std::vector<SentenceExample> kept;
    for (int64_t i = 0; i < n; ++i) (out_of_train[i] ? held : kept).push_back(std::move(train[i]));
    train = std::move(kept);
    train_file = where + " (train, less " + std::to_string(k) + " held out)";
  }
  out.push_back(make_split("train", SentenceSplit::Role::Train, train_file, std::move(train)));
  if (valid == Valid::Holdout)
    out.push_back(make_split("valid", SentenceSplit::Role::Valid, where + " (train, held out)", std::move(held)));
  if (valid == Valid::Test)
    out.push_back(make_split("valid", SentenceSplit::Role::Valid, where + " (test)", reviews.test));
  if (test) out.push_back(make_split("test", SentenceSplit::Role::Test, where + " (test)", std::move(reviews.test)));
  return out;
}

std::shared_ptr<const DataSpec> resolve_imdb_spec(const JsonSection& s) {
  s.check_keys({"reader", "path", "valid", "valid_fraction", "test", "max_length", "tokenizer"}, true);
  auto d = std::make_shared<ImdbSpec>();
  d->path = s.string("path", d->path);
  if (d->path.empty()) s.fail("path", "is empty", "name aclImdb_v1.tar.gz, a folder of archives, or aclImdb/");
  const nlohmann::json* v = s.find("valid");
  d->valid = v && v->is_null() ? ImdbSpec::Valid::None : s.choice("valid", d->valid, kValid);
  d->valid_fraction = s.number("valid_fraction", d->valid_fraction);
  if (d->valid == ImdbSpec::Valid::Holdout && !(d->valid_fraction > 0 && d->valid_fraction < 1))
    s.fail("valid_fraction", "must lie in (0, 1) with valid: holdout", "use a fraction such as 0.1");
  d->test = s.boolean("test", d->test);
  d->max_length = s.at_least("max_length", s.integer("max_length", d->max_length), 2,
                             "give the longest review in characters, <eos> included (LRA: 4096)");
  d->tokenizer = resolve_tokenizer(s, "tokenizer", d->tokenizer);
  if (d->tokenizer.kind != TokenizerSpec::Kind::Char)
    s.fail("tokenizer", "must be char for the imdb reader", "use {type: char, min_freq: 15} (LRA Text)");
  return d;
}

}  // namespace tn
