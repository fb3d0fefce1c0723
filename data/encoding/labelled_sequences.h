#pragma once
// The examples of a classification task as the model takes them: sequences of ids with labels.
// An input encoding makes them from a reader's texts: RoBERTa BPE (roberta_encoding.h: GLUE, a
// pair joined into one sequence) or a symbol vocabulary (symbol_encoding.h: LRA characters and
// ListOps tokens, a pair kept as two documents for the dual encoder); or from a reader's images
// (image_encoding.h: pixel levels as ids, LRA Image and Pathfinder). The classification core
// (sequence_classification.h) batches, trains on and scores them whatever their origin.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "data/readers/reader.h"

namespace tn {

/// One split, encoded; vectors are parallel, one entry per example, in the reader's order.
struct LabelledSequences {
  std::string name;  // the split's name ("valid", "dev_mismatched")
  SentenceSplit::Role role = SentenceSplit::Role::Train;
  std::string file;
  bool labelled = true;
  std::vector<std::vector<int32_t>> inputs;   // model ids
  std::vector<std::vector<int32_t>> seconds;  // a pair's second document (dual encoder); else empty
  std::vector<int64_t> lengths;               // positions the example needs in a batch row: its
                                              // longest document
  std::vector<int32_t> labels;                // class, or -1
  std::vector<double> targets;                // regression target, or NaN
  std::vector<std::string> ids;               // the file's example ids
  int64_t truncated = 0;                      // documents cut to the longest allowed length
  int64_t skipped = 0;                        // rows the reader dropped (SentenceSplit::skipped)
  /// For `data stats`: each document's length in tokens before truncation (a pair's two documents
  /// both), and the symbols read and those outside the vocabulary (<unk>).
  std::vector<int64_t> source_lengths;
  int64_t symbols = 0, unknown = 0;

  /// An empty split named, placed and labelled as `split` (its examples still to encode).
  static LabelledSequences of(const SentenceSplit& split) {
    LabelledSequences e;
    e.name = split.name;
    e.role = split.role;
    e.file = split.file;
    e.labelled = split.labelled;
    e.skipped = split.skipped;
    return e;
  }
  size_t size() const { return inputs.size(); }
  bool dual() const { return !seconds.empty(); }

  /// `n` examples (n <= size()) spread evenly over the split (example i × size / n), for an
  /// evaluation of part of it: a file sorted by label (IMDB's negatives, then its positives) gives
  /// both. The `data stats` counts (source_lengths, symbols, unknown) are left out.
  LabelledSequences spread(size_t n) const {
    LabelledSequences e;
    e.name = name;
    e.role = role;
    e.file = file;
    e.labelled = labelled;
    for (size_t k = 0; k < n; ++k) {
      const size_t i = k * size() / n;
      e.inputs.push_back(inputs[i]);
      if (dual()) e.seconds.push_back(seconds[i]);
      e.lengths.push_back(lengths[i]);
      if (!labels.empty()) e.labels.push_back(labels[i]);
      if (!targets.empty()) e.targets.push_back(targets[i]);
      if (!ids.empty()) e.ids.push_back(ids[i]);
    }
    return e;
  }
};

/// What the classification core needs of the dataset beyond its examples: its name, its label
/// space and metrics, and how a prediction is written in its submission format.
struct DatasetInfo {
  std::string name;       // "SST-2", "CIFAR-10"
  SentenceTarget target;  // classes (names, metrics) or the regression range
  /// The file name predictions on the split read from `file` take ("MNLI-m.tsv"); "" for none.
  std::function<std::string(const std::string& file)> submission_name;
  /// A prediction as the submission writes it: the class's label text, or the regression score.
  std::function<std::string(int32_t predicted_class, double score)> prediction_text;
};

/// The DatasetInfo of a sentence reader (GLUE, the LRA text tasks); `source` must outlive it.
inline DatasetInfo sentence_dataset_info(const SentenceSource& source) {
  return DatasetInfo{source.dataset_name(), source.target(),
                     [&source](const std::string& file) { return source.submission_name(file); },
                     [&source](int32_t c, double score) { return source.prediction_text(c, score); }};
}

/// Every split of a task encoded, train first, with the vocabulary the ids index.
struct EncodedData {
  std::vector<LabelledSequences> splits;
  std::vector<std::string> vocabulary;  // the checkpoint's transnormer.vocab
  int32_t pad = 0;                      // the padding id
  DatasetInfo dataset;
};

}  // namespace tn
