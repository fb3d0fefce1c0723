#include "data/metrics/unigram.h"

#include <cmath>
#include <string>

#include "core/error.h"

namespace tn {
namespace {

void check_ids(const std::vector<int32_t>& stream, int64_t vocab_size, const char* which) {
  for (size_t i = 0; i < stream.size(); ++i)
    if (stream[i] < 0 || stream[i] >= vocab_size)
      throw ShapeError(std::string("[unigram_ppl] ") + which + " id " + std::to_string(stream[i]) +
                       " at position " + std::to_string(i) + " is outside [0, " +
                       std::to_string(vocab_size) + ")");
}

/// numpy's pairwise summation (pairwise_sum_DOUBLE): blocks of <= 128 summed with 8 accumulators.
double pairwise_sum(const double* values, int64_t n) {
  if (n < 8) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += values[i];
    return sum;
  }
  if (n <= 128) {
    double acc[8];
    for (int k = 0; k < 8; ++k) acc[k] = values[k];
    int64_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int k = 0; k < 8; ++k) acc[k] += values[i + k];
    double sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; ++i) sum += values[i];
    return sum;
  }
  int64_t half = n / 2;
  half -= half % 8;
  return pairwise_sum(values, half) + pairwise_sum(values + half, n - half);
}

}  // namespace

double unigram_ppl(const std::vector<int32_t>& train_stream, const std::vector<int32_t>& eval_stream,
                   int64_t vocab_size) {
  if (vocab_size < 1)
    throw ShapeError("[unigram_ppl] vocab_size is " + std::to_string(vocab_size) + ", expected >= 1");
  if (eval_stream.size() < 2)
    throw ShapeError("[unigram_ppl] eval stream has " + std::to_string(eval_stream.size()) +
                     " ids; need at least 2 (one target)");
  check_ids(train_stream, vocab_size, "train");
  check_ids(eval_stream, vocab_size, "eval");

  std::vector<double> counts(static_cast<size_t>(vocab_size), 0.0);
  for (int32_t id : train_stream) counts[id] += 1.0;
  const double log_total = std::log(static_cast<double>(train_stream.size()) +
                                    static_cast<double>(vocab_size));
  std::vector<double> log_p(counts.size());
  for (size_t w = 0; w < counts.size(); ++w) log_p[w] = std::log(counts[w] + 1.0) - log_total;

  std::vector<double> target_log_p(eval_stream.size() - 1);
  for (size_t i = 1; i < eval_stream.size(); ++i) target_log_p[i - 1] = log_p[eval_stream[i]];
  const auto n = static_cast<int64_t>(target_log_p.size());
  return std::exp(-(pairwise_sum(target_log_p.data(), n) / static_cast<double>(n)));
}

}  // namespace tn
