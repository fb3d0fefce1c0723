// transnormer: the experiment runner's command line. Exit codes (README "Commands"): 0 success,
// 1 runtime failure, 2 bad input (config, data, arguments), 128 + signal for a run stopped by
// SIGTERM/SIGINT after saving (143, 130). The only place errors become codes.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <string>

#include "app/command_line.h"
#include "app/verbs.h"
#include "core/version.h"
#include "core/error.h"
#include "core/process/stop_signal.h"
#include "experiments/runner/runner.h"

int main(int argc, char** argv) {
  tn::app::keep_command_line(argc, argv);
  auto logger = spdlog::stderr_color_mt("transnormer");
  logger->set_pattern("[%H:%M:%S] %^%l%$ %v");
  spdlog::set_default_logger(logger);

  CLI::App app{"transnormer: train and evaluate linear transformers (TransNormer, EMNLP 2022) on CPU"};
  app.require_subcommand(1, 1);
  app.set_version_flag("--version", std::string("transnormer ") + tn::program_version());
  std::vector<std::pair<CLI::App*, tn::app::Action>> verbs;
  auto add = [&](tn::app::Action (*register_verb)(CLI::App&)) {
    const size_t before = app.get_subcommands({}).size();
    tn::app::Action action = register_verb(app);
    verbs.emplace_back(app.get_subcommands({})[before], std::move(action));
  };
  add(tn::app::add_train_verb);
  add(tn::app::add_eval_verb);
  add(tn::app::add_forward_verb);
  add(tn::app::add_bench_verb);
  add(tn::app::add_generate_verb);
  add(tn::app::add_sweep_verb);
  add(tn::app::add_analyze_verb);
  add(tn::app::add_report_verb);
  add(tn::app::add_predict_verb);
  add(tn::app::add_tokenize_verb);
  add(tn::app::add_data_verb);

  // A first word that is no verb gets its own message (CLI11 would say "A subcommand is required").
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (auto& [sub, action] : verbs) {
      names += (names.empty() ? "" : ", ") + sub->get_name();
      known = known || sub->get_name() == argv[1];
    }
    if (!known) {
      std::cerr << "unknown command '" << argv[1] << "': the commands are " << names
                << " (transnormer --help, transnormer COMMAND --help)\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  try {
    for (auto& [sub, action] : verbs)
      if (sub->parsed()) return action();
    return 2;
  } catch (const tn::ConfigError& e) {
    spdlog::error("{}", e.what());
    return 2;
  } catch (const tn::DataError& e) {
    spdlog::error("{}", e.what());
    return 2;
  } catch (const tn::TrainingInterrupted& e) {
    spdlog::warn("{}", e.what());
    return tn::exit_code_for_signal(e.signal);
  } catch (const tn::TrainingDiverged& e) {
    spdlog::error("{}", e.what());
    return 1;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}
