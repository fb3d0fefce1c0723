#pragma once
// The SVG of `analyze locality`: l(r) of every layer, their mean, and the uniform line l = r.
#include <string>

#include "experiments/analysis/locality.h"

namespace tn {

/// Writes the plot of `curves` to `path` atomically; `source` (the checkpoint) goes in the title.
/// Throws IoError when the write fails.
void write_locality_svg(const LocalityCurves& curves, const std::string& source, const std::string& path);

}  // namespace tn
