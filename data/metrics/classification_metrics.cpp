#include "data/metrics/classification_metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "data/metrics/check_sizes.h"

namespace tn {

double accuracy(const std::vector<int32_t>& predictions, const std::vector<int32_t>& labels) {
  check_metric_sizes("accuracy", predictions, labels);
  if (labels.empty()) return 0.0;
  int64_t correct = 0;
  for (size_t i = 0; i < labels.size(); ++i) correct += predictions[i] == labels[i];
  return static_cast<double>(correct) / static_cast<double>(labels.size());
}

double binary_f1(const std::vector<int32_t>& predictions, const std::vector<int32_t>& labels) {
  check_metric_sizes("binary_f1", predictions, labels);
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
  check_metric_sizes("matthews_corrcoef", predictions, labels);
  int32_t n_classes = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    if ((predictions[i] < 0 && predictions[i] != kNoPrediction) || labels[i] < 0)
      throw ShapeError("[matthews_corrcoef] negative class id");
    n_classes = std::max({n_classes, predictions[i] + 1, labels[i] + 1});
  }
  // kNoPrediction is class n_classes: predicted, never true.
  std::vector<double> t(static_cast<size_t>(n_classes) + 1, 0.0), p(static_cast<size_t>(n_classes) + 1, 0.0);
  double c = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    t[static_cast<size_t>(labels[i])] += 1;
    p[static_cast<size_t>(predictions[i] == kNoPrediction ? n_classes : predictions[i])] += 1;
    c += predictions[i] == labels[i];
  }
  const auto s = static_cast<double>(labels.size());
  double tp = 0, pp = 0, tt = 0;
  for (int32_t k = 0; k <= n_classes; ++k) {
    tp += t[k] * p[k];
    pp += p[k] * p[k];
    tt += t[k] * t[k];
  }
  const double denominator = (s * s - pp) * (s * s - tt);
  return denominator == 0 ? 0.0 : (c * s - tp) / std::sqrt(denominator);
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

}  // namespace tn
