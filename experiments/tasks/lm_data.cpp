#include "experiments/tasks/lm_data.h"

namespace tn {

LmData encode_lm_data(const TextSplits& splits) {
  LmData out{WordVocab::build(splits.train)};
  out.train_file = splits.train_file;
  out.valid_file = splits.valid_file;
  out.test_file = splits.test_file;
  out.train_lines = static_cast<int64_t>(splits.train.size());
  out.valid_lines = static_cast<int64_t>(splits.valid.size());
  out.test_lines = static_cast<int64_t>(splits.test.size());
  out.train = out.vocab.encode(splits.train);
  if (!splits.valid.empty()) out.valid = out.vocab.encode(splits.valid);
  if (!splits.test.empty()) out.test = out.vocab.encode(splits.test);
  return out;
}

}  // namespace tn
