// The glue reader: the real GLUE tasks under <data root>/glue read with the published row and
// label counts and rows equal to the files' text; QQP and MNLI (not staged) on small files in
// their exact layouts; and every malformed input a DataError naming file:line.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/platform/config/json_section.h"
#include "core/error.h"
#include "data/readers/glue.h"
#include "data/readers/glue_spec.h"
#include "data/readers/registry.h"
#include "tests/glue_fixtures.h"
#include "tests/temp_dir.h"
#include "tests/test_paths.h"

using namespace tn;
using nlohmann::json;

namespace {

const GlueTask& task_named(const std::string& name) {
  const GlueTask* task = find_glue_task(name);
  REQUIRE_MESSAGE(task != nullptr, "no GLUE task " << name);
  return *task;
}

std::string glue_dir(const std::string& task) { return test::data_root() + "/glue/" + task; }

/// The GLUE file must be in the data root (scripts/setup.sh fetches it): a missing one fails the
/// test rather than skipping it.
void require_present(const std::string& task, const std::string& file) {
  const std::string path = glue_dir(task) + "/" + file;
  INFO(path << " is not present; run scripts/fetch_data.sh or set TRANSNORMER_DATA");
  REQUIRE(std::filesystem::exists(path));
}

/// The file's lines, read independently of the reader: '\n'-split, BOM and '\r' kept.
std::vector<std::string> raw_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> tab_fields(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
    fields.push_back(line.substr(start, tab - start));
  fields.push_back(line.substr(start));
  return fields;
}

/// The row equals its line's fields at the layout's columns.
void check_row_is_line(const SentenceExample& row, const std::string& line, const GlueLayout& layout) {
  const std::vector<std::string> fields = tab_fields(line);
  REQUIRE(fields.size() == static_cast<size_t>(layout.columns));
  CHECK(row.a == fields[static_cast<size_t>(layout.a)]);
  if (layout.b >= 0) CHECK(row.b == fields[static_cast<size_t>(layout.b)]);
  if (layout.id >= 0) CHECK(row.id == fields[static_cast<size_t>(layout.id)]);
}

std::map<int32_t, int64_t> label_counts(const SentenceSplit& split) {
  std::map<int32_t, int64_t> counts;
  for (const SentenceExample& row : split.rows) ++counts[row.label];
  return counts;
}

/// Reads one real file and checks its row count, that the first and last rows equal the file's
/// first and last data lines, and the labelling.
SentenceSplit check_real(const std::string& task_name, GlueFileKind kind, const std::string& file, size_t rows) {
  const GlueTask& task = task_named(task_name);
  const std::string path = glue_dir(task_name) + "/" + file;
  const SentenceSplit split = read_glue_split(task, kind, path);
  CAPTURE(path);
  CHECK(split.file == path);
  CHECK(split.skipped == 0);
  REQUIRE(split.rows.size() == rows);
  const GlueLayout& layout = glue_layout(task, kind);
  const std::vector<std::string> lines = raw_lines(path);
  REQUIRE(lines.size() == rows + (layout.header ? 1 : 0));
  std::string first = lines[layout.header ? 1 : 0];
  if (!layout.header && first.starts_with("\xEF\xBB\xBF")) first.erase(0, 3);
  check_row_is_line(split.rows.front(), first, layout);
  check_row_is_line(split.rows.back(), lines.back(), layout);
  CHECK(split.rows.front().line == (layout.header ? 2 : 1));
  CHECK(split.rows.back().line == static_cast<int64_t>(lines.size()));
  CHECK(split.labelled == (kind != GlueFileKind::Test));
  for (const SentenceExample& row : split.rows) {
    CHECK(row.has_b == task.pairs());
    if (kind == GlueFileKind::Test) {
      CHECK(row.label == -1);
      CHECK(std::isnan(row.target));
    } else if (task.regression) {
      CHECK(row.label == -1);
      CHECK((row.target >= 0.0 && row.target <= 5.0));
    } else {
      CHECK((row.label >= 0 && row.label < task.num_classes()));
    }
  }
  return split;
}

std::string data_error(const GlueTask& task, GlueFileKind kind, const std::string& path) {
  try {
    read_glue_split(task, kind, path);
  } catch (const DataError& err) {
    return err.what();
  }
  FAIL("read without a DataError: " << path);
  return "";
}

std::string contains(const std::string& message, const std::string& part) {
  CHECK_MESSAGE(message.find(part) != std::string::npos, "\"" << part << "\" not in: " << message);
  return message;
}


}  // namespace

TEST_CASE("glue reader: the task table is complete and consistent") {
  CHECK(glue_tasks().size() == 9);
  for (const GlueTask& task : glue_tasks()) {
    CAPTURE(task.name);
    for (const GlueLayout* layout : {&task.train, &task.dev, &task.test}) {
      CHECK(layout->columns >= 2);
      CHECK(layout->a < layout->columns);
      CHECK(layout->b < layout->columns);
      CHECK(layout->id < layout->columns);
      CHECK(layout->label < layout->columns);
      CHECK((layout->b >= 0) == task.pairs());
    }
    CHECK(task.train.label >= 0);
    CHECK(task.dev.label >= 0);
    CHECK(task.test.label == -1);
    CHECK(!task.metrics.empty());
    CHECK(task.num_classes() == (task.regression ? 1 : static_cast<int32_t>(task.labels.size())));
    CHECK(!task.dev_files.empty());
    REQUIRE(!task.test_files.empty());
    CHECK(glue_submission_file(task, "some/dir/" + std::string(task.test_files.front().test_file)) ==
          task.test_files.front().submission);
  }
  CHECK(find_glue_task("sst-2") == nullptr);
  CHECK(glue_submission_file(task_named("MNLI"), "test_matched.tsv") == "MNLI-m.tsv");
  CHECK(glue_submission_file(task_named("MNLI"), "glue/MNLI/test_mismatched.tsv") == "MNLI-mm.tsv");
  CHECK(glue_submission_file(task_named("STS-B"), "test.tsv") == "STS-B.tsv");
  CHECK(glue_submission_file(task_named("RTE"), "dev.tsv") == "");
  CHECK(kGlueSubmissionHeader == "index\tprediction");
  CHECK(glue_class_text(task_named("RTE"), 1) == "not_entailment");
  CHECK(glue_class_text(task_named("MNLI"), 2) == "entailment");
  CHECK(glue_class_text(task_named("CoLA"), 0) == "0");
  CHECK(glue_score_text(task_named("STS-B"), 3.25) == "3.250");
  CHECK(glue_score_text(task_named("STS-B"), 5.7) == "5.000");
  CHECK_THROWS_AS(glue_class_text(task_named("MNLI"), 3), ShapeError);
  CHECK_THROWS_AS(glue_class_text(task_named("STS-B"), 0), ShapeError);
  CHECK_THROWS_AS(glue_score_text(task_named("SST-2"), 1.0), ShapeError);
  const std::vector<std::string_view> mcc = {"mcc"}, acc_f1 = {"accuracy", "f1"}, corr = {"pearson", "spearman"};
  CHECK(task_named("CoLA").metrics == mcc);
  CHECK(task_named("MRPC").metrics == acc_f1);
  CHECK(task_named("QQP").metrics == acc_f1);
  CHECK(task_named("STS-B").metrics == corr);
}

TEST_CASE("glue reader: SST-2 and CoLA read with the published counts") {
  require_present("SST-2", "train.tsv");
  {
    const auto train = check_real("SST-2", GlueFileKind::Train, "train.tsv", 67349);
    CHECK(label_counts(train) == std::map<int32_t, int64_t>{{0, 29780}, {1, 37569}});
    CHECK(train.rows.front().id == "0");
    CHECK(train.rows.back().id == "67348");
    const auto dev = check_real("SST-2", GlueFileKind::Dev, "dev.tsv", 872);
    CHECK(label_counts(dev) == std::map<int32_t, int64_t>{{0, 428}, {1, 444}});
    CHECK(dev.name == "valid");
    const auto test = check_real("SST-2", GlueFileKind::Test, "test.tsv", 1821);
    CHECK(test.rows.back().id == "1820");
  }
  require_present("CoLA", "train.tsv");
  {
    const auto train = check_real("CoLA", GlueFileKind::Train, "train.tsv", 8551);
    CHECK(label_counts(train) == std::map<int32_t, int64_t>{{0, 2528}, {1, 6023}});
    const auto dev = check_real("CoLA", GlueFileKind::Dev, "dev.tsv", 1043);
    CHECK(label_counts(dev) == std::map<int32_t, int64_t>{{0, 322}, {1, 721}});
    CHECK(dev.rows.front().line == 1);  // no header
    check_real("CoLA", GlueFileKind::Test, "test.tsv", 1063);
  }
}

TEST_CASE("glue reader: MRPC reads without its byte-order mark") {
  require_present("MRPC", "train.tsv");
  const std::string path = glue_dir("MRPC") + "/dev.tsv";
  REQUIRE(raw_lines(path).front().starts_with("\xEF\xBB\xBF"));  // the file has one
  const auto train = check_real("MRPC", GlueFileKind::Train, "train.tsv", 3668);
  CHECK(label_counts(train) == std::map<int32_t, int64_t>{{0, 1194}, {1, 2474}});
  const auto dev = check_real("MRPC", GlueFileKind::Dev, "dev.tsv", 408);
  CHECK(label_counts(dev) == std::map<int32_t, int64_t>{{0, 129}, {1, 279}});
  for (const auto* split : {&train, &dev})
    for (const SentenceExample& row : split->rows) {
      CHECK(row.a.find("\xEF\xBB\xBF") == std::string::npos);
      CHECK(row.id.find("\xEF\xBB\xBF") == std::string::npos);
    }
  // Quotes are text: the first dev pair's second sentence opens a quotation it never closes.
  CHECK(dev.rows.front().b.starts_with("\""));
  check_real("MRPC", GlueFileKind::Test, "test.tsv", 1725);

  // A BOM before a header-less first row (CoLA's layout) is removed from the row too.
  const test::TempDir tmp("glue_bom");
  const std::string cola = tmp.write("train.tsv", "\xEF\xBB\xBFsrc\t1\t\tA sentence.\nsrc\t0\t*\tSentence a.\n");
  const SentenceSplit split = read_glue_split(task_named("CoLA"), GlueFileKind::Train, cola);
  REQUIRE(split.rows.size() == 2);
  CHECK(split.rows[0].a == "A sentence.");
  CHECK(split.rows[0].label == 1);
  CHECK(split.rows[1].id == "1");
}

TEST_CASE("glue reader: RTE, STS-B, WNLI and QNLI read with the published counts") {
  require_present("RTE", "train.tsv");
  {
    const auto train = check_real("RTE", GlueFileKind::Train, "train.tsv", 2490);
    CHECK(label_counts(train) == std::map<int32_t, int64_t>{{0, 1249}, {1, 1241}});
    const auto dev = check_real("RTE", GlueFileKind::Dev, "dev.tsv", 277);
    CHECK(label_counts(dev) == std::map<int32_t, int64_t>{{0, 146}, {1, 131}});  // entailment, not_entailment
    check_real("RTE", GlueFileKind::Test, "test.tsv", 3000);
  }
  require_present("STS-B", "train.tsv");
  {
    const auto train = check_real("STS-B", GlueFileKind::Train, "train.tsv", 5749);
    CHECK(train.rows.front().target == 5.0);
    CHECK(train.rows.front().id == "0");
    check_real("STS-B", GlueFileKind::Dev, "dev.tsv", 1500);
    check_real("STS-B", GlueFileKind::Test, "test.tsv", 1379);
  }
  require_present("WNLI", "train.tsv");
  {
    const auto train = check_real("WNLI", GlueFileKind::Train, "train.tsv", 635);
    CHECK(label_counts(train) == std::map<int32_t, int64_t>{{0, 323}, {1, 312}});
    const auto dev = check_real("WNLI", GlueFileKind::Dev, "dev.tsv", 71);
    CHECK(label_counts(dev) == std::map<int32_t, int64_t>{{0, 40}, {1, 31}});
    check_real("WNLI", GlueFileKind::Test, "test.tsv", 146);
  }
  require_present("QNLI", "dev.tsv");
  {
    const auto dev = check_real("QNLI", GlueFileKind::Dev, "dev.tsv", 5463);
    CHECK(label_counts(dev) == std::map<int32_t, int64_t>{{0, 2702}, {1, 2761}});
    check_real("QNLI", GlueFileKind::Test, "test.tsv", 5463);
  }
}

TEST_CASE("glue reader: the spec reads every configured split, and QNLI without train") {
  require_present("QNLI", "dev.tsv");
  const auto spec = resolve_data_spec(JsonSection(json{{"reader", "glue"}, {"task", "QNLI"}, {"train", nullptr}}, "data"));
  const auto& source = dynamic_cast<const SentenceSource&>(*spec);
  const std::vector<SentenceSplit> splits = source.read_sentences(test::data_root());
  REQUIRE(splits.size() == 2);
  CHECK(splits[0].name == "valid");
  CHECK(splits[0].role == SentenceSplit::Role::Valid);
  CHECK(splits[0].file == test::data_root() + "/glue/QNLI/dev.tsv");
  CHECK(splits[1].name == "test");
  CHECK(splits[1].role == SentenceSplit::Role::Test);
  CHECK(!splits[1].labelled);
  CHECK(source.dataset_name() == "QNLI");
  CHECK(source.pairs());
  const SentenceTarget target = source.target();
  CHECK(!target.regression);
  CHECK(target.num_classes == 2);
  CHECK(target.label_names == std::vector<std::string>{"entailment", "not_entailment"});
  CHECK(target.metrics == std::vector<std::string>{"accuracy"});
  CHECK(std::isnan(target.target_min));
}

TEST_CASE("glue reader: QQP in its layout, with malformed train/dev rows skipped and counted") {
  const test::TempDir tmp("glue_qqp");
  const std::string header = "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n";
  tmp.write("train.tsv", header +
                             "0\t1\t2\tHow do I bake bread?\tWhat is a good bread recipe?\t1\n"
                             "1\t3\t4\tWhy do cats purr?\tHow tall is a giraffe?\t0\n"
                             "2\t5\t6\tA question broken by a newline\n"  // a row cut in two:
                             "that goes on here?\tIs it?\t0\n"            // both halves are skipped
                             "3\t7\t8\t\"Quoted\" questions stay as written?\tDo they?\t1\n");
  tmp.write("dev.tsv", header + "10\t11\t12\tIs water wet?\tIs fire hot?\t0\n");
  tmp.write("test.tsv", "id\tquestion1\tquestion2\n0\tWhat is a test?\tWhy test?\n1\tOne more?\tYes?\n");
  const auto spec = resolve_data_spec(
      JsonSection(json{{"reader", "glue"}, {"task", "QQP"}, {"dir", tmp.path.string()}}, "data"));
  const std::vector<SentenceSplit> splits = dynamic_cast<const SentenceSource&>(*spec).read_sentences("/nonexistent");
  REQUIRE(splits.size() == 3);
  const SentenceSplit& train = splits[0];
  CHECK(train.skipped == 2);
  REQUIRE(train.rows.size() == 3);
  CHECK(train.rows[0].id == "0");
  CHECK(train.rows[0].a == "How do I bake bread?");
  CHECK(train.rows[0].b == "What is a good bread recipe?");
  CHECK(train.rows[0].label == 1);
  CHECK(train.rows[2].id == "3");
  CHECK(train.rows[2].a == "\"Quoted\" questions stay as written?");
  CHECK(train.rows[2].line == 6);
  CHECK(splits[1].skipped == 0);
  CHECK(splits[1].rows.at(0).label == 0);
  REQUIRE(splits[2].rows.size() == 2);
  CHECK(splits[2].rows[1].a == "One more?");
  CHECK(splits[2].rows[1].label == -1);

  // The test split has no such rule, and no other task does.
  const std::string bad_test = tmp.write("bad_test.tsv", "id\tquestion1\tquestion2\n0\tcut\n");
  contains(data_error(task_named("QQP"), GlueFileKind::Test, bad_test), bad_test + ":2: expected 3");
  const std::string rte = tmp.write("rte.tsv", "index\tsentence1\tsentence2\tlabel\n0\ta\tentailment\n");
  contains(data_error(task_named("RTE"), GlueFileKind::Dev, rte), rte + ":2: expected 4 tab-separated columns, found 3");
}

TEST_CASE("glue reader: MNLI's five files, its 12/16/10-column layouts and its label order") {
  const test::TempDir tmp("glue_mnli");
  test::write_mnli_files(tmp);
  const auto spec = resolve_data_spec(
      JsonSection(json{{"reader", "glue"}, {"task", "MNLI"}, {"dir", tmp.path.string()}}, "data"));
  const auto& glue = dynamic_cast<const GlueSpec&>(*spec);
  CHECK(glue.valid == "dev_matched.tsv");
  CHECK(glue.extra_valid == std::vector<std::string>{"dev_mismatched.tsv"});
  CHECK(glue.test == "test_matched.tsv");
  CHECK(glue.extra_test == std::vector<std::string>{"test_mismatched.tsv"});
  const std::vector<SentenceSplit> splits = glue.read_sentences("/nonexistent");
  REQUIRE(splits.size() == 5);
  CHECK(splits[0].name == "train");
  CHECK(splits[1].name == "valid");
  CHECK(splits[2].name == "dev_mismatched");
  CHECK(splits[2].role == SentenceSplit::Role::Valid);
  CHECK(splits[3].name == "test");
  CHECK(splits[4].name == "test_mismatched");
  CHECK(splits[4].role == SentenceSplit::Role::Test);
  CHECK(glue_submission_file(*glue.task, splits[4].file) == "MNLI-mm.tsv");
  CHECK(glue_submission_file(*glue.task, splits[3].file) == "MNLI-m.tsv");

  // fairseq's order: contradiction 0, neutral 1, entailment 2.
  REQUIRE(splits[0].rows.size() == 3);
  CHECK(splits[0].rows[0].label == 2);
  CHECK(splits[0].rows[1].label == 0);
  CHECK(splits[0].rows[2].label == 1);
  CHECK(splits[0].rows[1].a == "It rained.");
  CHECK(splits[0].rows[1].b == "It was dry.");
  CHECK(splits[1].rows.at(0).label == 2);
  REQUIRE(splits[2].rows.size() == 2);
  CHECK(splits[2].rows[0].label == 0);
  CHECK(splits[2].rows[1].label == 1);
  CHECK(splits[2].rows[1].a == "Snow fell.");
  REQUIRE(splits[4].rows.size() == 2);
  CHECK(splits[4].rows[1].b == "Six.");
  CHECK(splits[4].rows[1].label == -1);
  CHECK(glue.target().label_names == std::vector<std::string>{"contradiction", "neutral", "entailment"});
  CHECK(glue.target().num_classes == 3);

  // A train file where a dev file belongs: the column count says so.
  const std::string message = data_error(*glue.task, GlueFileKind::Dev, tmp.file("train.tsv"));
  contains(message, tmp.file("train.tsv") + ":1: expected 16 tab-separated columns, found 12");
}

TEST_CASE("glue reader: malformed input is a DataError naming file:line and the fix") {
  const test::TempDir tmp("glue_bad");
  const GlueTask& sst = task_named("SST-2");
  const GlueTask& stsb = task_named("STS-B");

  const std::string columns = tmp.write("columns.tsv", "sentence\tlabel\ngood film\t1\nno label here\n");
  contains(contains(data_error(sst, GlueFileKind::Train, columns), columns + ":3: expected 2 tab-separated columns, found 1"),
           "no quoting");
  const std::string extra_tab = tmp.write("tab.tsv", "sentence\tlabel\ngood\tfilm\t1\n");
  contains(data_error(sst, GlueFileKind::Train, extra_tab), extra_tab + ":2: expected 2 tab-separated columns, found 3");

  const std::string label = tmp.write("label.tsv", "sentence\tlabel\ngood film\t1\nbad film\tnegative\n");
  contains(data_error(sst, GlueFileKind::Train, label),
           label + ":3: unknown label \"negative\" for SST-2; expected one of \"0\", \"1\"");
  const std::string rte_label = tmp.write("rte_label.tsv", "index\tsentence1\tsentence2\tlabel\n0\ta\tb\t1\n");
  contains(data_error(task_named("RTE"), GlueFileKind::Train, rte_label),
           rte_label + ":2: unknown label \"1\" for RTE; expected one of \"entailment\", \"not_entailment\"");

  const std::string utf8 = tmp.write("utf8.tsv", "sentence\tlabel\ngood\t1\ncaf\xe9 film\t0\n");
  contains(contains(data_error(sst, GlueFileKind::Train, utf8), utf8 + ":3:"), "UTF-8");
  const std::string nul = tmp.write("nul.tsv", std::string("sentence\tlabel\na\0b\t1\n", 21));
  contains(contains(data_error(sst, GlueFileKind::Train, nul), nul + ":2:"), "NUL");

  const std::string empty = tmp.write("empty.tsv", "");
  contains(data_error(sst, GlueFileKind::Dev, empty), empty + ": is empty");
  const std::string header_only = tmp.write("header.tsv", "sentence\tlabel\n");
  contains(data_error(sst, GlueFileKind::Dev, header_only), header_only + ": has no rows");

  const std::string sts_head = "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore\n";
  const std::string sts_row = "0\tmain-news\theadlines\t2016\t0001\tnone\tnone\tA b.\tC d.\t";
  for (const std::string score : {"5.5", "-0.2", "abc", "nan", "", " 3", "3x"}) {
    CAPTURE(score);
    const std::string path = tmp.write("sts.tsv", sts_head + sts_row + "2.5\n" + sts_row + score + "\n");
    contains(data_error(stsb, GlueFileKind::Train, path), path + ":3: score \"" + score + "\" is not a number in [0, 5]");
  }
  const std::string sts_ok = tmp.write("sts_ok.tsv", sts_head + sts_row + "0\n" + sts_row + "5.000\n" + sts_row + "3.8\n");
  const SentenceSplit scores = read_glue_split(stsb, GlueFileKind::Dev, sts_ok);
  REQUIRE(scores.rows.size() == 3);
  CHECK(scores.rows[0].target == 0.0);
  CHECK(scores.rows[1].target == 5.0);
  CHECK(scores.rows[2].target == 3.8);

  const std::string missing = tmp.file("no_such.tsv");
  contains(contains(data_error(sst, GlueFileKind::Train, missing), missing + ": no such file"), "TRANSNORMER_DATA");
  contains(data_error(sst, GlueFileKind::Train, tmp.path.string()), "is a directory");
}

TEST_CASE("glue reader: CRLF line endings and a missing final newline read like LF") {
  const test::TempDir tmp("glue_crlf");
  const std::string path = tmp.write("crlf.tsv", "sentence\tlabel\r\ngood film \t1\r\nbad film\t0");
  const SentenceSplit split = read_glue_split(task_named("SST-2"), GlueFileKind::Train, path);
  REQUIRE(split.rows.size() == 2);
  CHECK(split.rows[0].a == "good film ");  // trailing spaces are the file's text
  CHECK(split.rows[0].label == 1);
  CHECK(split.rows[1].label == 0);
  CHECK(split.rows[1].id == "1");
}
