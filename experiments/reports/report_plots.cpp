#include "experiments/reports/report_plots.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>

#include "experiments/reports/flat_json.h"
#include "experiments/plots/svg_plot.h"

namespace tn {

namespace {
using nlohmann::json;

constexpr size_t kMaxLocalitySeries = 12;  // more run directories: one mean curve per row

/// The runs of `row` a curve is drawn from: its done runs, else all of them; and the label suffix
/// saying which state the others were in.
std::vector<const RunRecord*> curve_runs(const ReportInputs& in, const ReportRow& row, std::string& suffix) {
  std::vector<const RunRecord*> done, all;
  for (size_t r : row.runs) {
    all.push_back(&in.runs[r]);
    if (in.runs[r].done()) done.push_back(&in.runs[r]);
  }
  if (!done.empty()) return done;
  std::vector<std::string> states;
  for (const RunRecord* run : all)
    if (std::find(states.begin(), states.end(), run->state) == states.end()) states.push_back(run->state);
  for (size_t i = 0; i < states.size(); ++i) suffix += (i ? "/" : " (") + states[i];
  suffix += ")";
  return all;
}

/// Mean, min and max over the curves at each step any of them has.
LineSeries pooled_curve(const std::string& label, const std::vector<const StepCurve*>& curves) {
  std::map<double, std::vector<double>> at;
  for (const StepCurve* c : curves)
    for (size_t i = 0; i < c->step.size(); ++i) at[c->step[i]].push_back(c->value[i]);
  LineSeries s;
  s.label = label;
  for (const auto& [step, values] : at) {
    double sum = 0, lo = values[0], hi = values[0];
    for (double v : values) sum += v, lo = std::min(lo, v), hi = std::max(hi, v);
    s.x.push_back(step);
    s.y.push_back(sum / static_cast<double>(values.size()));
    s.lo.push_back(lo);
    s.hi.push_back(hi);
  }
  if (curves.size() < 2) s.lo.clear(), s.hi.clear();
  return s;
}

/// Positive values spanning more than a factor of 10: a log axis reads better.
bool wants_log(const std::vector<double>& values) {
  double lo = INFINITY, hi = 0;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    if (v <= 0) return false;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return hi > 0 && hi / lo > 10;
}

/// A metric's axis label with its unit: losses in nats, perplexity exp(loss), shares as fractions.
std::string metric_label(const std::string& metric) {
  const std::string name = metric.substr(metric.rfind('.') == std::string::npos ? 0 : metric.rfind('.') + 1);
  if (name == "loss") return metric + " (nats)";
  if (name == "ppl") return metric + " (exp of the loss in nats)";
  if (name == "accuracy" || name == "f1") return metric + " (fraction)";
  return metric;
}

bool wants_log(const LinePlot& p) {
  std::vector<double> all;
  for (const LineSeries& s : p.series) all.insert(all.end(), s.y.begin(), s.y.end()), all.insert(all.end(), s.lo.begin(), s.lo.end());
  return wants_log(all);
}

/// A line plot of one curve per row; `curve_of` picks a run's curve (null: none).
template <class CurveOf>
std::optional<LinePlot> row_curves(const ReportInputs& in, const ReportTable& t, CurveOf curve_of) {
  LinePlot plot;
  bool any = false;
  for (const ReportRow& row : t.rows) {
    std::string suffix;
    std::vector<const StepCurve*> curves;
    for (const RunRecord* run : curve_runs(in, row, suffix))
      if (const StepCurve* c = curve_of(*run); c && !c->step.empty()) curves.push_back(c);
    if (curves.empty()) continue;
    any = true;
    plot.series.push_back(pooled_curve(row.label + suffix, curves));
  }
  if (!any) return std::nullopt;
  if (plot.series.size() == 1 && t.rows.size() == 1) plot.series[0].label.clear();
  return plot;
}

std::string band_note(const LinePlot& p) {
  const bool banded = std::any_of(p.series.begin(), p.series.end(), [](const LineSeries& s) { return !s.lo.empty(); });
  return banded && p.series.size() <= kMaxBandedSeries ? "; band: min to max" : "";
}

std::string file_stem(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

/// The x positions of the rows for a per-row plot: categories (the row labels, or with --by the
/// axis' values in order) or, when the --by axis is numeric, its values; and which series each
/// row belongs to (the other keys' values; one series without --by).
struct RowAxis {
  std::vector<std::string> categories;
  std::vector<double> x;          // per row
  std::vector<std::string> group;  // per row: its series label
  std::vector<std::string> groups;
  std::string label = "point";
  bool log_x = false;
};

RowAxis row_axis(const ReportTable& t, bool use_by) {
  RowAxis a;
  if (!use_by || t.by.empty()) {
    for (size_t i = 0; i < t.rows.size(); ++i) {
      a.categories.push_back(t.rows[i].label);
      a.x.push_back(static_cast<double>(i));
      a.group.push_back("");
    }
    a.groups = {""};
    return a;
  }
  const size_t k = std::find(t.keys.begin(), t.keys.end(), t.by) - t.keys.begin();
  a.label = t.by;
  std::vector<double> numbers;
  for (const ReportRow& row : t.rows) {
    std::string g;
    for (size_t i = 0; i < t.keys.size(); ++i) {
      if (i == k || row.values[i].empty()) continue;
      if (std::find(t.label_keys.begin(), t.label_keys.end(), t.keys[i]) == t.label_keys.end()) continue;
      if (!g.empty()) g += ' ';
      g += t.short_keys[i] + "=" + row.values[i];
    }
    a.group.push_back(g);
    if (std::find(a.groups.begin(), a.groups.end(), g) == a.groups.end()) a.groups.push_back(g);
    if (t.by_numeric) {
      double v = 0;
      parse_number(row.values[k], v);
      a.x.push_back(v);
      numbers.push_back(v);
    } else {
      auto it = std::find(a.categories.begin(), a.categories.end(), row.values[k]);
      if (it == a.categories.end()) it = a.categories.insert(a.categories.end(), row.values[k]);
      a.x.push_back(static_cast<double>(it - a.categories.begin()));
    }
  }
  if (t.by_numeric) {
    double lo = INFINITY, hi = -INFINITY;
    for (double v : numbers) lo = std::min(lo, v), hi = std::max(hi, v);
    a.log_x = lo > 0 && hi / lo >= 100;
  }
  return a;
}

/// The final value of `metric` per row, with the paper's values as their own series.
std::optional<PointPlot> final_plot(const ReportTable& t, const std::string& metric) {
  const RowAxis axis = row_axis(t, true);
  PointPlot p;
  p.title = metric + " per point (mean ± std over seeds)";
  p.x_label = axis.label;
  p.y_label = metric_label(metric);
  p.categories = axis.categories;
  p.log_x = axis.log_x;
  p.connect = t.by_numeric && !t.by.empty();
  bool any = false;
  std::vector<double> all;
  for (const std::string& g : axis.groups) {
    PointSeries measured, paper;
    measured.label = g.empty() ? "measured" : g;
    paper.label = g.empty() ? "paper" : g + " (paper)";
    for (size_t r = 0; r < t.rows.size(); ++r) {
      if (axis.group[r] != g) continue;
      const PooledStat& s = t.rows[r].metrics.at(metric);
      if (s.has_mean()) {
        measured.x.push_back(axis.x[r]);
        measured.y.push_back(s.mean);
        measured.err.push_back(s.std);
        all.push_back(s.mean);
        any = true;
      }
      if (auto it = t.rows[r].paper.find(metric); it != t.rows[r].paper.end()) {
        paper.x.push_back(axis.x[r]);
        paper.y.push_back(it->second);
        all.push_back(it->second);
      }
    }
    p.series.push_back(measured);
    if (!paper.x.empty()) p.series.push_back(paper);
  }
  if (!any) return std::nullopt;
  if (p.series.size() == 1) p.series[0].label.clear();
  p.log_y = wants_log(all);
  return p;
}

std::optional<LinePlot> locality_plot(const ReportInputs& in, const ReportTable& t) {
  size_t with = 0;
  for (const RunRecord& run : in.runs) with += run.locality.has_value();
  if (with == 0) return std::nullopt;
  LinePlot p;
  p.title = with > kMaxLocalitySeries ? "Locality l(r): mean per point" : "Locality l(r) per run";
  p.x_label = "r (window as a fraction of the sequence)";
  p.y_label = "l(r) (share of attention mass in the window)";
  double lo = INFINITY, hi = -INFINITY;
  for (const ReportRow& row : t.rows) {
    std::vector<const StepCurve*> pooled;
    std::vector<StepCurve> holders;
    holders.reserve(row.runs.size());
    for (size_t r : row.runs) {
      const RunRecord& run = in.runs[r];
      if (!run.locality) continue;
      for (double v : run.locality->r) lo = std::min(lo, v), hi = std::max(hi, v);
      holders.push_back({run.locality->r, run.locality->l});
      if (with > kMaxLocalitySeries) {
        pooled.push_back(&holders.back());
      } else {
        LineSeries s;
        s.label = row.label + (run.seed ? " seed " + std::to_string(*run.seed) : "");
        s.x = run.locality->r;
        s.y = run.locality->l;
        p.series.push_back(std::move(s));
      }
    }
    if (!pooled.empty()) p.series.push_back(pooled_curve(row.label, pooled));
  }
  LineSeries uniform;
  uniform.label = "uniform (l = r)";
  uniform.reference = true;
  uniform.x = {lo, hi};
  uniform.y = {lo, hi};
  p.series.push_back(uniform);
  return p;
}

/// Per-layer RSD of the gradient statistics (summary analysis.grad_stats.layers[].rsd).
std::optional<PointPlot> grad_rsd_plot(const ReportInputs& in, const ReportTable& t) {
  const RowAxis axis = row_axis(t, false);
  std::map<int64_t, std::vector<std::string>> layer_mixers;  // the mixers seen at each layer index
  std::vector<std::map<int64_t, std::vector<double>>> per_row(t.rows.size());
  for (size_t r = 0; r < t.rows.size(); ++r) {
    for (size_t i : t.rows[r].runs) {
      const RunRecord& run = in.runs[i];
      if (!run.done() || !run.summary->analysis.is_object()) continue;
      const json& gs = run.summary->analysis.value("grad_stats", json());
      if (!gs.is_object() || !gs.contains("layers") || !gs["layers"].is_array()) continue;
      for (const json& layer : gs["layers"]) {
        if (!layer.is_object() || !layer.contains("rsd") || !layer["rsd"].is_number()) continue;
        const int64_t index = layer.value("layer", int64_t{0});
        std::vector<std::string>& mixers = layer_mixers[index];
        const std::string mixer = layer.contains("mixer") && layer["mixer"].is_string() ? layer["mixer"].get<std::string>() : "";
        if (std::find(mixers.begin(), mixers.end(), mixer) == mixers.end()) mixers.push_back(mixer);
        per_row[r][index].push_back(layer["rsd"].get<double>());
      }
    }
  }
  if (layer_mixers.empty()) return std::nullopt;
  PointPlot p;
  p.title = "Gradient RSD per layer (mean ± std over seeds)";
  p.x_label = axis.label;
  p.y_label = "RSD of mean |dL/ds| (std / mean over steps)";
  p.categories = axis.categories;
  for (const auto& [index, mixers] : layer_mixers) {
    PointSeries s;  // named by its mixer when every point has the same one there
    s.label = "layer " + std::to_string(index) +
              (mixers.size() == 1 && !mixers[0].empty() ? " (" + mixers[0] + ")" : "");
    for (size_t r = 0; r < t.rows.size(); ++r) {
      const auto it = per_row[r].find(index);
      if (it == per_row[r].end()) continue;
      const PooledStat st = pool(it->second);
      s.x.push_back(axis.x[r]);
      s.y.push_back(st.mean);
      s.err.push_back(st.std);
    }
    p.series.push_back(std::move(s));
  }
  return p;
}
}  // namespace

std::vector<ReportPlot> make_report_plots(const ReportInputs& in, const ReportTable& t) {
  std::vector<ReportPlot> plots;
  auto add_line = [&](std::optional<LinePlot> p, const std::string& file) {
    if (p) plots.push_back({"plots/" + file + ".svg", p->title, render_line_plot(*p)});
  };
  auto add_points = [&](std::optional<PointPlot> p, const std::string& file) {
    if (p) plots.push_back({"plots/" + file + ".svg", p->title, render_point_plot(*p)});
  };
  if (auto p = row_curves(in, t, [](const RunRecord& run) { return &run.train_loss; })) {
    p->title = "Training loss (mean over seeds" + band_note(*p) + ")";
    p->x_label = "step (optimizer updates)";
    p->y_label = "training loss (nats)";
    p->log_y = wants_log(*p);
    add_line(p, "train_loss");
  }
  std::string curve_metric;
  for (const std::string& m : t.metrics)
    if (m.rfind("valid.", 0) == 0) {
      curve_metric = m;
      break;
    }
  if (!curve_metric.empty()) {
    auto curve = [&](const RunRecord& run) -> const StepCurve* {
      const auto it = run.evals.find(curve_metric);
      return it == run.evals.end() ? nullptr : &it->second;
    };
    if (auto p = row_curves(in, t, curve)) {
      p->title = curve_metric + " during training (mean over seeds" + band_note(*p) + ")";
      p->x_label = "step (optimizer updates)";
      p->y_label = metric_label(curve_metric);
      p->log_y = wants_log(*p);
      add_line(p, file_stem(curve_metric) + "_curve");
    }
  }
  for (const std::string& m : t.metrics) add_points(final_plot(t, m), "final_" + file_stem(m));
  add_line(locality_plot(in, t), "locality");
  add_points(grad_rsd_plot(in, t), "grad_rsd");
  return plots;
}

}  // namespace tn
