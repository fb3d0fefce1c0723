#include "experiments/tasks/lm_evaluate.h"

#include <cmath>

#include "core/error.h"
#include "core/progress.h"
#include "data/batching/lm_blocks.h"

namespace tn {

LmEval evaluate_lm(TransNormerModel& model, const std::vector<int32_t>& stream, int64_t seq_len,
                   int64_t batch_size) {
  if (stream.size() < 2) throw DataError("evaluation data has fewer than 2 tokens: nothing to score");
  LmBlocks blocks{stream, seq_len};
  Tape tape;
  tape.set_enabled(false);
  Rng rng(0);
  ForwardContext ctx{tape, false, rng, nullptr};
  LmBatch batch;
  double sum_nll = 0.0;
  int64_t tokens = 0;
  std::vector<int64_t> ids;
  Progress progress("evaluating", "sequences", blocks.count());
  for (int64_t first = 0; first < blocks.count(); first += batch_size) {
    progress.advance(first);
    ids.clear();
    for (int64_t b = first; b < std::min(blocks.count(), first + batch_size); ++b) ids.push_back(b);
    make_batch(blocks, ids, batch);
    Var hidden = model.forward(ctx, batch.inputs, batch.rows, batch.seq_len);
    LmLoss loss = model.lm_loss(ctx, hidden, batch.targets);
    sum_nll += loss.sum_nll;
    tokens += loss.n_targets;
  }
  LmEval out;
  out.tokens = tokens;
  out.loss = sum_nll / static_cast<double>(tokens);
  out.ppl = std::exp(out.loss);
  return out;
}

}  // namespace tn
