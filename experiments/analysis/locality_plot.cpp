#include "experiments/analysis/locality_plot.h"

#include <filesystem>

#include "core/platform/io/atomic_file.h"
#include "experiments/plots/svg_plot.h"

namespace tn {

void write_locality_svg(const LocalityCurves& curves, const std::string& source, const std::string& path) {
  LinePlot plot;
  plot.title = "Locality accumulation, N = " + std::to_string(curves.seq_len) + " (" +
               std::filesystem::path(source).parent_path().filename().string() + ")";
  plot.x_label = "r (neighbourhood size / N)";
  plot.y_label = "l(r): attention mass inside the neighbourhood";
  for (const LocalityCurves::Layer& layer : curves.layers)
    plot.series.push_back({"layer " + std::to_string(layer.layer) + " (" + layer.mixer + ")", curves.r, layer.l, {}, {}, false});
  plot.series.push_back({"mean over layers", curves.r, curves.mean, {}, {}, false});
  plot.series.push_back({"uniform: l = r", curves.r, curves.r, {}, {}, true});
  write_file_atomic(path, render_line_plot(plot));
}

}  // namespace tn
