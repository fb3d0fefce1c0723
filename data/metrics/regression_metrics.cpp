#include "data/metrics/regression_metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "data/metrics/check_sizes.h"

namespace tn {

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  check_metric_sizes("pearson", x, y);
  const size_t n = x.size();
  if (n < 2) return 0.0;
  const auto constant = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [&](double e) { return e == v.front(); });
  };
  if (constant(x) || constant(y)) return 0.0;  // exactly, before rounding in the means can hide it
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(n);
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(n);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    const double dx = x[i] - mx, dy = y[i] - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx == 0 || syy == 0) return 0.0;
  return std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
}

std::vector<double> average_ranks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t start = 0; start < order.size();) {
    size_t end = start + 1;
    while (end < order.size() && values[order[end]] == values[order[start]]) ++end;
    const double rank = 0.5 * static_cast<double>(start + 1 + end);  // mean of ranks start+1 .. end
    for (size_t k = start; k < end; ++k) ranks[order[k]] = rank;
    start = end;
  }
  return ranks;
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  check_metric_sizes("spearman", x, y);
  return pearson(average_ranks(x), average_ranks(y));
}

std::vector<std::pair<std::string, double>> regression_metrics(const std::vector<std::string>& names,
                                                                const std::vector<double>& predictions,
                                                                const std::vector<double>& targets) {
  std::vector<std::pair<std::string, double>> out;
  for (const std::string& name : names) {
    if (name == "pearson") out.emplace_back(name, pearson(predictions, targets));
    else if (name == "spearman") out.emplace_back(name, spearman(predictions, targets));
    else throw ShapeError("[regression_metrics] unknown metric `" + name + "` (known: pearson, spearman)");
  }
  return out;
}

}  // namespace tn
