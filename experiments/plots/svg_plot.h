#pragma once
// SVG plots for `report`, drawn with PLplot's svg device. The only PLplot user of the code base:
// each call opens its own PLplot stream, renders into memory and ends the stream, so the caller
// never sees PLplot's global state, and nothing is printed.
#include <cstddef>
#include <string>
#include <vector>

namespace tn {

/// Bands are drawn only on plots of at most this many curves (more would hide each other).
constexpr size_t kMaxBandedSeries = 6;

/// One curve of a line plot: y(x), optionally with a band lo(x)..hi(x) drawn translucent behind
/// it (see kMaxBandedSeries). x, y (and lo, hi
/// when given) have the same length; non-finite points break the curve.
struct LineSeries {
  std::string label;
  std::vector<double> x, y;
  std::vector<double> lo, hi;  // the band (e.g. min-max over seeds); empty: none
  bool reference = false;      // a grey dashed guide line (e.g. "uniform: l = r")
};

/// Curves over a numeric x axis (training loss vs step, l(r) vs r).
struct LinePlot {
  std::string title, x_label, y_label;
  bool log_y = false;  // y on a log10 scale (values <= 0 are dropped)
  std::vector<LineSeries> series;
};

/// One set of points with symmetric error bars: y[i] ± err[i] at x[i]. err may be empty (no
/// bars) or hold NaN for a point without one. Non-finite y are not drawn.
struct PointSeries {
  std::string label;
  std::vector<double> x, y, err;
};

/// Points with error bars over a numeric axis, or over named categories (then x holds category
/// indices 0..n-1 and the series are spread a little apart so their bars do not overlap).
struct PointPlot {
  std::string title, x_label, y_label;
  std::vector<std::string> categories;  // non-empty: a category axis with these tick labels
  bool log_x = false, log_y = false;
  bool connect = false;  // join each series' points with a line (numeric axis)
  std::vector<PointSeries> series;
};

/// The SVG document of `plot` (starts with "<?xml", ends with "</svg>\n"), 800×500 user units.
/// A plot with no finite point is drawn as empty axes with "no data". Throws std::runtime_error
/// if the SVG cannot be produced.
std::string render_line_plot(const LinePlot& plot);
std::string render_point_plot(const PointPlot& plot);

}  // namespace tn
