#pragma once
// Regression metrics for a task with a real-valued target (GLUE's STS-B): Pearson and Spearman
// correlation, with the conventions of tests/golden/glue_metrics.json (scipy's, except that an
// undefined value is 0 rather than NaN), computed in double.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tn {

/// Pearson r. 0 when either vector is constant or there are fewer than 2 points.
/// Throws ShapeError when the sizes differ.
double pearson(const std::vector<double>& x, const std::vector<double>& y);

/// Spearman rho: Pearson r of the average ranks (tied values share the mean of their ranks).
/// 0 when undefined (as pearson). Throws ShapeError when the sizes differ.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

/// Average ranks, 1-based: ties get the mean of the ranks they span ([10, 20, 10] -> [1.5, 3, 1.5]).
std::vector<double> average_ranks(const std::vector<double>& values);

/// The named regression metrics ("pearson", "spearman") in the order given, as (name, value).
/// Throws ShapeError for another name or mismatched sizes.
std::vector<std::pair<std::string, double>> regression_metrics(const std::vector<std::string>& names,
                                                                const std::vector<double>& predictions,
                                                                const std::vector<double>& targets);

}  // namespace tn
