#include "experiments/plots/svg_plot.h"

#include <plplot/plplot.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace tn {

namespace {

// Layout in SVG user units (PLplot pixels): a fixed plot area with margins, the legend to its
// right, and below it room for vertical category labels. Text widths are those of PLplot's
// default font at the sizes used here, as measured on its SVG output.
constexpr double kPlotW = 700, kPlotH = 380, kLeft = 80, kTop = 45, kBottom = 58, kRight = 25;
// PLplot's svg device scales text with the page's width + height; text_size() undoes that, so
// text has the same size on every page: 15 pixels for tick and legend labels.
constexpr double kTextReference = 1483;  // width + height of the page the sizes below were measured on
constexpr double kCharW = 8.0;           // width of a tick-label character, generously
constexpr double kLegendCharW = 9.0;     // the same for legend labels (digits are wide)
constexpr double kLabelHeight = 12.3;    // plmtex's unit (a character height) at axis-label size
constexpr double kLegendRow = 17;   // height of one legend entry
constexpr double kLegendSample = 40;  // length of the line sample in front of a legend label
constexpr size_t kLegendChars = 44, kCategoryChars = 28;  // longer labels are cut
constexpr size_t kLegendColumns = 2;

// cmap0: background, ink, grid, reference, then the series colours (matplotlib's tab10) opaque
// and, from kBand on, the same colours translucent for bands.
constexpr int kInk = 1, kGrid = 2, kReference = 3, kFirstSeries = 4, kSeriesColors = 10;
constexpr int kBand = kFirstSeries + kSeriesColors;
constexpr unsigned char kPalette[kSeriesColors][3] = {
    {31, 119, 180}, {255, 127, 14}, {44, 160, 44},  {214, 39, 40},  {148, 103, 189},
    {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};

int color_of(size_t series) { return kFirstSeries + static_cast<int>(series % kSeriesColors); }
int band_of(size_t series) { return kBand + static_cast<int>(series % kSeriesColors); }
// Solid for the first ten series, then dotted and dashed patterns, as colours repeat.
int style_of(size_t series) { return 1 + static_cast<int>((series / kSeriesColors) % 4); }

int on_plplot_exit(const char* message) {
  spdlog::error("PLplot: {}", message);
  return 1;
}
void on_plplot_abort(const char* message) { spdlog::warn("PLplot: {}", message); }

/// PLplot treats '#' as its escape character: text is passed through with '#' doubled.
std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '#') out += '#';
  }
  return out;
}

size_t utf8_length(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

/// At most `max_chars` UTF-8 characters of `text`, ending in "..." when cut.
std::string shortened(const std::string& text, size_t max_chars) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (chars == max_chars - 3 && utf8_length(text) > max_chars) return text.substr(0, i) + "...";
    ++chars;
  }
  return text;
}

/// [lo, hi] of the finite values seen; pad() widens it by 5 % (a single value by ±5 % of itself,
/// or ±1; no value at all gives [0, 1]).
struct Range {
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
  void pad() {
    if (empty()) {
      lo = 0;
      hi = 1;
    } else if (hi - lo <= 1e-12 * std::max(1.0, std::abs(hi))) {
      const double d = lo != 0 ? 0.05 * std::abs(lo) : 1;
      lo -= d;
      hi += d;
    } else {
      const double d = 0.05 * (hi - lo);
      lo -= d;
      hi += d;
    }
  }
};

/// log10(v) for v > 0, else NaN (dropped), when `log`; else v.
double scaled(double v, bool log) {
  if (!log) return v;
  return v > 0 ? std::log10(v) : std::numeric_limits<double>::quiet_NaN();
}

struct LegendEntry {
  std::string label;
  int color = kInk, style = 1, marker = -1;  // marker -1: a line sample only
};

/// The page: plot area and legend placement, in pixels, and the data ranges.
struct Frame {
  double width = kLeft + kPlotW + kRight, height = kTop + kPlotH + kBottom;
  double x_label_offset = 36;  // from the x axis to the x label's centre line
  double legend_x = 0, legend_w = 0, legend_h = 0;
  size_t legend_rows = 0, legend_columns = 0;
  Range x, y;

  /// Makes room for `entries` in up to two columns right of the plot area.
  void fit_legend(const std::vector<LegendEntry>& entries) {
    if (entries.empty()) return;
    size_t longest = 0;
    for (const LegendEntry& e : entries) longest = std::max(longest, utf8_length(shortened(e.label, kLegendChars)));
    const size_t per_column = static_cast<size_t>(kPlotH / kLegendRow);
    legend_columns = std::min(kLegendColumns, (entries.size() + per_column - 1) / per_column);
    legend_rows = std::min(per_column, (entries.size() + legend_columns - 1) / legend_columns);
    legend_w = kLegendSample + 14 + kLegendCharW * static_cast<double>(longest);
    legend_h = kPlotH;
    legend_x = kLeft + kPlotW + 15;
    width = legend_x + static_cast<double>(legend_columns) * legend_w + 10;
  }
  /// Makes room below the x axis for vertical labels `px` long.
  void fit_vertical_labels(double px) {
    x_label_offset = 30 + px;
    height = kTop + kPlotH + kBottom + std::max(0.0, px - 6);
  }
  /// Sets the character size to `scale` (0.75: tick labels) whatever the page size.
  void text_size(double scale) const { plschr(0, scale * kTextReference / (width + height)); }
  // Normalised page coordinates of the plot area.
  double x0() const { return kLeft / width; }
  double x1() const { return (kLeft + kPlotW) / width; }
  double y0() const { return (height - kTop - kPlotH) / height; }
  double y1() const { return (height - kTop) / height; }
  double px_x() const { return (x.hi - x.lo) / kPlotW; }  // data units per pixel
  double px_y() const { return (y.hi - y.lo) / kPlotH; }
};

/// One PLplot stream that renders an SVG of `width`×`height` into memory. The stream is ended
/// and the previously current stream restored whatever happens; ending the stream closes the
/// memory file (PLplot fcloses it), which leaves the text in buffer_.
class SvgStream {
 public:
  SvgStream(double width, double height) {
    plsexit(on_plplot_exit);
    plsabort(on_plplot_abort);
    file_ = open_memstream(&buffer_, &size_);
    if (!file_) throw std::runtime_error("cannot open a memory stream for an SVG plot");
    plgstrm(&previous_);
    plmkstrm(&stream_);
    plsdev("svg");
    plsfile(file_);
    plspage(0, 0, static_cast<PLINT>(width), static_cast<PLINT>(height), 0, 0);
    plscmap0n(kBand + kSeriesColors);
    plscol0(0, 255, 255, 255);
    plscol0(kInk, 0, 0, 0);
    plscol0(kGrid, 228, 228, 228);
    plscol0(kReference, 110, 110, 110);
    for (int i = 0; i < kSeriesColors; ++i) {
      plscol0(kFirstSeries + i, kPalette[i][0], kPalette[i][1], kPalette[i][2]);
      plscol0a(kBand + i, kPalette[i][0], kPalette[i][1], kPalette[i][2], 0.18);
    }
    plinit();
    pladv(0);
  }
  SvgStream(const SvgStream&) = delete;
  SvgStream& operator=(const SvgStream&) = delete;
  ~SvgStream() {
    if (!ended_) end();
    std::free(buffer_);
  }

  /// Ends the stream and returns the SVG text.
  std::string finish() {
    end();
    std::string out(buffer_ ? buffer_ : "", size_);
    if (out.find("</svg>") == std::string::npos) throw std::runtime_error("PLplot wrote an incomplete SVG");
    return out;
  }

 private:
  void end() {
    plsstrm(stream_);
    plend1();
    plsstrm(previous_);
    ended_ = true;
  }
  FILE* file_ = nullptr;
  char* buffer_ = nullptr;
  size_t size_ = 0;
  PLINT previous_ = 0, stream_ = -1;
  bool ended_ = false;
};

/// Grid, box, tick labels (none on a category axis), the axis labels and the title. Leaves the
/// plot area's viewport and window current.
void draw_axes(const Frame& f, const std::string& title, const std::string& x_label, const std::string& y_label,
               bool log_x, bool log_y, bool numeric_x) {
  f.text_size(0.75);
  plvpor(f.x0(), f.x1(), f.y0(), f.y1());
  plwind(f.x.lo, f.x.hi, f.y.lo, f.y.hi);
  const std::string xl = log_x ? "l" : "", yl = log_y ? "l" : "";
  plcol0(kGrid);
  pllsty(1);
  plwidth(1);
  plbox((numeric_x ? "g" + xl : std::string()).c_str(), 0, 0, ("g" + yl).c_str(), 0, 0);
  plcol0(kInk);
  plbox(((numeric_x ? "bcnst" : "bc") + xl).c_str(), 0, 0, ("bcnstv" + yl).c_str(), 0, 0);
  f.text_size(0.85);
  plmtex("b", f.x_label_offset / kLabelHeight, 0.5, 0.5, escaped(x_label).c_str());
  plmtex("l", 4.6, 0.5, 0.5, escaped(y_label).c_str());
  f.text_size(1.05);
  plmtex("t", 1.3, 0.5, 0.5, escaped(shortened(title, 90)).c_str());
  f.text_size(0.75);
}

void draw_no_data(const Frame& f) {
  plcol0(kReference);
  plptex(0.5 * (f.x.lo + f.x.hi), 0.5 * (f.y.lo + f.y.hi), 1, 0, 0.5, "no data");
}

/// A filled marker centred on (x, y): circle, square, triangle or diamond by `kind`; `r` in
/// pixels, ux and uy the data units per pixel.
void draw_marker(int kind, double x, double y, double ux, double uy, double r) {
  std::vector<PLFLT> px, py;
  auto at = [&](double ax, double ay) {
    px.push_back(x + ax * r * ux);
    py.push_back(y + ay * r * uy);
  };
  switch (kind % 4) {
    case 0:
      for (int i = 0; i < 16; ++i) at(std::cos(i * M_PI / 8), std::sin(i * M_PI / 8));
      break;
    case 1:
      at(-0.85, -0.85), at(0.85, -0.85), at(0.85, 0.85), at(-0.85, 0.85);
      break;
    case 2:
      at(0, 1.1), at(-1, -0.7), at(1, -0.7);
      break;
    default:
      at(0, 1.15), at(1, 0), at(0, -1.15), at(-1, 0);
  }
  plfill(static_cast<PLINT>(px.size()), px.data(), py.data());
}

/// The index ranges [a, b) over which x and y are finite (a NaN breaks a curve).
std::vector<std::pair<size_t, size_t>> finite_runs(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<std::pair<size_t, size_t>> runs;
  size_t start = 0;
  bool open = false;
  for (size_t i = 0; i <= x.size(); ++i) {
    const bool ok = i < x.size() && std::isfinite(x[i]) && std::isfinite(y[i]);
    if (ok && !open) start = i, open = true;
    if (!ok && open) runs.push_back({start, i}), open = false;
  }
  return runs;
}

/// The legend in its own viewport right of the plot area, in pixel coordinates; entries beyond
/// what fits are summarised as "... N more".
void draw_legend(const Frame& f, const std::vector<LegendEntry>& entries) {
  if (entries.empty()) return;
  const double x0 = f.legend_x, x1 = f.width - 5;
  plvpor(x0 / f.width, x1 / f.width, f.y0(), f.y1());
  plwind(0, x1 - x0, 0, f.legend_h);
  const size_t capacity = f.legend_rows * f.legend_columns;
  const size_t shown = entries.size() > capacity ? capacity - 1 : entries.size();
  for (size_t i = 0; i < shown; ++i) {
    const LegendEntry& e = entries[i];
    const double x = static_cast<double>(i / f.legend_rows) * f.legend_w;
    const double y = f.legend_h - (static_cast<double>(i % f.legend_rows) + 0.5) * kLegendRow;
    plcol0(e.color);
    pllsty(e.style);
    plwidth(2);
    PLFLT lx[2] = {x, x + kLegendSample - 8}, ly[2] = {y, y};
    plline(2, lx, ly);
    pllsty(1);
    plwidth(1);
    if (e.marker >= 0) draw_marker(e.marker, x + 0.5 * (kLegendSample - 8), y, 1, 1, 4);
    plcol0(kInk);
    plptex(x + kLegendSample, y, 1, 0, 0, escaped(shortened(e.label, kLegendChars)).c_str());
  }
  if (shown < entries.size()) {
    const double x = static_cast<double>(shown / f.legend_rows) * f.legend_w;
    const double y = f.legend_h - (static_cast<double>(shown % f.legend_rows) + 0.5) * kLegendRow;
    plcol0(kReference);
    plptex(x, y, 1, 0, 0, ("... and " + std::to_string(entries.size() - shown) + " more").c_str());
  }
}

}  // namespace

std::string render_line_plot(const LinePlot& plot) {
  Frame f;
  std::vector<LegendEntry> entries;
  size_t colored = 0;
  std::vector<size_t> index;  // colour index of each series
  const bool bands = std::count_if(plot.series.begin(), plot.series.end(), [](const LineSeries& s) {
                       return !s.reference;
                     }) <= static_cast<long>(kMaxBandedSeries);
  for (const LineSeries& s : plot.series) {
    const size_t k = s.reference ? 0 : colored++;
    index.push_back(k);
    if (!s.label.empty())
      entries.push_back({s.label, s.reference ? kReference : color_of(k), s.reference ? 2 : style_of(k), -1});
    for (size_t i = 0; i < s.x.size(); ++i) {
      const double y = scaled(s.y[i], plot.log_y);
      if (!std::isfinite(y) || !std::isfinite(s.x[i])) continue;
      f.x.add(s.x[i]);
      f.y.add(y);
      if (bands && !s.lo.empty()) f.y.add(scaled(s.lo[i], plot.log_y)), f.y.add(scaled(s.hi[i], plot.log_y));
    }
  }
  const bool no_data = f.x.empty();
  f.x.pad();
  f.y.pad();
  f.fit_legend(entries);
  SvgStream stream(f.width, f.height);
  draw_axes(f, plot.title, plot.x_label, plot.y_label, false, plot.log_y, true);
  if (no_data) draw_no_data(f);
  for (size_t n = 0; n < plot.series.size(); ++n) {
    const LineSeries& s = plot.series[n];
    const size_t k = index[n];
    std::vector<double> y(s.y.size()), lo(s.lo.size()), hi(s.hi.size());
    for (size_t i = 0; i < y.size(); ++i) y[i] = scaled(s.y[i], plot.log_y);
    for (size_t i = 0; i < lo.size(); ++i) lo[i] = scaled(s.lo[i], plot.log_y), hi[i] = scaled(s.hi[i], plot.log_y);
    if (bands && !lo.empty() && !s.reference) {
      plcol0(band_of(k));
      for (auto [a, b] : finite_runs(s.x, lo)) {
        std::vector<PLFLT> px, py;
        for (size_t i = a; i < b; ++i)
          if (std::isfinite(hi[i])) px.push_back(s.x[i]), py.push_back(lo[i]);
        for (size_t i = b; i-- > a;)
          if (std::isfinite(hi[i])) px.push_back(s.x[i]), py.push_back(hi[i]);
        if (px.size() >= 3) plfill(static_cast<PLINT>(px.size()), px.data(), py.data());
      }
    }
    plcol0(s.reference ? kReference : color_of(k));
    pllsty(s.reference ? 2 : style_of(k));
    plwidth(s.reference ? 1.5 : 2);
    for (auto [a, b] : finite_runs(s.x, y)) {
      if (b - a == 1)
        draw_marker(0, s.x[a], y[a], f.px_x(), f.px_y(), 3);
      else
        plline(static_cast<PLINT>(b - a), s.x.data() + a, y.data() + a);
    }
    pllsty(1);
    plwidth(1);
  }
  draw_legend(f, entries);
  return stream.finish();
}

namespace {

/// Where render_point_plot puts a point: categories spread their series side by side around each
/// slot; numeric x follows the axis scale.
struct PointLayout {
  const PointPlot& plot;
  size_t n_series;
  double spread;  // the offset between neighbouring series in a category slot
  bool categorical() const { return !plot.categories.empty(); }
  double x(const PointSeries& s, size_t k, size_t i) const {
    if (categorical()) return s.x[i] + (static_cast<double>(k) - 0.5 * static_cast<double>(n_series - 1)) * spread;
    return scaled(s.x[i], plot.log_x);
  }
  static double err(const PointSeries& s, size_t i) { return i < s.err.size() ? s.err[i] : std::nan(""); }
};

/// Widens f's ranges to hold every finite point and its error bar; whether there was one.
bool fit_points(Frame& f, const PointLayout& layout) {
  bool any = false;
  for (size_t k = 0; k < layout.n_series; ++k) {
    const PointSeries& s = layout.plot.series[k];
    for (size_t i = 0; i < s.x.size(); ++i) {
      const double y = scaled(s.y[i], layout.plot.log_y), x = layout.x(s, k, i);
      if (!std::isfinite(y) || !std::isfinite(x)) continue;
      any = true;
      f.x.add(x);
      f.y.add(y);
      const double e = PointLayout::err(s, i);
      if (std::isfinite(e)) f.y.add(scaled(s.y[i] - e, layout.plot.log_y)), f.y.add(scaled(s.y[i] + e, layout.plot.log_y));
    }
  }
  return any;
}

/// The category names under the x axis, horizontal or (when they do not fit their slots) vertical.
void draw_categories(const Frame& f, const PointPlot& plot, bool vertical) {
  plcol0(kInk);
  const double width = f.x.hi - f.x.lo;
  for (size_t i = 0; i < plot.categories.size(); ++i) {
    const std::string text = escaped(shortened(plot.categories[i], kCategoryChars));
    const double pos = (static_cast<double>(i) - f.x.lo) / width;
    if (vertical)
      plmtex("bv", 0.6, pos, 1.0, text.c_str());
    else
      plmtex("b", 1.5, pos, 0.5, text.c_str());
  }
}

/// Series k: its error bars, its connecting line when the plot asks for one, its markers.
void draw_point_series(const Frame& f, const PointLayout& layout, size_t k) {
  const PointPlot& plot = layout.plot;
  const PointSeries& s = plot.series[k];
  std::vector<PLFLT> xs, ys;
  plcol0(color_of(k));
  for (size_t i = 0; i < s.x.size(); ++i) {
    const double x = layout.x(s, k, i), y = scaled(s.y[i], plot.log_y);
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    xs.push_back(x);
    ys.push_back(y);
    const double e = PointLayout::err(s, i);
    if (std::isfinite(e) && e > 0) {
      PLFLT bx[1] = {x}, lo[1] = {scaled(s.y[i] - e, plot.log_y)}, hi[1] = {scaled(s.y[i] + e, plot.log_y)};
      if (!std::isfinite(lo[0])) lo[0] = f.y.lo;  // log axis: the bar reaches below zero
      plwidth(1.5);
      plerry(1, bx, lo, hi);
      plwidth(1);
    }
  }
  if (plot.connect && xs.size() > 1) {
    pllsty(style_of(k));
    plwidth(1.5);
    plline(static_cast<PLINT>(xs.size()), xs.data(), ys.data());
    pllsty(1);
    plwidth(1);
  }
  for (size_t i = 0; i < xs.size(); ++i) draw_marker(static_cast<int>(k), xs[i], ys[i], f.px_x(), f.px_y(), 4);
}

}  // namespace

std::string render_point_plot(const PointPlot& plot) {
  Frame f;
  const bool categorical = !plot.categories.empty();
  const size_t n_series = plot.series.size();
  std::vector<LegendEntry> entries;
  if (n_series > 1 || (n_series == 1 && !plot.series[0].label.empty()))
    for (size_t k = 0; k < n_series; ++k)
      entries.push_back({plot.series[k].label, color_of(k), style_of(k), static_cast<int>(k)});
  // Category labels horizontal when each fits in its slot, else vertical with a deeper margin.
  size_t longest = 0;
  for (const std::string& c : plot.categories) longest = std::max(longest, utf8_length(shortened(c, kCategoryChars)));
  const double slot = categorical ? kPlotW / static_cast<double>(plot.categories.size()) : 0;
  const bool vertical = categorical && static_cast<double>(longest) * kCharW > 0.95 * slot;
  if (vertical) f.fit_vertical_labels(static_cast<double>(longest) * kCharW);
  const PointLayout layout{plot, n_series, n_series > 1 ? std::min(0.5, 0.6 / static_cast<double>(n_series)) : 0};
  const bool any = fit_points(f, layout);
  if (categorical) {
    f.x.lo = -0.5;
    f.x.hi = static_cast<double>(plot.categories.size()) - 0.5;
  } else {
    f.x.pad();
  }
  f.y.pad();
  f.fit_legend(entries);
  SvgStream stream(f.width, f.height);
  draw_axes(f, plot.title, plot.x_label, plot.y_label, plot.log_x && !categorical, plot.log_y, !categorical);
  if (!any) draw_no_data(f);
  if (categorical) draw_categories(f, plot, vertical);
  for (size_t k = 0; k < n_series; ++k) draw_point_series(f, layout, k);
  draw_legend(f, entries);
  return stream.finish();
}

}  // namespace tn
