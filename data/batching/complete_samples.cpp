#include "data/batching/complete_samples.h"

#include <algorithm>

#include "core/error.h"

namespace tn {

PackedSamples pack_complete(const std::vector<std::vector<int32_t>>& lines, int64_t tokens_per_sample, int32_t bos,
                            int32_t eos) {
  if (tokens_per_sample < 3)
    throw ShapeError("[pack_complete] tokens_per_sample " + std::to_string(tokens_per_sample) + " < 3");
  PackedSamples out;
  int64_t current = 0;  // tokens in the open sample, 0 = none open
  auto close = [&] {
    if (current > 0) out.offsets.push_back(static_cast<int64_t>(out.tokens.size()));
    current = 0;
  };
  auto open = [&] {
    out.tokens.push_back(bos);
    current = 1;
  };
  for (const std::vector<int32_t>& line : lines) {
    if (line.empty()) continue;
    const auto n = static_cast<int64_t>(line.size());
    if (n + 2 > tokens_per_sample) {  // a long line: the line and its </s> cut into samples of their own
      close();
      const int64_t piece = tokens_per_sample - 1;
      for (int64_t start = 0; start < n + 1; start += piece) {
        const int64_t end = std::min(n + 1, start + piece);
        open();
        out.tokens.insert(out.tokens.end(), line.begin() + start, line.begin() + std::min(end, n));
        if (end == n + 1) out.tokens.push_back(eos);
        current += end - start;
        close();
      }
      continue;
    }
    if (current > 0 && current + n + 1 > tokens_per_sample) close();
    if (current == 0) open();
    out.tokens.insert(out.tokens.end(), line.begin(), line.end());
    out.tokens.push_back(eos);
    current += n + 1;
  }
  close();
  return out;
}

}  // namespace tn
