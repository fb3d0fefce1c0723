#pragma once
// Classification metrics for any task with classes (GLUE's, LRA's): accuracy, binary F1 and
// Matthews correlation, with the conventions of tests/golden/glue_metrics.json (scikit-learn's,
// except that every undefined value is 0 rather than NaN). Values are fractions (accuracy 0.9,
// not 90), computed in double.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tn {

/// A prediction that is no class (its logits were not finite): wrong under every metric; Matthews
/// correlation counts it as a class of its own.
inline constexpr int32_t kNoPrediction = -1;

/// Fraction of positions where predictions[i] == labels[i]. 0 for empty input.
/// Throws ShapeError when the sizes differ.
double accuracy(const std::vector<int32_t>& predictions, const std::vector<int32_t>& labels);

/// Binary F1 of class 1: 2tp / (2tp + fp + fn); 0 when 2tp + fp + fn = 0. Any class other than 1
/// counts as negative. Throws ShapeError when the sizes differ.
double binary_f1(const std::vector<int32_t>& predictions, const std::vector<int32_t>& labels);

/// Matthews correlation, multiclass form (Gorodkin 2004, as sklearn's matthews_corrcoef):
/// (c*s - sum_k t_k p_k) / sqrt((s^2 - sum_k p_k^2)(s^2 - sum_k t_k^2)), with s samples, c correct,
/// t_k / p_k the true / predicted counts of class k; equal to the binary formula for 2 classes.
/// 0 when the denominator is 0. Classes are any non-negative ids (and kNoPrediction among the
/// predictions). Throws ShapeError when the sizes differ or another id is negative.
double matthews_corrcoef(const std::vector<int32_t>& predictions, const std::vector<int32_t>& labels);

/// The named classification metrics ("accuracy", "f1", "mcc") in the order given, as
/// (name, value). Throws ShapeError for another name or mismatched sizes.
std::vector<std::pair<std::string, double>> classification_metrics(const std::vector<std::string>& names,
                                                                    const std::vector<int32_t>& predictions,
                                                                    const std::vector<int32_t>& labels);

}  // namespace tn
