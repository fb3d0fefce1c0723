#include "data/encoding/roberta_encoding.h"

#include "data/tokenizers/roberta_input.h"

namespace tn {

std::vector<LabelledSequences> encode_roberta(const std::vector<SentenceSplit>& splits, const Gpt2Codec& codec,
                                              int64_t max_positions) {
  std::vector<LabelledSequences> out;
  std::vector<int32_t> a, b;
  for (const SentenceSplit& split : splits) {
    LabelledSequences e = LabelledSequences::of(split);
    const size_t n = split.rows.size();
    e.inputs.resize(n);
    e.lengths.resize(n);
    e.labels.resize(n);
    e.targets.resize(n);
    e.ids.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const SentenceExample& row = split.rows[i];
      a.clear();
      codec.encode_line(row.a, a);
      int64_t full = static_cast<int64_t>(a.size()) + 2;
      if (row.has_b) {
        b.clear();
        codec.encode_line(row.b, b);
        full += static_cast<int64_t>(b.size()) + 2;
      }
      roberta_input(a, row.has_b ? &b : nullptr, max_positions, codec.dict.bos(), codec.dict.eos(), e.inputs[i]);
      e.truncated += full > max_positions;
      e.source_lengths.push_back(full);
      e.symbols += full;
      e.lengths[i] = static_cast<int64_t>(e.inputs[i].size());
      e.labels[i] = row.label;
      e.targets[i] = row.target;
      e.ids[i] = row.id;
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace tn
