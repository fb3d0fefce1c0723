#pragma once
// `train.init_from` at the start of a new run (not on --resume, where the run's own checkpoint
// holds the weights): the pretrained parameters are copied into the fresh model and the outcome
// is logged (layers/persistence/init_from.h).
#include <string>
#include <vector>

#include "layers/persistence/init_from.h"

namespace tn {

/// Loads the checkpoint `init_from` names into `model` and logs how many parameters were loaded
/// and which were new or ignored. `vocabulary` is the task's (empty: none); a checkpoint that
/// stores another vocabulary is refused, since the embedding rows would mean other tokens.
/// Throws ConfigError (a missing path, a shape or vocabulary mismatch: exit 2) naming the
/// parameter and the fix, and DataError for an unreadable file.
InitFromReport warm_start(TransNormerModel& model, const std::string& init_from,
                          const std::vector<std::string>& vocabulary);

/// For a smoke test (records only), which checks a spec in seconds before anything is pretrained:
/// the checkpoint `init_from` names (init_from_checkpoint_path), or, when it names no weights (no
/// such run yet, or a smoke test's, which kept none), "" after a warning that the smoke test starts
/// from random weights; the caller then clears train.init_from.
std::string smoke_init_from(const std::string& init_from);

}  // namespace tn
