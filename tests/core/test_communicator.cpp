// The communication interface (core/platform/comm): a world of one process, and the gradient sums'
// buckets, checked against a stand-in world of identical ranks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "core/platform/comm/communicator.h"
#include "core/platform/comm/grad_allreduce.h"
#include "core/error.h"
#include "tests/core/twin_ranks.h"

using namespace tn;

using tn::test::TwinRanks;

TEST_CASE("comm: a plain process is a world of one, and sums leave the data as it is") {
  Communicator& w = world();
  CHECK(w.rank() == 0);
  CHECK(w.size() == 1);
  std::vector<float> x{1.5f, -2.0f};
  w.sum(x.data(), 2);
  CHECK(x == std::vector<float>{1.5f, -2.0f});
  int64_t signal = 15;
  w.max(&signal, 1);
  CHECK(signal == 15);
  CHECK(w.gather("abc", 0) == std::vector<std::string>{"abc"});
}

TEST_CASE("comm: gradients are summed in buckets of at most 4M floats, and a parameter without a gradient keeps none") {
  // 3M + 2M floats do not fit one 4M bucket together; 5M is larger than a bucket (summed in place).
  std::vector<std::pair<std::string, Var>> params;
  for (int64_t n : {int64_t{3} << 20, int64_t{2} << 20, int64_t{5} << 20, int64_t{100}, int64_t{7}}) {
    params.emplace_back("p" + std::to_string(params.size()), make_var(Tensor::zeros({n}), true));
  }
  for (size_t k = 0; k < 4; ++k) {  // the last parameter gets no gradient
    Tensor& g = params[k].second->grad_buf();
    for (int64_t i = 0; i < g.numel(); ++i) g.data()[i] = static_cast<float>(k + 1) + 0.001f * static_cast<float>(i % 7);
  }
  TwinRanks twins(3);
  GradAllreduce sum(params, twins);
  sum.run();
  for (size_t k = 0; k < 4; ++k) {
    const Tensor& g = params[k].second->grad();
    for (int64_t i : {int64_t{0}, g.numel() / 2, g.numel() - 1})
      CHECK(g.data()[i] == doctest::Approx(3.0 * (static_cast<double>(k + 1) + 0.001 * static_cast<double>(i % 7))));
  }
  CHECK_FALSE(params[4].second->has_grad());
  // Calls: bucket {3M}, then the 5M parameter in place as 4M + 1M, then bucket {2M, 100}.
  CHECK(twins.float_calls == std::vector<int64_t>{int64_t{3} << 20, int64_t{4} << 20, int64_t{1} << 20, (int64_t{2} << 20) + 100});
  for (int64_t n : twins.float_calls) CHECK(n <= Communicator::kMaxSumFloats);
}

TEST_CASE("comm: srun -n 2 without MPI is refused, since both copies would write the same outputs") {
  ::setenv("SLURM_STEP_NUM_TASKS", "2", 1);
  int argc = 1;
  char name[] = "transnormer";
  char* args[] = {name, nullptr};
  char** argv = args;
  CHECK_THROWS_WITH_AS(start_world(&argc, &argv), doctest::Contains("srun --mpi=pmix"), ConfigError);
  ::setenv("SLURM_STEP_NUM_TASKS", "1", 1);  // one task of a step: a plain process
  CHECK_NOTHROW(start_world(&argc, &argv));
  CHECK(world().size() == 1);
  ::unsetenv("SLURM_STEP_NUM_TASKS");
}
