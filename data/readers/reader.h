#pragma once
// What a dataset reader is: a typed `data:` section (DataSpec), resolved and validated from the
// spec by the reader registry (data/readers/registry.h), that knows how to read its files. What
// a reader yields depends on the data's kind; a task asks for the kind it consumes (TextSource
// for running text, SentenceSource for labelled sentences or sentence pairs, ImageSource for
// grayscale images) and refuses a reader that yields another.
#include <cmath>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data/tokenizers/tokenizer_spec.h"

namespace tn {

/// A reader's resolved `data:` section. Immutable once resolved; compared and written back as
/// the run's config.yaml.
class DataSpec {
 public:
  virtual ~DataSpec() = default;
  /// The registry name of the reader ("wikitext"), the value of `data.reader`.
  virtual std::string reader() const = 0;
  /// The resolved section with every default filled in, `reader` first; resolving it again
  /// gives an equal spec.
  virtual nlohmann::ordered_json to_json() const = 0;
  /// Same reader and same resolved values.
  virtual bool equals(const DataSpec& other) const = 0;
  /// Tokens per sample: the longest sequence the model is given (`data.seq_len`).
  virtual int64_t tokens_per_sample() const = 0;
  /// The data key that sets tokens_per_sample ("seq_len", "max_length", ...), "" when the
  /// format fixes it (CIFAR-10's 1,024 pixels): what an error about the length names.
  virtual std::string length_key() const { return "seq_len"; }
};

/// Running text split into lines, as a language-model task reads it.
struct TextSplits {
  std::vector<std::string> train, valid, test;  // lines; valid/test empty when not configured
  /// Where each split came from (paths, or "FILE (last N lines)"), for summary.json; "" = none.
  std::string train_file, valid_file, test_file;
};

/// A reader that yields running text (WikiText).
class TextSource {
 public:
  virtual ~TextSource() = default;
  /// Reads the configured splits, relative paths taken from `data_root`. Throws DataError naming
  /// the file (missing, unreadable, not text) with the fix; ConfigError for a split setting that
  /// the data cannot satisfy.
  virtual TextSplits read_text(const std::string& data_root) const = 0;
  /// How the text is to be tokenized (`data.tokenizer`): words, or GPT-2 BPE.
  virtual TokenizerSpec text_tokenizer() const = 0;
};

/// One labelled (or, in a test split, unlabelled) example of a sentence-level task: a single text
/// or a pair, with a class or a real-valued target.
struct SentenceExample {
  std::string id;        // the file's id or index column; the row's 0-based ordinal when it has none
  std::string a, b;      // the text(s), exactly as in the file; b is "" when has_b is false
  bool has_b = false;    // a sentence pair
  int32_t label = -1;    // class in [0, num_classes); -1 for regression and unlabelled rows
  double target = NAN;   // regression target; NaN for classification and unlabelled rows
  int64_t line = 0;      // 1-based line of the row in its file, for messages
};

/// What the examples' labels are and how predictions are scored.
struct SentenceTarget {
  bool regression = false;
  /// Outputs of the classifier head: the class count (>= 2), or 1 for regression.
  int32_t num_classes = 0;
  std::vector<std::string> label_names;  // class k's label text in the files; empty for regression
  double target_min = NAN, target_max = NAN;  // the regression target's range; NaN for classes
  std::vector<std::string> metrics;           // metric names in report order (data/metrics/classification_metrics.h, regression_metrics.h)
};

/// One split of a sentence-level dataset.
struct SentenceSplit {
  enum class Role { Train, Valid, Test };
  /// "train", "valid", "test" for the configured splits; an extra split is named by its file's
  /// stem ("dev_mismatched", "test_mismatched").
  std::string name;
  Role role = Role::Train;
  std::string file;       // the path read, for messages and summary.json
  bool labelled = true;   // false for test splits: every label is -1 and every target NaN
  std::vector<SentenceExample> rows;  // in file order
  int64_t skipped = 0;    // malformed rows dropped by a documented rule (QQP only), also logged
};

/// A reader that yields labelled sentences or sentence pairs (GLUE; later LRA's text tasks).
class SentenceSource {
 public:
  virtual ~SentenceSource() = default;
  /// The dataset's name for logs and reports ("SST-2").
  virtual std::string dataset_name() const = 0;
  /// Whether examples are pairs (every row has_b).
  virtual bool pairs() const = 0;
  /// The label space and the metric names.
  virtual SentenceTarget target() const = 0;
  /// Reads the configured splits (train first, then the valid, then the test splits), relative
  /// paths taken from `data_root`. Throws DataError naming the file (missing, unreadable, not
  /// UTF-8, empty) or `file:line` (a malformed row, an unknown label) with the fix.
  virtual std::vector<SentenceSplit> read_sentences(const std::string& data_root) const = 0;
  /// How the texts are to be tokenized (GPT-2 BPE and its dictionary, for GLUE).
  virtual TokenizerSpec text_tokenizer() const = 0;
  /// The file name that predictions on the split read from `file` take in the dataset's
  /// submission format ("MNLI-m.tsv"), or "" when it has none.
  virtual std::string submission_name(const std::string& file) const = 0;
  /// A prediction as the submission writes it: the class's label text, or the regression score.
  virtual std::string prediction_text(int32_t predicted_class, double score) const = 0;
};

/// One image of a classification dataset, grayscale as the official loader makes it.
struct ImageExample {
  std::string id;               // where it came from: "data_batch_3.bin#417", "imgs/0/sample_12.png"
  std::vector<uint8_t> pixels;  // height · width levels, row-major, 0 black to 255 white
  int32_t label = -1;           // class in [0, num_classes); -1 when unlabelled
  int64_t line = 0;             // 1-based record or metadata line, for messages
};

/// One split of an image dataset.
struct ImageSplit {
  std::string name;  // "train", "valid", "test"
  SentenceSplit::Role role = SentenceSplit::Role::Train;
  std::string file;  // the file(s) read, for messages and summary.json
  bool labelled = true;
  std::vector<ImageExample> rows;  // in the order read
};

/// A reader that yields grayscale images with classes (LRA Image on CIFAR-10, Pathfinder). The
/// model reads each image as a sequence of height · width pixel levels in row-major order (the
/// levels are the model's ids; model.input: {kind: linear} maps them to values, docs/model.md).
class ImageSource {
 public:
  virtual ~ImageSource() = default;
  /// The dataset's name for logs and reports ("CIFAR-10").
  virtual std::string dataset_name() const = 0;
  virtual int64_t width() const = 0;
  virtual int64_t height() const = 0;
  /// Class k's name ("airplane"; "0", "1" for Pathfinder's negative and positive).
  virtual std::vector<std::string> label_names() const = 0;
  /// Reads the configured splits (train first, then valid, then test), relative paths taken from
  /// `data_root`. Throws DataError naming the file and record or line with the fix.
  virtual std::vector<ImageSplit> read_images(const std::string& data_root) const = 0;
};

}  // namespace tn
