#pragma once
// `transnormer data stats SPEC`: what a spec's data looks like once the reader and the task's
// encoding have read it, before any training: examples per split, label counts, lengths (in the
// model's tokens) before and after truncation as percentiles, the vocabulary size, the share of
// symbols outside the vocabulary (<unk>), and the majority-class baseline of each evaluation split
// (the training split's commonest class predicted for every example). For a language-model reader:
// lines, tokens, vocabulary size and <unk> share per split.
#include <nlohmann/json.hpp>
#include <string>

#include "experiments/spec.h"

namespace tn {

/// The statistics as JSON: {"reader", "task", "vocab_size", "splits": {name: {...}}}. Reads the
/// data as the task does (the same errors: DataError naming file and line, ConfigError).
nlohmann::ordered_json data_stats(const ExperimentSpec& spec, const std::string& data_root);

/// The same as a table for people, one row per split.
std::string data_stats_table(const nlohmann::ordered_json& stats);

}  // namespace tn
