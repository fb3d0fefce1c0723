#include "experiments/tasks/mlm_data.h"

#include "core/error.h"

namespace tn {

std::string_view strip_line(std::string_view line) {
  constexpr const char* kSpace = " \t\n\r\f\v";
  const size_t first = line.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return line.substr(first, line.find_last_not_of(kSpace) - first + 1);
}

namespace {

struct EncodedSplit {
  PackedSamples samples;
  int64_t lines = 0, tokens = 0;
};

EncodedSplit encode_split(const std::vector<std::string>& lines, const std::string& file, const Gpt2Codec& codec,
                          int64_t tokens_per_sample) {
  std::vector<std::vector<int32_t>> ids;
  ids.reserve(lines.size());
  EncodedSplit out;
  for (const std::string& line : lines) {
    const std::string_view text = strip_line(line);
    if (text.empty()) continue;
    ids.emplace_back();
    codec.encode_line(text, ids.back());
    out.tokens += static_cast<int64_t>(ids.back().size()) + 1;
    ++out.lines;
  }
  if (out.lines == 0)
    throw DataError(file + ": no non-empty line to train or evaluate on (is it the .raw text file?)");
  out.samples = pack_complete(ids, tokens_per_sample, codec.dict.bos(), codec.dict.eos());
  return out;
}

}  // namespace

MlmData encode_mlm_data(const TextSplits& splits, const Gpt2Codec& codec, int64_t tokens_per_sample) {
  MlmData out;
  out.train_file = splits.train_file;
  out.valid_file = splits.valid_file;
  out.test_file = splits.test_file;
  EncodedSplit train = encode_split(splits.train, splits.train_file, codec, tokens_per_sample);
  out.train = std::move(train.samples);
  out.train_lines = train.lines;
  out.train_tokens = train.tokens;
  if (!splits.valid.empty()) {
    EncodedSplit valid = encode_split(splits.valid, splits.valid_file, codec, tokens_per_sample);
    out.valid = std::move(valid.samples);
    out.valid_lines = valid.lines;
  }
  if (!splits.test.empty()) {
    EncodedSplit test = encode_split(splits.test, splits.test_file, codec, tokens_per_sample);
    out.test = std::move(test.samples);
    out.test_lines = test.lines;
  }
  return out;
}

}  // namespace tn
