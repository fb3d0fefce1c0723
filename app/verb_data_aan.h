#pragma once
// `transnormer data generate aan --out DIR [--count N] [--seed S] [--overwrite]`
// A tiny synthetic set in the LRA Retrieval (AAN) format (data/generators/aan_generator.h):
// new_aan_pairs.{train,eval,test}.tsv, read by the `aan` reader. Logs (the files, pair counts,
// label shares, mean document length) go to stderr.
#include <utility>

#include "app/verbs.h"

namespace tn::app {

/// Registers `aan` under `data generate`; returns it and the action that runs it.
std::pair<CLI::App*, Action> add_generate_aan(CLI::App& generate);

}  // namespace tn::app
