#pragma once
// A training stream over n items (LM blocks, masked-LM samples): epoch e visits every item once in
// epoch_order(n, seed, e) (data/batching/lm_blocks.h), batch_size items at a time (an epoch's last
// batch may be smaller). Its place is two numbers, saved in the train state and restored on resume.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tn {

class EpochStream {
 public:
  /// `unit` names one item in messages ("block", "sample").
  EpochStream(int64_t n, uint64_t seed, std::string unit);
  /// The next batch's item indices into `ids` (replacing its contents); starts the next epoch when
  /// this one is done. n must be >= 1.
  void next(int64_t batch_size, std::vector<int64_t>& ids);
  int64_t epoch() const { return epoch_; }
  /// {"epoch", "position"}.
  nlohmann::json state() const;
  /// Continues from a saved place. Throws DataError naming `where` when the state is malformed or
  /// outside the n items (an edited file, another run).
  void restore(const nlohmann::json& state, const std::string& where);
  /// Epochs done so far, fractional.
  double epochs_done() const;
  bool empty() const { return order_.empty(); }

 private:
  int64_t n_;
  uint64_t seed_;
  std::string unit_;
  int64_t epoch_ = 0, position_ = 0;
  std::vector<int64_t> order_;
};

}  // namespace tn
