#include "experiments/tasks/lm_evaluate.h"

#include <cmath>

#include "core/platform/cancel.h"
#include "core/platform/comm/communicator.h"
#include "core/platform/comm/share.h"
#include "core/error.h"
#include "core/platform/progress.h"
#include "data/batching/lm_blocks.h"

namespace tn {

LmEval evaluate_lm(TransNormerModel& model, const std::vector<int32_t>& stream, int64_t seq_len,
                   int64_t batch_size, Communicator& comm) {
  if (stream.size() < 2) throw DataError("evaluation data has fewer than 2 tokens: nothing to score");
  LmBlocks blocks{stream, seq_len};
  Tape tape;
  tape.set_enabled(false);
  Rng rng(0);
  ForwardContext ctx{tape, false, rng, nullptr};
  LmBatch batch;
  double sums[2] = {0.0, 0.0};  // Σ NLL, targets: of this rank's blocks, then of all
  std::vector<int64_t> ids;
  // This rank's contiguous share of the blocks (all of them in one process).
  const auto [begin, end] = share_of(blocks.count(), comm.rank(), comm.size());
  Progress progress("evaluating", "sequences", end - begin);
  for (int64_t first = begin; first < end; first += batch_size) {
    throw_if_cancelled();
    progress.advance(first - begin);
    ids.clear();
    for (int64_t b = first; b < std::min(end, first + batch_size); ++b) ids.push_back(b);
    make_batch(blocks, ids, batch);
    Var hidden = model.forward(ctx, batch.inputs, batch.rows, batch.seq_len);
    LmLoss loss = model.lm_loss(ctx, hidden, batch.targets);
    sums[0] += loss.sum_nll;
    sums[1] += static_cast<double>(loss.n_targets);
  }
  comm.sum(sums, 2);
  LmEval out;
  out.tokens = static_cast<int64_t>(sums[1]);
  out.loss = sums[0] / sums[1];
  out.ppl = std::exp(out.loss);
  return out;
}

}  // namespace tn
