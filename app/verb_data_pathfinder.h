#pragma once
// `transnormer data generate pathfinder --out DIR --count N [--seed S] [--batch-size B]
//                                       [--contour-length L] [--distractor-length D]
//                                       [--distractors K] [--continuity C] [--overwrite]`
// LRA Pathfinder images (data/generators/pathfinder_generator.h) in the released layout
// (data/generators/pathfinder_files.h). Logs (progress, counts, label share, speed) go to stderr.
#include <utility>

#include "app/verbs.h"

namespace tn::app {

/// Registers `pathfinder` under `data generate`; returns it and the action that runs it.
std::pair<CLI::App*, Action> add_generate_pathfinder(CLI::App& generate);

}  // namespace tn::app
