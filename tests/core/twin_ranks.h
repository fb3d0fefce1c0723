#pragma once
// A stand-in world for tests of code that talks to other ranks (core/platform/comm): `ranks` ranks holding
// the same values, so a sum multiplies by `ranks` and everything else leaves the data alone. The
// sizes of the float sums are recorded.
#include <string>
#include <type_traits>
#include <vector>

#include "core/platform/comm/communicator.h"

namespace tn::test {

class TwinRanks final : public Communicator {
 public:
  explicit TwinRanks(int ranks) : ranks_(ranks) {}
  int rank() const override { return 0; }
  int size() const override { return ranks_; }
  void sum(float* d, int64_t n) override { scale(d, n); }
  void sum(double* d, int64_t n) override { scale(d, n); }
  void sum(int64_t* d, int64_t n) override { scale(d, n); }
  void max(int64_t*, int64_t) override {}
  void broadcast(float*, int64_t, int) override {}
  void broadcast(std::string&, int) override {}
  std::vector<std::string> gather(const std::string& b, int) override {
    return std::vector<std::string>(static_cast<size_t>(ranks_), b);
  }
  void barrier() override {}
  std::vector<int64_t> float_calls;  // the length of every float sum, in order

 private:
  template <class T>
  void scale(T* d, int64_t n) {
    if constexpr (std::is_same_v<T, float>) float_calls.push_back(n);
    for (int64_t i = 0; i < n; ++i) d[i] *= static_cast<T>(ranks_);
  }
  int ranks_;
};

}  // namespace tn::test
