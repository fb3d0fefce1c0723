#pragma once
// The `glue` reader's data section: one GLUE task's .tsv files (datasets/README.md "GLUE"; layouts in
// data/readers/glue_tasks.h), and where the GPT-2 BPE files a GLUE task encodes them with live.
//
//   data: {reader: glue, task: MNLI, dir: glue/MNLI, train: train.tsv, valid: dev_matched.tsv,
//          extra_valid: [dev_mismatched.tsv], test: test_matched.tsv,
//          extra_test: [test_mismatched.tsv], max_positions: 512, bpe_dir: gpt2_bpe,
//          dict: gpt2_bpe/dict.txt}
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/platform/config/json_section.h"
#include "data/readers/glue_tasks.h"
#include "data/readers/reader.h"

namespace tn {

class GlueSpec final : public DataSpec, public SentenceSource {
 public:
  const GlueTask* task = nullptr;  // data.task, a GLUE name; never null once resolved
  /// The task's folder, relative to the data root unless absolute; default "glue/<task>".
  std::string dir;
  /// File names inside `dir` (an absolute path is taken as is). "" = not read. Defaults from the
  /// task table: train.tsv, dev.tsv (MNLI dev_matched.tsv), test.tsv (MNLI test_matched.tsv).
  std::string train, valid, test;
  /// Further dev and test files, each its own split named by the file's stem. Default: MNLI's
  /// dev_mismatched.tsv and test_mismatched.tsv, none for the other tasks.
  std::vector<std::string> extra_valid, extra_test;
  /// The longest encoded example (pair with its special tokens) the model is given, >= 2.
  int64_t max_positions = 512;
  /// The GPT-2 BPE folder (encoder.json, vocab.bpe) and the fairseq dictionary, relative to the
  /// data root unless absolute. Only stored and resolved here; the task loads the tokenizer.
  std::string bpe_dir = "gpt2_bpe";
  std::string dict = "gpt2_bpe/dict.txt";

  std::string reader() const override { return "glue"; }
  nlohmann::ordered_json to_json() const override;
  bool equals(const DataSpec& other) const override;
  int64_t tokens_per_sample() const override { return max_positions; }
  std::string length_key() const override { return "max_positions"; }

  std::string dataset_name() const override { return std::string(task->name); }
  bool pairs() const override { return task->pairs(); }
  SentenceTarget target() const override;
  /// train, valid, extra_valid..., test, extra_test... (those configured), each through
  /// read_glue_split (data/readers/glue.h), which throws DataError naming file or file:line.
  std::vector<SentenceSplit> read_sentences(const std::string& data_root) const override;
  /// GPT-2 BPE from bpe_dir with the dictionary `dict`.
  TokenizerSpec text_tokenizer() const override;
  /// glue_submission_file of the task ("SST-2.tsv", "MNLI-mm.tsv").
  std::string submission_name(const std::string& file) const override;
  /// glue_class_text or glue_score_text.
  std::string prediction_text(int32_t predicted_class, double score) const override;

  /// The path of a split file: `file` inside `dir`, both relative to `data_root` unless absolute.
  std::string file_path(const std::string& data_root, const std::string& file) const;
  /// The BPE folder and the dictionary file, resolved against `data_root`.
  std::string bpe_path(const std::string& data_root) const;
  std::string dict_path(const std::string& data_root) const;
};

/// Resolves the glue keys of a `data:` section. `task` is required and must be a GLUE name as
/// spelled in glue_tasks() (an unknown or wrongly cased name is a ConfigIssue naming the nearest
/// task); file keys take null for "not read"; extra split names must be distinct. Throws
/// ConfigIssue at the full key path with the fix.
std::shared_ptr<const DataSpec> resolve_glue_spec(const JsonSection& section);

}  // namespace tn
