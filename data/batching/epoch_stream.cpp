#include "data/batching/epoch_stream.h"

#include <algorithm>

#include "core/error.h"
#include "data/batching/lm_blocks.h"

namespace tn {

EpochStream::EpochStream(int64_t n, uint64_t seed, std::string unit)
    : n_(n), seed_(seed), unit_(std::move(unit)), order_(epoch_order(n, seed, 0)) {}

void EpochStream::next(int64_t batch_size, std::vector<int64_t>& ids) {
  if (position_ >= static_cast<int64_t>(order_.size())) {
    ++epoch_;
    order_ = epoch_order(n_, seed_, static_cast<uint64_t>(epoch_));
    position_ = 0;
  }
  const int64_t end = std::min<int64_t>(order_.size(), position_ + batch_size);
  ids.assign(order_.begin() + position_, order_.begin() + end);
  position_ = end;
}

nlohmann::json EpochStream::state() const { return {{"epoch", epoch_}, {"position", position_}}; }

void EpochStream::restore(const nlohmann::json& state, const std::string& where) {
  int64_t epoch = 0, position = 0;
  try {
    epoch = state.at("epoch").get<int64_t>();
    position = state.at("position").get<int64_t>();
  } catch (const std::exception& e) {
    throw DataError(where + ": corrupt batch stream state (" + e.what() + ")");
  }
  if (epoch < 0 || position < 0 || position > n_)
    throw DataError(where + ": batch stream position (epoch " + std::to_string(epoch) + ", " + unit_ + " " +
                    std::to_string(position) + ") outside the " + std::to_string(n_) + " training " + unit_ +
                    "s; the file was edited or belongs to another run");
  epoch_ = epoch;
  position_ = position;
  order_ = epoch_order(n_, seed_, static_cast<uint64_t>(epoch_));
}

double EpochStream::epochs_done() const {
  return epoch_ + static_cast<double>(position_) / static_cast<double>(order_.size());
}

}  // namespace tn
