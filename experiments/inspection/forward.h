#pragma once
// One forward (and optionally backward) pass on given token ids, reported in the format of the
// golden fixtures' expected.json (tests/golden/README.md). The code path of
// `transnormer forward` and of the golden tests.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "layers/models/transnormer.h"

namespace tn {

/// The input JSON of `text` (the file `where`). Throws DataError naming `where` for text that is not
/// JSON, with the parser's position.
nlohmann::json parse_forward_input(std::string_view text, const std::string& where);

/// input: {"task": "lm"|"classification"|"retrieval", "batch": B, "seq_len": T, "tokens",
/// "targets", "training": false}. tokens: [B][T] ids, or for retrieval [2B][T] (the B first
/// documents of the pairs, then the B second ones, as the retrieval task feeds them); targets:
/// [B][T] next tokens with -100 ignored (lm, mlm heads) or [B] class ids (classification, retrieval).
/// Returns {"loss", "logits_first" [B][V], "logits_last" [B][V] (classification and retrieval:
/// "logits" [B][C]), "hidden_norms" {embed, layers, final}} plus, with grads, {"grad_norms"
/// {name: L2}, "grad_global_norm"}; parameter gradients are left in the model's ParamStore. Eval
/// mode unless "training" is true: then BatchNorm normalises with the batch's statistics and
/// updates its running ones in the model, and dropout runs at the checkpoint's rates (from a fixed
/// seed). Throws DataError naming `where` for malformed input (missing key, ragged rows, ids out of
/// range, a task that does not match the checkpoint's head).
nlohmann::json run_forward(TransNormerModel& model, const nlohmann::json& input, bool grads,
                           const std::string& where);

}  // namespace tn
