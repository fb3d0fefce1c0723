#include "app/smoke.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "core/error.h"

namespace tn::app {

std::vector<std::string> smoke_overrides() {
  return {"train.max_steps=3",      "train.eval_every=0",         "train.test_every=0",
          "train.log_every=1",      "train.limit_eval_batches=2", "train.patience=0"};
}

void warn_smoke_overrides(const std::vector<std::string>& assignments) {
  for (const std::string& s : smoke_overrides())
    for (const std::string& o : assignments)
      if (o.substr(0, o.find('=')) == s.substr(0, s.find('=')) && o != s)
        spdlog::warn("--smoke runs with {} (its own value), not --set {}", s, o);
}

std::string smoke_folder_pattern(const std::string& name) {
  const char* tmp = std::getenv("TMPDIR");
  const std::filesystem::path base = tmp && *tmp ? tmp : "/tmp";
  return (base / ("transnormer-smoke-" + name + "-XXXXXX")).string();
}

std::string smoke_folder(const std::string& name) {
  const char* tmp = std::getenv("TMPDIR");
  std::error_code ec;
  if (tmp && *tmp && !std::filesystem::is_directory(tmp, ec))
    throw ConfigError(std::string("TMPDIR=") + tmp + " is not a folder, so the smoke test has no scratch place; "
                      "set TMPDIR to a folder that exists, or give --out");
  std::string pattern = smoke_folder_pattern(name);
  if (!::mkdtemp(pattern.data()))
    throw IoError(pattern + ": cannot make the smoke test's scratch folder (" + std::strerror(errno) +
                  "); give one with --out, or set TMPDIR");
  return pattern;
}

}  // namespace tn::app
