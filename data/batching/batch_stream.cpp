#include "data/batching/batch_stream.h"

#include <numeric>
#include <utility>

#include "core/platform/comm/share.h"
#include "core/error.h"
#include "core/runtime/rng.h"

namespace tn {

std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, uint64_t epoch) {
  if (n < 0) throw ShapeError("[epoch_order] n is " + std::to_string(n) + ", expected >= 0");
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  Rng rng((seed << 32) + epoch);
  for (int64_t i = n - 1; i >= 1; --i) {
    const auto j = static_cast<int64_t>(rng.next_u64() % static_cast<uint64_t>(i + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

EpochPlan shuffled_batches(int64_t n, int64_t batch_size, uint64_t seed, uint64_t epoch) {
  if (batch_size < 1) throw ShapeError("[shuffled_batches] batch_size " + std::to_string(batch_size));
  const std::vector<int64_t> order = epoch_order(n, seed, epoch);
  EpochPlan plan;
  for (int64_t start = 0; start < n; start += batch_size)
    plan.emplace_back(order.begin() + start, order.begin() + std::min(n, start + batch_size));
  return plan;
}

BatchStream::BatchStream(int64_t n_items, Planner plan, std::string unit)
    : n_(n_items), planner_(std::move(plan)), unit_(std::move(unit)) {
  if (n_ > 0) start_epoch(0);
}

void BatchStream::start_epoch(int64_t epoch) {
  plan_ = planner_(static_cast<uint64_t>(epoch));
  int64_t items = 0;
  for (const std::vector<int64_t>& batch : plan_) items += static_cast<int64_t>(batch.size());
  if (items != n_)
    throw ShapeError("[BatchStream] the plan of epoch " + std::to_string(epoch) + " covers " + std::to_string(items) +
                     " " + unit_ + "s, not " + std::to_string(n_));
  epoch_ = epoch;
  batch_ = 0;
  position_ = 0;
}

void BatchStream::next(std::vector<int64_t>& ids) {
  if (n_ == 0) throw ShapeError("[BatchStream] no training " + unit_ + "s: an evaluation-only task");
  if (batch_ >= static_cast<int64_t>(plan_.size())) start_epoch(epoch_ + 1);
  const std::vector<int64_t>& global = plan_[batch_++];
  const auto len = static_cast<int64_t>(global.size());
  const Share part = share_of(len, rank_, world_);
  ids.assign(global.begin() + part.begin, global.begin() + part.end);
  position_ += len;
}

void BatchStream::shard(int rank, int world) {
  if (world < 1 || rank < 0 || rank >= world)
    throw ShapeError("[BatchStream] rank " + std::to_string(rank) + " of " + std::to_string(world));
  rank_ = rank;
  world_ = world;
}

nlohmann::json BatchStream::state() const { return {{"epoch", epoch_}, {"position", position_}}; }

void BatchStream::restore(const nlohmann::json& state, const std::string& where) {
  int64_t epoch = 0, place = 0;
  bool in_batches = false;
  try {
    epoch = state.at("epoch").get<int64_t>();
    in_batches = !state.contains("position") && state.contains("batch");
    place = state.at(in_batches ? "batch" : "position").get<int64_t>();
  } catch (const std::exception& e) {
    throw DataError(where + ": corrupt batch stream state (" + e.what() + ")");
  }
  const auto outside = [&] {
    return DataError(where + ": batch stream position (epoch " + std::to_string(epoch) + ", " +
                     (in_batches ? "batch " : unit_ + " ") + std::to_string(place) + ") is not a batch boundary of the " +
                     std::to_string(n_) + " training " + unit_ + "s; the file was edited or belongs to another run");
  };
  if (epoch < 0 || place < 0 || n_ == 0) throw outside();
  start_epoch(epoch);
  int64_t items = 0, batch = 0;
  const auto target_reached = [&] { return in_batches ? batch == place : items >= place; };
  while (!target_reached() && batch < static_cast<int64_t>(plan_.size()))
    items += static_cast<int64_t>(plan_[batch++].size());
  if (!(in_batches ? batch == place : items == place)) throw outside();
  batch_ = batch;
  position_ = items;
}

double BatchStream::epochs_done() const {
  return n_ == 0 ? 0.0 : static_cast<double>(epoch_) + static_cast<double>(position_) / static_cast<double>(n_);
}

}  // namespace tn
