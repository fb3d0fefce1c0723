#pragma once
// Language-model evaluation under the data protocol (README "The quickstart's data protocol"):
// the stream is cut into blocks of seq_len+1 ids overlapping by one, every block an independent
// sequence; loss = Σ NLL / number of targets
// (nats), ppl = exp(loss). Eval mode (no dropout); batching does not change the result.
#include <cstdint>
#include <vector>

#include "core/platform/comm/communicator.h"
#include "layers/models/transnormer.h"

namespace tn {

struct LmEval {
  double loss = 0;   // nats per target
  double ppl = 0;    // exp(loss)
  int64_t tokens = 0;  // number of targets (= stream size − 1)
};

/// Evaluates `model` on `stream`. With several ranks in `comm`, each evaluates a contiguous share
/// of the blocks and the sums are combined, so every rank returns the whole stream's result.
/// Throws DataError when the stream has fewer than 2 ids.
LmEval evaluate_lm(TransNormerModel& model, const std::vector<int32_t>& stream, int64_t seq_len,
                   int64_t batch_size, Communicator& comm);

}  // namespace tn
