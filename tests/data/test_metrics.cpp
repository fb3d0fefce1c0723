// The GLUE metrics against every vector of tests/golden/glue_metrics.json (sklearn/scipy values,
// with 0 for the undefined cases), and the metric sets by name.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/metrics/classification_metrics.h"
#include "data/metrics/regression_metrics.h"
#include "data/readers/glue_tasks.h"
#include "tests/test_paths.h"

using namespace tn;

namespace {

nlohmann::json read_golden() {
  const std::string path = test::golden_root() + "/glue_metrics.json";
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("glue metrics: accuracy, f1 and mcc equal every golden classification vector") {
  const nlohmann::json golden = read_golden();
  REQUIRE(golden.at("classification").size() >= 9);
  for (const auto& c : golden.at("classification")) {
    const std::string name = c.at("name");
    CAPTURE(name);
    const auto predictions = c.at("predictions").get<std::vector<int32_t>>();
    const auto labels = c.at("labels").get<std::vector<int32_t>>();
    CHECK(accuracy(predictions, labels) == doctest::Approx(c.at("accuracy").get<double>()).epsilon(1e-12));
    CHECK(binary_f1(predictions, labels) == doctest::Approx(c.at("f1").get<double>()).epsilon(1e-12));
    CHECK(matthews_corrcoef(predictions, labels) == doctest::Approx(c.at("mcc").get<double>()).epsilon(1e-12));
    const auto named = classification_metrics({"mcc", "accuracy", "f1"}, predictions, labels);
    REQUIRE(named.size() == 3);
    CHECK(named[0].first == "mcc");
    CHECK(named[0].second == matthews_corrcoef(predictions, labels));
    CHECK(named[2].first == "f1");
  }
}

TEST_CASE("glue metrics: pearson and spearman equal every golden regression vector") {
  const nlohmann::json golden = read_golden();
  REQUIRE(golden.at("regression").size() >= 6);
  for (const auto& c : golden.at("regression")) {
    const std::string name = c.at("name");
    CAPTURE(name);
    const auto predictions = c.at("predictions").get<std::vector<double>>();
    const auto labels = c.at("labels").get<std::vector<double>>();
    CHECK(pearson(predictions, labels) == doctest::Approx(c.at("pearson").get<double>()).epsilon(1e-12));
    CHECK(spearman(predictions, labels) == doctest::Approx(c.at("spearman").get<double>()).epsilon(1e-12));
    const auto named = regression_metrics({"pearson", "spearman"}, predictions, labels);
    REQUIRE(named.size() == 2);
    CHECK(named[1].first == "spearman");
    CHECK(named[1].second == spearman(predictions, labels));
  }
}

TEST_CASE("glue metrics: average ranks, multiclass mcc, the undefined cases and bad input") {
  CHECK(average_ranks({10, 20, 10, 5}) == std::vector<double>{2.5, 4, 2.5, 1});
  CHECK(average_ranks({}).empty());
  // Three classes (MNLI): perfect is 1, and the multiclass form is symmetric in its arguments.
  const std::vector<int32_t> labels = {0, 1, 2, 2, 1, 0, 2};
  const std::vector<int32_t> predictions = {0, 2, 2, 1, 1, 0, 2};
  CHECK(matthews_corrcoef(labels, labels) == doctest::Approx(1.0));
  CHECK(matthews_corrcoef(predictions, labels) == doctest::Approx(matthews_corrcoef(labels, predictions)));
  CHECK(accuracy({}, {}) == 0.0);
  CHECK(pearson({1.0}, {2.0}) == 0.0);
  CHECK(pearson({0.1, 0.1, 0.1}, {1, 2, 3}) == 0.0);  // constant, whatever rounding the mean has
  CHECK_THROWS_AS(accuracy({1, 0}, {1}), ShapeError);
  CHECK_THROWS_AS(matthews_corrcoef({-2}, {0}), ShapeError);
  CHECK_THROWS_AS(matthews_corrcoef({0}, {kNoPrediction}), ShapeError);  // a label is a class
  CHECK_THROWS_AS(classification_metrics({"auc"}, {1}, {1}), ShapeError);
  CHECK_THROWS_AS(regression_metrics({"mse"}, {1.0}, {1.0}), ShapeError);
}

TEST_CASE("classification metrics: an example with no prediction (non-finite logits) is wrong") {
  const std::vector<int32_t> labels = {0, 1, 1, 0};
  const std::vector<int32_t> predictions = {0, 1, kNoPrediction, kNoPrediction};
  CHECK(accuracy(predictions, labels) == 0.5);
  CHECK(binary_f1(predictions, labels) == doctest::Approx(2.0 / 3.0));  // tp 1, fp 0, fn 1
  // By hand, "none" as a third class: s 4, c 2, true counts (2, 2, 0), predicted (1, 1, 2):
  // (2·4 − (2 + 2 + 0)) / √((16 − 6)(16 − 8)) = 4 / √80.
  CHECK(matthews_corrcoef(predictions, labels) == doctest::Approx(4.0 / std::sqrt(80.0)).epsilon(1e-12));
}

TEST_CASE("glue metrics: every task's metric names are computable") {
  for (const GlueTask& task : glue_tasks()) {
    CAPTURE(task.name);
    const std::vector<std::string> names(task.metrics.begin(), task.metrics.end());
    if (task.regression)
      CHECK(regression_metrics(names, {1, 2, 3}, {1, 3, 2}).size() == names.size());
    else
      CHECK(classification_metrics(names, {0, 1, 1}, {0, 1, 0}).size() == names.size());
  }
}
