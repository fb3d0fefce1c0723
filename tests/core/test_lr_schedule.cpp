#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/runtime/optim/lr_schedule.h"
#include "tests/test_paths.h"

using namespace tn;

namespace {

nlohmann::json read_golden_schedules() {
  const std::string path = test::golden_root() + "/lr_schedules.json";
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  return nlohmann::json::parse(in);
}

// Every golden value to 1e-12 relative (zeros must be exact zeros).
void check_against_golden(const LrSchedule& schedule, const nlohmann::json& golden, const char* name) {
  const auto& steps = golden.at("steps");
  const auto& lrs = golden.at("lr");
  REQUIRE(steps.size() == lrs.size());
  REQUIRE(steps.size() > 10);
  for (size_t i = 0; i < steps.size(); ++i) {
    const int64_t step = steps[i].get<int64_t>();
    const double expected = lrs[i].get<double>();
    const double got = schedule.lr(step);
    INFO(name << " step " << step << ": got " << got << ", expected " << expected);
    CHECK(std::abs(got - expected) <= 1e-12 * std::abs(expected));
  }
}

}  // namespace

TEST_CASE("lr_schedule: inverse_sqrt matches golden/lr_schedules.json") {
  const auto golden = read_golden_schedules().at("inverse_sqrt");
  const auto& p = golden.at("params");
  LrSchedule s{ScheduleKind::InverseSqrt, p.at("lr").get<double>(), p.at("warmup_updates").get<int64_t>(),
               p.at("warmup_init_lr").get<double>(), 0, 0.0, 1.0};
  check_against_golden(s, golden, "inverse_sqrt");
}

TEST_CASE("lr_schedule: polynomial_decay matches golden, including lr(0) = 0") {
  const auto golden = read_golden_schedules().at("polynomial_decay");
  const auto& p = golden.at("params");
  LrSchedule s{ScheduleKind::PolynomialDecay, p.at("lr").get<double>(), p.at("warmup_updates").get<int64_t>(),
               0.0, p.at("total_num_update").get<int64_t>(), p.at("end_learning_rate").get<double>(),
               p.at("power").get<double>()};
  check_against_golden(s, golden, "polynomial_decay");
  CHECK(s.lr(0) == 0.0);
}

TEST_CASE("lr_schedule: cosine with warmup matches golden") {
  const auto golden = read_golden_schedules().at("cosine_with_warmup");
  const auto& p = golden.at("params");
  REQUIRE(p.at("num_cycles").get<double>() == 0.5);
  LrSchedule s{ScheduleKind::Cosine, p.at("lr").get<double>(), p.at("warmup_steps").get<int64_t>(), 0.0,
               p.at("total_steps").get<int64_t>(), 0.0, 1.0};
  check_against_golden(s, golden, "cosine_with_warmup");
}

TEST_CASE("lr_schedule: fairseq anchors for inverse_sqrt (peak 5e-4, warmup 8000)") {
  LrSchedule s{ScheduleKind::InverseSqrt, 5e-4, 8000, 1e-7, 0, 0.0, 1.0};
  CHECK(s.lr(0) == doctest::Approx(1e-7).epsilon(1e-12));
  CHECK(s.lr(8000) == doctest::Approx(5e-4).epsilon(1e-4));
  CHECK(s.lr(32000) == doctest::Approx(2.5e-4).epsilon(1e-4));
  CHECK(s.lr(100000) == doctest::Approx(1.4142e-4).epsilon(1e-4));
}

TEST_CASE("lr_schedule: constant") {
  LrSchedule s{ScheduleKind::Constant, 3e-3, 0, 0.0, 0, 0.0, 1.0};
  for (int64_t step : {0, 1, 100, 100000}) CHECK(s.lr(step) == 3e-3);
}
