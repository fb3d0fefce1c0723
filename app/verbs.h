#pragma once
// One function per CLI verb (micromamba/CLI11 pattern): each registers its subcommand and options
// and returns the action that main() runs after parsing. Actions return the process exit code;
// errors are thrown (ConfigError/DataError → 2, anything else → 1; see main.cpp).
#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace tn::app {

using Action = std::function<int()>;

/// The check of a --seed option (a uint64): a whole number from 0 to 2^64 - 1. CLI11 alone would
/// read "-1" as 2^64 - 1 (strtoull), and its NonNegativeNumber names a range of 309 digits.
inline CLI::Validator seed_check() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        const bool digits = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
        const bool fits = digits && (value.size() < 20 || (value.size() == 20 && value <= "18446744073709551615"));
        return fits ? "" : "Value " + value + " is not a whole number from 0 to 18446744073709551615";
      },
      "0..2^64-1");
}

Action add_train_verb(CLI::App& app);
Action add_eval_verb(CLI::App& app);
Action add_forward_verb(CLI::App& app);
Action add_bench_verb(CLI::App& app);
Action add_generate_verb(CLI::App& app);
Action add_sweep_verb(CLI::App& app);
Action add_analyze_verb(CLI::App& app);
Action add_report_verb(CLI::App& app);
Action add_predict_verb(CLI::App& app);
Action add_tokenize_verb(CLI::App& app);
Action add_data_verb(CLI::App& app);
/// `completion bash` and `manpage`: made from `app`, the root, once every verb is on it.
Action add_completion_verb(CLI::App& app);
Action add_manpage_verb(CLI::App& app);

}  // namespace tn::app
