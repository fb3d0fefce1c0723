// The resume command a stopped run prints is pasted as printed and continues the run, also when
// the run read its data from a root given with --data-root (not the one the environment names).
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/app/cli_runner.h"
#include "tests/app/tiny_spec.h"
#include "tests/test_paths.h"

using namespace tn::test;

TEST_CASE("cli: a run trained with --data-root prints a resume command that names the root, and it works") {
  const std::string dir = scratch_dir("resume_root");
  const std::string root = dir + "/my root";  // a space: the printed command quotes it
  std::filesystem::create_directories(root + "/tiny");
  {
    std::ifstream in(data_root() + "/wikitext-103/wiki.valid.tokens");
    std::ofstream out(root + "/tiny/train.tokens");
    std::string line;
    for (int i = 0; i < 1500 && std::getline(in, line); ++i) out << line << "\n";
  }
  // Only the root given with --data-root holds tiny/train.tokens: a command without it fails.
  std::string spec = tiny_spec(dir);
  spec.replace(spec.find("wikitext-103/wiki.valid.tokens"), std::string("wikitext-103/wiki.valid.tokens").size(),
               "tiny/train.tokens");
  write_text(dir + "/tiny.yaml", spec);
  CliChild child = spawn_cli("train " + dir + "/tiny.yaml --data-root '" + root +
                                 "' --set train.max_steps=60 --threads 1 --out " + dir + "/run",
                             dir, "run");
  const std::string metrics = dir + "/run/metrics.jsonl";
  for (int i = 0; i < 6000 && slurp(metrics).find("\"step\":20,") == std::string::npos; ++i) ::usleep(5000);
  ::kill(child.pid, SIGTERM);
  const CliResult stopped = wait_cli(child);
  INFO(stopped.err);
  REQUIRE(stopped.code == 143);
  const std::string from = "continue with `transnormer ";
  const size_t at = stopped.err.find(from);
  REQUIRE(at != std::string::npos);
  const std::string printed =
      stopped.err.substr(at + from.size(), stopped.err.find('`', at + from.size()) - at - from.size());
  CHECK(printed == "train --resume " + dir + "/run --data-root '" + root + "'");
  const CliResult resumed = run_cli(printed, dir);
  INFO(resumed.err);
  CHECK(resumed.code == 0);
  CHECK(std::filesystem::exists(dir + "/run/summary.json"));
}

TEST_CASE("cli: a resume whose data root gives another vocabulary is refused, and the run's checkpoint kept") {
  const std::string dir = scratch_dir("resume_other_data");
  // Two roots with a file of the same name: the first 1,500 lines of wiki.valid.tokens, and the
  // first 700 (fewer words: another vocabulary).
  for (const auto& [root, lines] : {std::pair<std::string, int>{dir + "/a", 1500}, {dir + "/b", 700}}) {
    std::filesystem::create_directories(root + "/tiny");
    std::ifstream in(data_root() + "/wikitext-103/wiki.valid.tokens");
    std::ofstream out(root + "/tiny/train.tokens");
    std::string line;
    for (int i = 0; i < lines && std::getline(in, line); ++i) out << line << "\n";
  }
  std::string spec = tiny_spec(dir);
  spec.replace(spec.find("wikitext-103/wiki.valid.tokens"), std::string("wikitext-103/wiki.valid.tokens").size(),
               "tiny/train.tokens");
  write_text(dir + "/tiny.yaml", spec);
  REQUIRE(run_cli("train " + dir + "/tiny.yaml --set train.max_steps=15 --threads 1 --data-root " + dir + "/a --out " +
                      dir + "/run",
                  dir)
              .code == 0);
  const std::string checkpoint = slurp(dir + "/run/checkpoint.safetensors");
  const CliResult other = run_cli("train --resume " + dir + "/run --set train.max_steps=30 --threads 1 --data-root " +
                                      dir + "/b",
                                  dir);
  INFO(other.err);
  CHECK(other.code == 2);
  CHECK(other.err.find(") gives a vocabulary of ") != std::string::npos);
  CHECK(other.err.find("resume with the data root the run was trained on") != std::string::npos);
  CHECK(slurp(dir + "/run/checkpoint.safetensors") == checkpoint);
  CHECK(run_cli("eval " + dir + "/run --threads 1 --data-root " + dir + "/a", dir).code == 0);
  // With its own root it continues.
  CHECK(run_cli("train --resume " + dir + "/run --set train.max_steps=30 --threads 1 --data-root " + dir + "/a", dir)
            .code == 0);
}
