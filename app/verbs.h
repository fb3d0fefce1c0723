#pragma once
// One function per CLI verb (micromamba/CLI11 pattern): each registers its subcommand and options
// and returns the action that main() runs after parsing. Actions return the process exit code;
// errors are thrown (ConfigError/DataError → 2, anything else → 1; see main.cpp).
#include <CLI/CLI.hpp>
#include <functional>

namespace tn::app {

using Action = std::function<int()>;

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

}  // namespace tn::app
