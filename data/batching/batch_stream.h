#pragma once
// The one training stream of every task: epoch e is a plan of batches (item indices), a pure
// function of e, served in order; after its last batch the next epoch is planned. What differs
// between tasks is only the plan: shuffled_batches for LM blocks, masked-LM samples and LRA
// examples, length_batches (data/batching/length_batches.h) for GLUE. The stream's place is
// {"epoch", "position"} (items of the epoch already served), saved in the train state and restored
// on resume, so a resumed run replays the same batches bit for bit.
//
// Data parallelism: with shard(rank, world), each global batch of the plan is cut into `world`
// contiguous parts and this stream serves part `rank`; the place stays global (the items every rank
// has served together), so all ranks save the same state.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tn {

/// The batches of one epoch: item indices, each batch non-empty.
using EpochPlan = std::vector<std::vector<int64_t>>;

/// Fisher-Yates shuffle driven by SplitMix64, state starts at (seed * 2^32 + epoch) mod 2^64
/// (the PyTorch reference's epoch_order): for i = n-1 down to 1, j = next() mod (i+1), swap
/// entries i and j. epoch_order(10,1,0) = [9,7,4,0,3,8,2,5,1,6], epoch 1 = [1,6,3,2,4,5,9,8,0,7].
/// Throws ShapeError when n < 0.
std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, uint64_t epoch);

/// epoch_order(n, seed, epoch) cut into consecutive batches of batch_size items (the last may be
/// smaller). Throws ShapeError when n < 0 or batch_size < 1.
EpochPlan shuffled_batches(int64_t n, int64_t batch_size, uint64_t seed, uint64_t epoch);

class BatchStream {
 public:
  /// Plans epoch e; every plan must cover the same `n_items` items (checked by count).
  using Planner = std::function<EpochPlan(uint64_t epoch)>;

  /// `unit` names one item in messages ("block", "sample", "example"). n_items 0 makes an empty
  /// stream (an evaluation-only task), which next() refuses.
  BatchStream(int64_t n_items, Planner plan, std::string unit);

  /// Serves the next batch's item indices into `ids` (replacing its contents): this rank's part of
  /// the next global batch. Starts the next epoch when this one is done. Throws ShapeError on an
  /// empty stream.
  void next(std::vector<int64_t>& ids);
  /// Serves part `rank` of `world` of every global batch from now on: items
  /// [rank·len/world, (rank+1)·len/world) of a batch of len items, so the parts differ by at most
  /// one item and a batch smaller than `world` leaves some ranks an empty part (ids empty: the
  /// data-parallel step weighs each rank by its targets). Throws ShapeError unless
  /// 0 <= rank < world.
  void shard(int rank, int world);

  int64_t epoch() const { return epoch_; }
  /// {"epoch", "position"}: position = the items of the epoch served so far (by all ranks).
  nlohmann::json state() const;
  /// Continues from a saved place. Also reads the older {"epoch", "batch"} form (a batch index).
  /// Throws DataError naming `where` when the state is malformed, or not at a batch boundary of
  /// the epoch's plan (an edited file, another run, other data).
  void restore(const nlohmann::json& state, const std::string& where);
  /// Epochs done so far, fractional.
  double epochs_done() const;
  bool empty() const { return n_ == 0; }
  /// The plan of the current epoch.
  const EpochPlan& plan() const { return plan_; }

 private:
  void start_epoch(int64_t epoch);

  int64_t n_;
  Planner planner_;
  std::string unit_;
  int rank_ = 0, world_ = 1;
  int64_t epoch_ = 0, batch_ = 0, position_ = 0;
  EpochPlan plan_;
};

}  // namespace tn
