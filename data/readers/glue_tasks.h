#pragma once
// The GLUE task table (Wang et al. 2018): for each of the nine tasks, the layout of its .tsv files
// as the GLUE baseline's download_glue_data.py writes them, its labels, its metrics, and the file
// names of its leaderboard submission. datasets/README.md "GLUE" describes the layouts in prose; the
// reader (data/readers/glue.h) is the only code that interprets them.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tn {

/// The columns of one kind of GLUE file (train/dev, or test). Columns are 0-based; -1 = absent.
struct GlueLayout {
  bool header = true;     // the first line names the columns (skipped)
  int32_t columns = 0;    // tab-separated columns per row, header included
  int32_t id = -1;        // the example id ("index"); -1: the row's 0-based ordinal
  int32_t a = 0;          // sentence a
  int32_t b = -1;         // sentence b; -1 for single-sentence tasks
  int32_t label = -1;     // the label or score; -1 for unlabelled (test) files
};

/// One GLUE test file and the name its predictions take in a GLUE submission (the leaderboard's
/// expected file names).
struct GlueSubmission {
  std::string_view test_file;   // "test.tsv", "test_matched.tsv"
  std::string_view submission;  // "SST-2.tsv", "MNLI-m.tsv"
};

/// One GLUE task: files, labels, metrics, submission names.
struct GlueTask {
  std::string_view name;        // the GLUE name, as the folder is called: "SST-2", "MNLI"
  GlueLayout train, dev, test;  // train.tsv; the dev files; the test files
  /// Class k's label text in the files, k = 0..num_classes-1; empty for regression (STS-B).
  std::vector<std::string_view> labels;
  bool regression = false;               // STS-B: a float score in [target_min, target_max]
  double target_min = 0, target_max = 0;
  std::vector<std::string_view> metrics;  // in report order; the first is the task's main metric
  std::string_view train_file = "train.tsv";              // default data.train
  std::vector<std::string_view> dev_files = {"dev.tsv"};  // default data.valid, then extra dev splits
  std::vector<GlueSubmission> test_files;       // default data.test, then the extra test splits
  /// Outputs of the classifier head: the class count, or 1 for regression (as fairseq's
  /// sentence_prediction: --num-classes 1 for STS-B).
  int32_t num_classes() const { return regression ? 1 : static_cast<int32_t>(labels.size()); }
  bool pairs() const { return train.b >= 0; }
};

/// The nine GLUE tasks: CoLA, SST-2, MRPC, QQP, STS-B, MNLI, QNLI, RTE, WNLI (the leaderboard's
/// order, without the diagnostic AX).
const std::vector<GlueTask>& glue_tasks();

/// The task named exactly `name` (GLUE's spelling, case-sensitive), or nullptr.
const GlueTask* find_glue_task(std::string_view name);

/// The submission file name for predictions on `test_file` (a file name or path; only its last
/// component is compared, "glue/MNLI/test_mismatched.tsv" -> "MNLI-mm.tsv"), or "" when the file
/// is not one of the task's GLUE test files.
std::string glue_submission_file(const GlueTask& task, const std::string& test_file);

/// The header line of every GLUE submission file, without the newline: "index\tprediction".
inline constexpr std::string_view kGlueSubmissionHeader = "index\tprediction";

/// A classification prediction as a submission writes it: class k's label text (labels[k], e.g.
/// "entailment", "1"). Throws ShapeError for a regression task or a class outside
/// [0, num_classes).
std::string glue_class_text(const GlueTask& task, int32_t predicted_class);

/// A regression prediction as a submission writes it: the score clamped to
/// [target_min, target_max], with 3 decimals ("3.250"). Throws ShapeError for a classification
/// task or a non-finite score.
std::string glue_score_text(const GlueTask& task, double predicted_score);

}  // namespace tn
