#include "data/encoding/symbol_encoding.h"

#include <algorithm>
#include <unordered_map>

#include "core/error.h"
#include "data/tokenizers/symbol_vocab.h"

namespace tn {

namespace {

using Splitter = void (*)(std::string_view, std::vector<std::string_view>&);

Splitter splitter(const TokenizerSpec& tokenizer) {
  switch (tokenizer.kind) {
    case TokenizerSpec::Kind::Char: return &split_code_points;
    case TokenizerSpec::Kind::ListOps: return &split_listops;
    case TokenizerSpec::Kind::Word:
    case TokenizerSpec::Kind::Gpt2: break;
  }
  throw ShapeError("[encode_symbols] the tokenizer has no symbol vocabulary");
}

/// The training split's symbol counts, each document cut to `keep` symbols first.
std::unordered_map<std::string, int64_t> count_symbols(const SentenceSplit& train, Splitter split, int64_t keep) {
  std::unordered_map<std::string, int64_t> counts;
  std::vector<std::string_view> symbols;
  for (const SentenceExample& row : train.rows)
    for (const std::string* text : {&row.a, &row.b}) {
      if (text == &row.b && !row.has_b) continue;
      split(*text, symbols);
      const size_t n = std::min(symbols.size(), static_cast<size_t>(keep));
      for (size_t i = 0; i < n; ++i) ++counts[std::string(symbols[i])];
    }
  return counts;
}

/// How every document of a task is encoded: the symbols of `split`, the first `keep` of them through
/// `vocab`, then <eos>. `closed`: a symbol outside the vocabulary is an error (ListOps' grammar),
/// else <unk>.
class DocumentEncoder {
 public:
  DocumentEncoder(const SymbolVocab& vocab, Splitter split, int64_t keep, bool closed)
      : vocab(vocab), split(split), keep(keep), closed(closed) {}

  /// Writes `text`'s ids into `ids` and counts its lengths, cut and unknown symbols into `out`;
  /// `from` and `row` locate an error.
  void encode(const std::string& text, const SentenceSplit& from, const SentenceExample& row, LabelledSequences& out,
              std::vector<int32_t>& ids) {
    split(text, symbols_);
    const auto n = std::min(static_cast<int64_t>(symbols_.size()), keep);
    out.source_lengths.push_back(static_cast<int64_t>(symbols_.size()));
    out.truncated += static_cast<int64_t>(symbols_.size()) > keep;
    out.symbols += n;
    ids.resize(static_cast<size_t>(n) + 1);
    for (int64_t i = 0; i < n; ++i) {
      const int32_t id = vocab.find(symbols_[i]);
      if (id < 0 && closed)
        throw DataError(from.file + ":" + std::to_string(row.line) + ": symbol `" + std::string(symbols_[i]) +
                        "` is not in the vocabulary built from the training split (" + std::to_string(vocab.size()) +
                        " symbols): the training file never uses it, or uses it fewer than data.tokenizer.min_freq "
                        "times; lower min_freq (ListOps: 1), or train on a file with every symbol of the task");
      out.unknown += id < 0;
      ids[i] = id < 0 ? SymbolVocab::kUnk : id;
    }
    ids[n] = SymbolVocab::kEos;
  }

 private:
  const SymbolVocab& vocab;
  Splitter split;
  int64_t keep;
  bool closed;
  std::vector<std::string_view> symbols_;  // scratch, reused from document to document
};

LabelledSequences encode_split(const SentenceSplit& split, DocumentEncoder& encoder) {
  LabelledSequences e = LabelledSequences::of(split);
  const bool pairs = std::any_of(split.rows.begin(), split.rows.end(), [](const auto& r) { return r.has_b; });
  for (const SentenceExample& row : split.rows) {
    encoder.encode(row.a, split, row, e, e.inputs.emplace_back());
    int64_t width = static_cast<int64_t>(e.inputs.back().size());
    if (pairs) {
      encoder.encode(row.b, split, row, e, e.seconds.emplace_back());
      width = std::max(width, static_cast<int64_t>(e.seconds.back().size()));
    }
    e.lengths.push_back(width);
    e.labels.push_back(row.label);
    e.targets.push_back(row.target);
    e.ids.push_back(row.id);
  }
  return e;
}

}  // namespace

EncodedData encode_symbols(const std::vector<SentenceSplit>& splits, const TokenizerSpec& tokenizer,
                           int64_t max_length) {
  if (max_length < 2) throw ShapeError("[encode_symbols] max_length " + std::to_string(max_length));
  if (splits.empty() || splits.front().role != SentenceSplit::Role::Train)
    throw ShapeError("[encode_symbols] the training split must come first");
  const Splitter split = splitter(tokenizer);
  const int64_t keep = max_length - 1;
  const SymbolVocab vocab = SymbolVocab::build(count_symbols(splits.front(), split, keep), tokenizer.min_freq);
  EncodedData out;
  out.vocabulary = vocab.symbols();
  out.pad = SymbolVocab::kPad;
  DocumentEncoder encoder{vocab, split, keep, tokenizer.kind == TokenizerSpec::Kind::ListOps};
  for (const SentenceSplit& s : splits) out.splits.push_back(encode_split(s, encoder));
  return out;
}

}  // namespace tn
