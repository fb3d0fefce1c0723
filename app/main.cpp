// transnormer: the experiment runner's command line. Exit codes (docs/cli/README.md "Exit codes"): 0 success,
// 1 runtime failure, 2 bad input (config, data, arguments), 128 + signal for a run stopped by
// SIGTERM/SIGINT after saving (143, 130). The only place errors become codes.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <filesystem>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <system_error>

#include "app/cli_errors.h"
#include "app/command_line.h"
#include "app/verbs.h"
#include "core/platform/comm/communicator.h"
#include "core/platform/version.h"
#include "core/error.h"
#include "core/platform/process/stop_signal.h"
#include "core/platform/system.h"
#include "experiments/runner/runner.h"

namespace {

using Verbs = std::vector<std::pair<CLI::App*, tn::app::Action>>;

/// Each repeatable option of `sub` (and of its own verbs) takes one value per occurrence, as
/// `--set a=1 --set b=2`: a word after it is the verb's next argument, not a second value
/// (`train --set k=v SPEC.yaml` reads SPEC.yaml as the spec, where CLI11 would take it as a --set).
void one_value_per_occurrence(CLI::App* sub) {
  for (CLI::Option* o : sub->get_options())
    if (o->nonpositional() && o->get_items_expected_max() > 1) o->expected(1)->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  for (CLI::App* child : sub->get_subcommands({})) one_value_per_occurrence(child);
}

/// Every verb registered on `app`, with the action that runs it once parsed.
Verbs register_verbs(CLI::App& app) {
  Verbs verbs;
  auto add = [&](tn::app::Action (*register_verb)(CLI::App&)) {
    const size_t before = app.get_subcommands({}).size();
    tn::app::Action action = register_verb(app);
    verbs.emplace_back(app.get_subcommands({})[before], std::move(action));
  };
  for (auto* register_verb : {tn::app::add_train_verb, tn::app::add_eval_verb, tn::app::add_forward_verb,
                              tn::app::add_bench_verb, tn::app::add_generate_verb, tn::app::add_sweep_verb,
                              tn::app::add_analyze_verb, tn::app::add_report_verb, tn::app::add_predict_verb,
                              tn::app::add_tokenize_verb, tn::app::add_data_verb, tn::app::add_completion_verb,
                              tn::app::add_manpage_verb})
    add(register_verb);
  for (const auto& entry : verbs) one_value_per_occurrence(entry.first);
  return verbs;
}

/// The verb called `name` as cli_error_text reads it: whether it takes --set, its options.
tn::app::CliVerb named_verb(const Verbs& verbs, const std::string& name) {
  tn::app::CliVerb verb{name, true, {}};
  for (const auto& [sub, action] : verbs) {
    if (sub->get_name() != name) continue;
    verb.takes_set = sub->get_option_no_throw("--set") != nullptr;
    for (const CLI::Option* o : sub->get_options())
      for (const std::string& l : o->get_lnames()) verb.options.push_back(l);
  }
  return verb;
}

/// Parses the command line; the exit code when it ends here (help, version, a parse error: 2),
/// nullopt when a verb is to run.
std::optional<int> parse_command_line(CLI::App& app, const Verbs& verbs, int argc, char** argv) {
  // A first word that is no verb gets its own message (CLI11 would say "A subcommand is required").
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const auto& [sub, action] : verbs) {
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
    if (const std::string text = tn::app::cli_error_text(e.what(), named_verb(verbs, argc > 1 ? argv[1] : ""));
        text != e.what()) {
      std::cerr << text << "\nRun with --help for more information.\n";
      return 2;
    }
    app.exit(e);
    return 2;
  }
  return std::nullopt;
}

/// Runs the parsed verb; its exit code, or the one its exception means (2 bad input, 1 runtime
/// failure, 128 + signal for a stopped run), the message logged.
int run_verb(const Verbs& verbs) {
  try {
    for (const auto& [sub, action] : verbs) {
      if (!sub->parsed()) continue;
      // Under an MPI launcher only `train` shares its work; any other verb would run N times over.
      if (tn::world().size() > 1 && sub->get_name() != "train")
        throw tn::ConfigError("`" + sub->get_name() + "` runs in one process: start it without mpirun or srun " +
                              "(only `train` is data-parallel)");
      return action();
    }
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
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the user gave that cannot hold outputs (a file, a dangling link, a read-only place)
    // is bad input; anything else (a full disk, an I/O error) a runtime failure.
    const std::errc c = static_cast<std::errc>(e.code().value());
    const bool bad_path = c == std::errc::not_a_directory || c == std::errc::file_exists ||
                          c == std::errc::permission_denied || c == std::errc::read_only_file_system ||
                          c == std::errc::is_a_directory;
    spdlog::error("{}: {}{}", e.path1().string(), e.code().message(),
                  bad_path ? "; give a path that is (or can become) a folder you may write, e.g. another --out"
                           : "");
    return bad_path ? 2 : 1;
  } catch (const std::bad_alloc&) {
    const tn::MemoryLimit limit = tn::memory_limit();
    spdlog::error("out of memory: this job needs more than the {:.1f} GiB this process may use ({}); lower the "
                  "batch, the model or the sequence length, or give the job more memory",
                  limit.bytes / 1073741824.0, limit.source);
    return 1;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}

/// Parses the command line and runs its verb; returns the exit code.
int run_command(int argc, char** argv) {
  CLI::App app{"transnormer: train and evaluate linear transformers (TransNormer, EMNLP 2022) on CPU"};
  app.require_subcommand(1, 1);
  app.set_version_flag("--version", std::string("transnormer ") + tn::program_version());
  const Verbs verbs = register_verbs(app);
  if (const std::optional<int> code = parse_command_line(app, verbs, argc, argv)) return *code;
  return run_verb(verbs);
}

/// Joins the MPI world when a launcher started this process; the ranks other than 0 log warnings
/// and errors only, each line saying which rank it is.
bool join_world(int* argc, char*** argv) {
  try {
    tn::start_world(argc, argv);
  } catch (const tn::ConfigError& e) {
    spdlog::error("{}", e.what());
    return false;
  }
  tn::Communicator& w = tn::world();
  if (w.size() > 1) {
    spdlog::default_logger()->set_pattern(fmt::format("[%H:%M:%S] [rank {}/{}] %^%l%$ %v", w.rank(), w.size()));
    if (w.rank() != 0) spdlog::set_level(spdlog::level::warn);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  tn::app::keep_command_line(argc, argv);
  auto logger = spdlog::stderr_color_mt("transnormer");
  logger->set_pattern("[%H:%M:%S] %^%l%$ %v");
  spdlog::set_default_logger(logger);
  // MPI's threads start with SIGTERM and SIGINT blocked, so a stop always reaches this thread
  // (core/platform/process/stop_signal.h): `train` polls it there, other verbs end at once.
  tn::block_stop_signals();
  const bool joined = join_world(&argc, &argv);
  tn::unblock_stop_signals();
  if (!joined) return 2;
  const int code = run_command(argc, argv);
  // Every rank ends the same way after success or a stop at the same step; after an error on one
  // rank, the others may wait in a collective, and the launcher ends them when this one exits.
  if (code == 0 || code == tn::exit_code_for_signal(SIGTERM) || code == tn::exit_code_for_signal(SIGINT))
    tn::stop_world();
  return code;
}
