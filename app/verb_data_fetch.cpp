#include "app/verb_data_fetch.h"

#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "core/error.h"
#include "core/platform/process/child_process.h"
#include "core/platform/process/stop_signal.h"
#include "data/data_root.h"

namespace tn::app {

namespace fs = std::filesystem;

std::string fetch_script_path() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "transnormer" / "scripts" / "fetch_data.sh";
    if (fs::is_regular_file(installed, ec)) return installed.string();
  }
#ifdef TN_SOURCE_SCRIPTS_DIR
  const fs::path source = fs::path(TN_SOURCE_SCRIPTS_DIR) / "fetch_data.sh";
  if (fs::is_regular_file(source, ec)) return source.string();
#endif
  return "";
}

namespace {

struct FetchArgs {
  std::string data_root;
  bool data_root_given = false;
  bool lra = false;
};

int run_fetch(const FetchArgs& args) {
  const std::string script = fetch_script_path();
  if (script.empty())
    throw IoError("data fetch: no fetch script beside this binary (share/transnormer/scripts/fetch_data.sh) nor in "
                  "the source tree it was built from; reinstall the package, or run scripts/fetch_data.sh from a "
                  "clone of the repository");
  if (args.data_root_given && args.data_root.empty())
    throw ConfigError("data fetch: --data-root is empty; give the folder to fetch into, or leave --data-root out "
                      "for $TRANSNORMER_DATA (else ./datasets)");
  const std::string root = resolve_data_root(args.data_root);
  install_stop_handlers();
  spdlog::info("data fetch: into {} with {}{}", root, script,
               args.lra ? " (and the 8.23 GB LRA release for ListOps and Retrieval)" : "");
  // The script's progress streams to this process's stdout and stderr as it comes.
  std::vector<std::string> words = {"bash", script};
  if (args.lra) words.push_back("--lra");
  words.push_back(root);
  pid_t pid = 0;
  try {
    pid = spawn_child(words, {.own_group = true});  // its own process group, which a stop signal is passed to
  } catch (const std::runtime_error& e) {
    throw IoError("data fetch: " + std::string(e.what()));
  }
  // A stop signal to this process stops the script and its downloads too (its process group), then
  // exits 128 + signal; the parts already fetched stay, and a rerun goes on from them.
  int status = 0;
  int asked = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (!asked && (asked = stop_signal()) != 0) ::kill(-pid, asked);
    ::usleep(100000);
  }
  if (asked) {
    spdlog::warn("data fetch: stopped by {}; rerun the command to go on (the parts already fetched are kept)",
                 signal_name(asked));
    return exit_code_for_signal(asked);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    spdlog::info("data fetch: the datasets are in {}", root);
    return 0;
  }
  spdlog::error("data fetch: {} ended with {}; its messages above say what failed (rerun it to go on: the parts "
                "already fetched are kept)",
                script, describe_child_status(status));
  return 1;
}

}  // namespace

std::pair<CLI::App*, Action> add_data_fetch(CLI::App& data) {
  auto args = std::make_shared<FetchArgs>();
  CLI::App* sub = data.add_subcommand(
      "fetch",
      "Download the datasets from their official sources into the data root, checking every file's sha256 (md5, "
      "as published, for IMDB and CIFAR-10): "
      "WikiText-103 and -2, GLUE, GPT-2 BPE, IMDB (LRA Text), CIFAR-10 (LRA Image); with --lra also the 8.23 GB "
      "LRA release (ListOps and Retrieval). Parts already there are skipped");
  sub->add_flag("--lra", args->lra, "also the LRA release (8.23 GB download)");
  CLI::Option* root = sub->add_option("--data-root", args->data_root, "dataset root (default $TRANSNORMER_DATA, else ./datasets)");
  return {sub, [args, root]() {
            args->data_root_given = root->count() > 0;
            return run_fetch(*args);
          }};
}

}  // namespace tn::app
