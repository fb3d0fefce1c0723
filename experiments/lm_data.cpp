#include "experiments/lm_data.h"

#include "data/data_root.h"
#include "data/readers/wikitext.h"

namespace tn {

LmData load_lm_data(const DataSpec& spec, const std::string& data_root) {
  const std::string train_file = data_path(data_root, spec.train);
  std::vector<std::string> train_lines = read_lines(train_file);
  std::string valid_file;
  std::vector<std::string> valid_lines;
  if (spec.split_valid_from_train > 0) {
    auto split = split_valid_from_train(std::move(train_lines), spec.split_valid_from_train);
    train_lines = std::move(split.first);
    valid_lines = std::move(split.second);
    valid_file = train_file + " (last " + std::to_string(valid_lines.size()) + " lines)";
  } else if (!spec.valid.empty()) {
    valid_file = data_path(data_root, spec.valid);
    valid_lines = read_lines(valid_file);
  }
  LmData out{WordVocab::build(train_lines)};
  out.train_file = train_file;
  out.valid_file = valid_file;
  out.train_lines = static_cast<int64_t>(train_lines.size());
  out.valid_lines = static_cast<int64_t>(valid_lines.size());
  out.train = out.vocab.encode(train_lines);
  if (!valid_lines.empty()) out.valid = out.vocab.encode(valid_lines);
  if (!spec.test.empty()) {
    out.test_file = data_path(data_root, spec.test);
    out.test = out.vocab.encode(read_lines(out.test_file));
  }
  return out;
}

}  // namespace tn
