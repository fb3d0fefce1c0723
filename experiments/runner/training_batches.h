#pragma once
// A task's training batches, in the order the runner takes them: the runner's BatchStream over the
// task's plan (Task::training_stream), each batch filled by the task (Task::fill_batch). The stream's
// place goes into the train state and comes back on --resume; under data parallelism the stream
// serves this rank's part of every batch (BatchStream::shard).
#include <cstdint>
#include <vector>

#include "data/batching/batch_stream.h"
#include "experiments/tasks/task.h"

namespace tn {

class TrainingBatches {
 public:
  /// The stream of `task`, which must outlive this object, at the start of epoch 0.
  explicit TrainingBatches(const Task& task) : task_(task), stream_(task.training_stream()) {}

  /// Fills `batch` (from the task's new_batch) with the next batch of the stream: this rank's part
  /// of it. Throws ShapeError for an evaluation-only task's empty stream.
  void next(Batch& batch) {
    stream_.next(ids_);
    task_.fill_batch(ids_, static_cast<uint64_t>(stream_.epoch()), batch);
  }

  /// The stream: its place (state, restore), epochs done, shard.
  BatchStream& stream() { return stream_; }
  const BatchStream& stream() const { return stream_; }

 private:
  const Task& task_;
  BatchStream stream_;
  std::vector<int64_t> ids_;  // the stream's batch, reused
};

}  // namespace tn
