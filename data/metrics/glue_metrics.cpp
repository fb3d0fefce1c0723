#include "data/metrics/glue_metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"

namespace tn {
namespace {

template <class T>
void check_sizes(const char* what, const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size())
    throw ShapeError(std::string("[") + what + "] " + std::to_string(a.size()) + " predictions but " +
                     std::to_string(b.size()) + " labels");
}

}  // namespace

double accuracy(const std::vector<int32_t>& predictions, const std::vector<int32_t>& labels) {
  check_sizes("accuracy", predictions, labels);
  if (labels.empty()) return 0.0;
  int64_t correct = 0;
  for (size_t i = 0; i < labels.size(); ++i) correct += predictions[i] == labels[i];
  return static_cast<double>(correct) / static_cast<double>(labels.size());
}

double binary_f1(const std::vector<int32_t>& predictions, const std::vector<int32_t>& labels) {
  check_sizes("binary_f1", predictions, labels);
  int64_t tp = 0, fp = 0, fn = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    const bool p = predictions[i] == 1, t = labels[i] == 1;
    tp += p && t;
    fp += p && !t;
    fn += !p && t;
  }
  const int64_t denominator = 2 * tp + fp + fn;
  return denominator == 0 ? 0.0 : 2.0 * static_cast<double>(tp) / static_cast<double>(denominator);
}

double matthews_corrcoef(const std::vector<int32_t>& predictions, const std::vector<int32_t>& labels) {
  check_sizes("matthews_corrcoef", predictions, labels);
  int32_t n_classes = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (predictions[i] < 0 || labels[i] < 0) throw ShapeError("[matthews_corrcoef] negative class id");
    n_classes = std::max({n_classes, predictions[i] + 1, labels[i] + 1});
  }
  std::vector<double> t(static_cast<size_t>(n_classes), 0.0), p(static_cast<size_t>(n_classes), 0.0);
  double c = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    t[static_cast<size_t>(labels[i])] += 1;
    p[static_cast<size_t>(predictions[i])] += 1;
    c += predictions[i] == labels[i];
  }
  const auto s = static_cast<double>(labels.size());
  double tp = 0, pp = 0, tt = 0;
  for (int32_t k = 0; k < n_classes; ++k) {
    tp += t[k] * p[k];
    pp += p[k] * p[k];
    tt += t[k] * t[k];
  }
  const double denominator = (s * s - pp) * (s * s - tt);
  return denominator == 0 ? 0.0 : (c * s - tp) / std::sqrt(denominator);
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  check_sizes("pearson", x, y);
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
  check_sizes("spearman", x, y);
  return pearson(average_ranks(x), average_ranks(y));
}

std::vector<std::pair<std::string, double>> classification_metrics(const std::vector<std::string>& names,
                                                                    const std::vector<int32_t>& predictions,
                                                                    const std::vector<int32_t>& labels) {
  std::vector<std::pair<std::string, double>> out;
  for (const std::string& name : names) {
    if (name == "accuracy") out.emplace_back(name, accuracy(predictions, labels));
    else if (name == "f1") out.emplace_back(name, binary_f1(predictions, labels));
    else if (name == "mcc") out.emplace_back(name, matthews_corrcoef(predictions, labels));
    else throw ShapeError("[classification_metrics] unknown metric `" + name + "` (known: accuracy, f1, mcc)");
  }
  return out;
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
