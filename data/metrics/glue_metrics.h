#pragma once
// The GLUE metrics (Wang et al. 2018): accuracy, binary F1, Matthews correlation, Pearson and
// Spearman correlation, with the conventions of tests/golden/glue_metrics.json (those of
// scikit-learn and scipy, except that every undefined value is 0 rather than NaN). All values are
// fractions (accuracy 0.9, not 90), computed in double.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tn {

/// Fraction of positions where predictions[i] == labels[i]. 0 for empty input.
/// Throws ShapeError when the sizes differ.
double accuracy(const std::vector<int32_t>& predictions, const std::vector<int32_t>& labels);

/// Binary F1 of class 1: 2tp / (2tp + fp + fn); 0 when 2tp + fp + fn = 0. Any class other than 1
/// counts as negative. Throws ShapeError when the sizes differ.
double binary_f1(const std::vector<int32_t>& predictions, const std::vector<int32_t>& labels);

/// Matthews correlation, multiclass form (Gorodkin 2004, as sklearn's matthews_corrcoef):
/// (c*s - sum_k t_k p_k) / sqrt((s^2 - sum_k p_k^2)(s^2 - sum_k t_k^2)), with s samples, c correct,
/// t_k / p_k the true / predicted counts of class k; equal to the binary formula for 2 classes.
/// 0 when the denominator is 0. Classes are any non-negative ids. Throws ShapeError when the sizes
/// differ or a class is negative.
double matthews_corrcoef(const std::vector<int32_t>& predictions, const std::vector<int32_t>& labels);

/// Pearson r. 0 when either vector is constant or there are fewer than 2 points.
/// Throws ShapeError when the sizes differ.
double pearson(const std::vector<double>& x, const std::vector<double>& y);

/// Spearman rho: Pearson r of the average ranks (tied values share the mean of their ranks).
/// 0 when undefined (as pearson). Throws ShapeError when the sizes differ.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

/// Average ranks, 1-based: ties get the mean of the ranks they span ([10, 20, 10] -> [1.5, 3, 1.5]).
std::vector<double> average_ranks(const std::vector<double>& values);

/// The named classification metrics ("accuracy", "f1", "mcc") in the order given, as
/// (name, value). Throws ShapeError for another name or mismatched sizes.
std::vector<std::pair<std::string, double>> classification_metrics(const std::vector<std::string>& names,
                                                                    const std::vector<int32_t>& predictions,
                                                                    const std::vector<int32_t>& labels);

/// The named regression metrics ("pearson", "spearman") in the order given, as (name, value).
/// Throws ShapeError for another name or mismatched sizes.
std::vector<std::pair<std::string, double>> regression_metrics(const std::vector<std::string>& names,
                                                                const std::vector<double>& predictions,
                                                                const std::vector<double>& targets);

}  // namespace tn
