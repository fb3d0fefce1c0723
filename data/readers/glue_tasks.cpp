#include "data/readers/glue_tasks.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/error.h"

namespace tn {

// Column positions follow the files download_glue_data.py writes (checked against the staged
// CoLA, SST-2, MRPC, RTE, STS-B, WNLI and QNLI files) and, for QQP and MNLI, which are not staged,
// against two independent readers of the same files:
//  - fairseq examples/roberta/preprocess_GLUE_tasks.sh (1-based `cut -f` columns): QQP inputs 4 5,
//    label 6, test inputs 2 3, and rows with NF != 6 dropped from train/dev; MNLI inputs 9 10 in
//    every split, label 12 in train and 16 in dev_matched/dev_mismatched;
//  - the HF transformers GLUE processors (data/processors/glue.py): QqpProcessor reads
//    line[3], line[4], label line[5] (test: line[1], line[2]) and skips rows too short to index;
//    MnliProcessor reads line[8], line[9] and the label as line[-1].
// So QQP train/dev: `id qid1 qid2 question1 question2 is_duplicate`, test: `id question1 question2`;
// MNLI train: 12 columns ending in `label1 gold_label`, dev: 16 ending in `label1..label5
// gold_label`, test: the first 10 (through `sentence2`).
//
// Label order. Binary tasks keep the files' "0"/"1". QNLI and RTE use [entailment,
// not_entailment], the order of the GLUE processors' get_labels(). MNLI uses fairseq's RoBERTa
// order, contradiction = 0, neutral = 1, entailment = 2: fairseq-preprocess builds the label
// dictionary of train.label by frequency (preprocess_GLUE_tasks.sh), and fairseq's
// examples/roberta/README.md evaluates roberta.large.mnli with
// label_map = {0: 'contradiction', 1: 'neutral', 2: 'entailment'}. (HF's processors order them
// [contradiction, entailment, neutral], HF datasets' glue/mnli [entailment, neutral,
// contradiction]; a checkpoint's head is only portable under the order it was trained with.)
const std::vector<GlueTask>& glue_tasks() {
  // GlueLayout: {header, columns, id, a, b, label}
  static const std::vector<GlueTask> tasks = {
      {.name = "CoLA",
       .train = {false, 4, -1, 3, -1, 1},  // source, label, original label ("*" or empty), sentence
       .dev = {false, 4, -1, 3, -1, 1},
       .test = {true, 2, 0, 1, -1, -1},  // index, sentence
       .labels = {"0", "1"},
       .metrics = {"mcc"},
       .test_files = {{"test.tsv", "CoLA.tsv"}}},
      {.name = "SST-2",
       .train = {true, 2, -1, 0, -1, 1},  // sentence, label
       .dev = {true, 2, -1, 0, -1, 1},
       .test = {true, 2, 0, 1, -1, -1},  // index, sentence
       .labels = {"0", "1"},
       .metrics = {"accuracy"},
       .test_files = {{"test.tsv", "SST-2.tsv"}}},
      {.name = "MRPC",
       .train = {true, 5, -1, 3, 4, 0},  // Quality, #1 ID, #2 ID, #1 String, #2 String (BOM first)
       .dev = {true, 5, -1, 3, 4, 0},
       .test = {true, 5, 0, 3, 4, -1},  // index, #1 ID, #2 ID, #1 String, #2 String
       .labels = {"0", "1"},
       .metrics = {"accuracy", "f1"},
       .test_files = {{"test.tsv", "MRPC.tsv"}}},
      {.name = "QQP",
       .train = {true, 6, 0, 3, 4, 5},  // id, qid1, qid2, question1, question2, is_duplicate
       .dev = {true, 6, 0, 3, 4, 5},
       .test = {true, 3, 0, 1, 2, -1},  // id, question1, question2
       .labels = {"0", "1"},
       .metrics = {"accuracy", "f1"},
       .test_files = {{"test.tsv", "QQP.tsv"}}},
      {.name = "STS-B",
       // index, genre, filename, year, old_index, source1, source2, sentence1, sentence2, score
       .train = {true, 10, 0, 7, 8, 9},
       .dev = {true, 10, 0, 7, 8, 9},
       .test = {true, 9, 0, 7, 8, -1},  // the same without score
       .labels = {},
       .regression = true,
       .target_min = 0.0,
       .target_max = 5.0,
       .metrics = {"pearson", "spearman"},
       .test_files = {{"test.tsv", "STS-B.tsv"}}},
      {.name = "MNLI",
       // index, promptID, pairID, genre, sentence1_binary_parse, sentence2_binary_parse,
       // sentence1_parse, sentence2_parse, sentence1, sentence2, then train: label1, gold_label;
       // dev: label1..label5, gold_label; test: nothing more.
       .train = {true, 12, 0, 8, 9, 11},
       .dev = {true, 16, 0, 8, 9, 15},
       .test = {true, 10, 0, 8, 9, -1},
       .labels = {"contradiction", "neutral", "entailment"},
       .metrics = {"accuracy"},
       .dev_files = {"dev_matched.tsv", "dev_mismatched.tsv"},
       .test_files = {{"test_matched.tsv", "MNLI-m.tsv"}, {"test_mismatched.tsv", "MNLI-mm.tsv"}}},
      {.name = "QNLI",
       .train = {true, 4, 0, 1, 2, 3},  // index, question, sentence, label
       .dev = {true, 4, 0, 1, 2, 3},
       .test = {true, 3, 0, 1, 2, -1},
       .labels = {"entailment", "not_entailment"},
       .metrics = {"accuracy"},
       .test_files = {{"test.tsv", "QNLI.tsv"}}},
      {.name = "RTE",
       .train = {true, 4, 0, 1, 2, 3},  // index, sentence1, sentence2, label
       .dev = {true, 4, 0, 1, 2, 3},
       .test = {true, 3, 0, 1, 2, -1},
       .labels = {"entailment", "not_entailment"},
       .metrics = {"accuracy"},
       .test_files = {{"test.tsv", "RTE.tsv"}}},
      {.name = "WNLI",
       .train = {true, 4, 0, 1, 2, 3},  // index, sentence1, sentence2, label
       .dev = {true, 4, 0, 1, 2, 3},
       .test = {true, 3, 0, 1, 2, -1},
       .labels = {"0", "1"},
       .metrics = {"accuracy"},
       .test_files = {{"test.tsv", "WNLI.tsv"}}},
  };
  return tasks;
}

const GlueTask* find_glue_task(std::string_view name) {
  for (const GlueTask& task : glue_tasks())
    if (task.name == name) return &task;
  return nullptr;
}

std::string glue_submission_file(const GlueTask& task, const std::string& test_file) {
  const std::string file_name = std::filesystem::path(test_file).filename().string();
  for (const GlueSubmission& entry : task.test_files)
    if (entry.test_file == file_name) return std::string(entry.submission);
  return "";
}

std::string glue_class_text(const GlueTask& task, int32_t predicted_class) {
  if (task.regression)
    throw ShapeError("[glue_class_text] " + std::string(task.name) + " is a regression task");
  if (predicted_class < 0 || predicted_class >= task.num_classes())
    throw ShapeError("[glue_class_text] class " + std::to_string(predicted_class) + " outside [0, " +
                     std::to_string(task.num_classes()) + ") for " + std::string(task.name));
  return std::string(task.labels[static_cast<size_t>(predicted_class)]);
}

std::string glue_score_text(const GlueTask& task, double predicted_score) {
  if (!task.regression)
    throw ShapeError("[glue_score_text] " + std::string(task.name) + " is a classification task");
  if (!std::isfinite(predicted_score))
    throw ShapeError("[glue_score_text] the score is not finite");
  const double clamped = std::fmin(std::fmax(predicted_score, task.target_min), task.target_max);
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", clamped);
  return text;
}

}  // namespace tn
