#pragma once
// The task walkthrough's example (docs/architecture.md, "Add a task", step 1): a sequence-level
// task that is only a factory on the classification core. `shuffled_classification` classifies
// each text with its characters shuffled, a fixed permutation per example: the bag-of-symbols
// control that tells whether a model uses the order of its input at all. The test suite builds
// it as a task of the library would be built and registers it with add_task
// (experiments/tasks/registry.h) instead of a line in registry.cpp.
#include <cstdint>
#include <memory>
#include <string>

#include "experiments/spec/spec.h"
#include "experiments/tasks/task.h"

namespace tn::walkthrough {

/// `text`'s UTF-8 code points in an order drawn from `seed` (the same seed, the same order).
std::string shuffled_symbols(const std::string& text, uint64_t seed);

/// The task: the reader's sentences (one text per example, character-level), every text shuffled
/// with the seed train.seed + its split's index · 2^32 + its row, encoded and classified as
/// sequence_classification does. Throws ConfigError for a model that is not an encoder with a
/// classification head, a reader that yields no single texts, or a tokenizer other than char (it
/// shuffles characters); DataError as the reader.
std::unique_ptr<Task> make_shuffled_classification(const ExperimentSpec& spec, const std::string& data_root);

}  // namespace tn::walkthrough
