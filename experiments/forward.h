#pragma once
// One forward (and optionally backward) pass on given token ids, reported in the format of the
// golden fixtures' expected.json (tests/golden/README.md). The code path of
// `transnormer forward` and of the golden tests.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "layers/models/transnormer.h"

namespace tn {

/// input: {"task": "lm"|"classification", "batch": B, "seq_len": T, "tokens": [[B×T]],
/// "targets": [[B×T]] (lm, mlm) or [B] (classification)}.
/// Returns {"loss", "logits_first" [B][V], "logits_last" [B][V] (classification: "logits" [B][C]),
/// "hidden_norms" {embed, layers,
/// final}} plus, with grads, {"grad_norms" {name: L2}, "grad_global_norm"}; parameter gradients
/// are left in the model's ParamStore. Eval mode (no dropout). Throws DataError naming `where` for
/// malformed input (missing key, ragged rows, wrong task).
/// The input JSON of `text` (the file `where`). Throws DataError naming `where` for text that is not
/// JSON, with the parser's position.
nlohmann::json parse_forward_input(std::string_view text, const std::string& where);

nlohmann::json run_forward(TransNormerModel& model, const nlohmann::json& input, bool grads,
                           const std::string& where);

}  // namespace tn
