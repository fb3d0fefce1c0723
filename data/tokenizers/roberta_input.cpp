#include "data/tokenizers/roberta_input.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace tn {

void roberta_input(const std::vector<int32_t>& a, const std::vector<int32_t>* b, int64_t max_positions, int32_t bos,
                   int32_t eos, std::vector<int32_t>& out) {
  const int64_t specials = b ? 4 : 2;
  if (max_positions < specials + (b ? 2 : 1))
    throw ShapeError("[roberta_input] max_positions " + std::to_string(max_positions) + " cannot hold " +
                     (b ? "a pair" : "a text"));
  auto na = static_cast<int64_t>(a.size());
  auto nb = b ? static_cast<int64_t>(b->size()) : int64_t{0};
  const int64_t room = max_positions - specials;
  // Longest first: the overflow comes off the longer text until both are equal, then alternately.
  while (na + nb > room) {
    if (na >= nb) --na;
    else --nb;
  }
  out.clear();
  out.push_back(bos);
  out.insert(out.end(), a.begin(), a.begin() + na);
  out.push_back(eos);
  if (b) {
    out.push_back(eos);
    out.insert(out.end(), b->begin(), b->begin() + nb);
    out.push_back(eos);
  }
}

}  // namespace tn
