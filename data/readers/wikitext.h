#pragma once
// WikiText-style token files under the language-model data protocol (datasets/README.md; the PyTorch
// reference's read_lines / load_lm_splits).
#include <string>
#include <utility>
#include <vector>

namespace tn {

/// Splits a file on '\n' only; a final newline does not start a new line ("a\nb\n" -> {"a", "b"},
/// "a\nb" -> {"a", "b"}, "" -> {}). '\r' and other whitespace stay in the line (the word split
/// removes them). Throws DataError naming the path (missing, unreadable, a directory, not UTF-8 text
/// or containing NUL bytes) with a fix hint (set --data-root or TRANSNORMER_DATA;
/// `transnormer data fetch` downloads WikiText-103).
std::vector<std::string> read_lines(const std::string& path);

/// Holds out the LAST round(frac * n) lines (round half up, i.e. floor(frac * n + 0.5)) as
/// validation; returns {train_lines, valid_lines}. frac = 0 holds out nothing. Throws ConfigError
/// (data.split_valid_from_train) when frac is outside [0, 1) or when it would hold out no line or
/// every line.
std::pair<std::vector<std::string>, std::vector<std::string>> split_valid_from_train(
    std::vector<std::string> lines, double frac);

}  // namespace tn
