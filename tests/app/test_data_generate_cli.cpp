// `transnormer data generate listops`, `pathfinder` and `aan`: a small set through the binary, and
// its refusals (exit 2: a bad option named, existing files kept without --overwrite); a generated
// AAN set trains configs/small/lra/retrieval_t1.yaml for a few steps.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tests/app/cli_runner.h"

using namespace tn::test;

namespace {
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

int64_t count_lines(const std::string& text) {
  int64_t n = 0;
  for (const char c : text) n += c == '\n';
  return n;
}

/// A small set into `out` with `seed`, and `extra` options.
CliResult generate(const std::string& out, int seed, const std::string& extra, const std::string& dir) {
  return run_cli("data generate listops --out '" + out + "' --train 40 --valid 5 --test 6 --min-length 10 "
                 "--max-length 100 --seed " + std::to_string(seed) + extra, dir);
}
}  // namespace

TEST_CASE("cli: data generate listops writes the three files, and refuses to overwrite them") {
  const std::string dir = scratch_dir("data_generate");
  const std::string out = dir + "/listops";
  CliResult r = generate(out, 3, "", dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string train = slurp(out + "/basic_train.tsv");
  const std::string val = slurp(out + "/basic_val.tsv");
  const std::string test = slurp(out + "/basic_test.tsv");
  CHECK(train.rfind("Source\tTarget\n", 0) == 0);
  CHECK(count_lines(train) == 41);
  CHECK(count_lines(val) == 6);
  CHECK(count_lines(test) == 7);
  CHECK(contains(train, "\t"));
  CHECK(contains(r.err, "basic_train.tsv: 40 examples, mean length"));
  CHECK(contains(r.err, "% accepted"));

  // The same folder again, another seed, no --overwrite: refused, the files kept.
  CliResult again = generate(out, 4, "", dir);
  CHECK(again.code == 2);
  CHECK(contains(again.err, "already exists"));
  CHECK(contains(again.err, "--overwrite"));
  CHECK((slurp(out + "/basic_train.tsv") == train));
  CHECK((slurp(out + "/basic_val.tsv") == val));
  CHECK((slurp(out + "/basic_test.tsv") == test));

  CliResult replaced = generate(out, 4, " --overwrite", dir);
  CHECK(replaced.code == 0);
  CHECK((slurp(out + "/basic_train.tsv") != train));
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: data generate listops refuses a bad option with exit 2, naming it") {
  const std::string dir = scratch_dir("data_generate_bad");
  CliResult r = run_cli("data generate listops --out '" + dir + "/lo' --max-args 1", dir);
  CHECK(r.code == 2);
  CHECK(contains(r.err, "--max-args 1"));
  CHECK(!std::filesystem::exists(dir + "/lo"));

  CliResult no_out = run_cli("data generate listops --train 5", dir);
  CHECK(no_out.code == 2);
  CHECK(contains(no_out.err, "--out"));

  CliResult no_generator = run_cli("data generate", dir);
  CHECK(no_generator.code == 2);
  CHECK(contains(no_generator.err, "name a generator"));
  std::filesystem::remove_all(dir);
}

namespace {
CliResult generate_pathfinder(const std::string& out, int seed, const std::string& extra, const std::string& dir) {
  return run_cli("data generate pathfinder --out '" + out + "' --count 12 --batch-size 5 --seed " +
                     std::to_string(seed) + extra,
                 dir);
}
}  // namespace

TEST_CASE("cli: data generate pathfinder writes images and metadata, and refuses to overwrite them") {
  const std::string dir = scratch_dir("data_generate_pathfinder");
  const std::string out = dir + "/pathfinder";
  CliResult r = generate_pathfinder(out, 3, "", dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  for (const char* file : {"/imgs/0/sample_0.png", "/imgs/0/sample_4.png", "/imgs/1/sample_4.png",
                           "/imgs/2/sample_1.png", "/metadata/0.npy", "/metadata/1.npy", "/metadata/2.npy"})
    CHECK_MESSAGE(std::filesystem::exists(out + file), file);
  CHECK(!std::filesystem::exists(out + "/imgs/2/sample_2.png"));
  const std::string metadata = slurp(out + "/metadata/0.npy");
  CHECK(count_lines(metadata) == 5);
  CHECK(count_lines(slurp(out + "/metadata/2.npy")) == 2);
  CHECK(metadata.rfind("imgs/0 sample_0.png 0 ", 0) == 0);
  CHECK(contains(metadata, " 1.0 14 4 2 0.5 1 1\n"));
  CHECK(contains(r.err, "images/s"));
  CHECK(contains(r.err, "% positive"));
  const std::string image = slurp(out + "/imgs/1/sample_3.png");

  // The same folder again, another seed, no --overwrite: refused, the set kept.
  CliResult again = generate_pathfinder(out, 4, "", dir);
  CHECK(again.code == 2);
  CHECK(contains(again.err, "not empty"));
  CHECK(contains(again.err, "--overwrite"));
  CHECK((slurp(out + "/imgs/1/sample_3.png") == image));
  CHECK((slurp(out + "/metadata/0.npy") == metadata));

  // --overwrite that fails (an impossible continuity) leaves the old set as it was.
  CliResult impossible = generate_pathfinder(out, 4, " --overwrite --continuity 1e30", dir);
  CHECK(impossible.code == 2);
  CHECK((slurp(out + "/imgs/1/sample_3.png") == image));
  CHECK((slurp(out + "/metadata/0.npy") == metadata));

  CliResult replaced = generate_pathfinder(out, 4, " --overwrite", dir);
  CHECK(replaced.code == 0);
  CHECK((slurp(out + "/imgs/1/sample_3.png") != image));
  CHECK(!std::filesystem::exists(out + "/.pathfinder-staging"));

  // A file that is not the set's, even inside imgs/ or metadata/, is refused and kept.
  for (const char* foreign : {"/imgs/notes.txt", "/imgs/1/mine.jpg", "/metadata/README"}) {
    CAPTURE(foreign);
    write_text(out + foreign, "mine");
    CliResult refused = generate_pathfinder(out, 5, " --overwrite", dir);
    CHECK(refused.code == 2);
    CHECK(contains(refused.err, "not a file of a Pathfinder set"));
    CHECK(slurp(out + foreign) == "mine");
    std::filesystem::remove(out + foreign);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: data generate pathfinder refuses a bad option with exit 2, naming it") {
  const std::string dir = scratch_dir("data_generate_pathfinder_bad");
  CliResult zero = run_cli("data generate pathfinder --out '" + dir + "/pf' --count 0", dir);
  CHECK(zero.code == 2);
  CHECK(contains(zero.err, "--count 0"));
  CliResult length = run_cli("data generate pathfinder --out '" + dir + "/pf' --count 3 --contour-length 0", dir);
  CHECK(length.code == 2);
  CHECK(contains(length.err, "--contour-length 0"));
  CHECK(!std::filesystem::exists(dir + "/pf"));

  CliResult no_count = run_cli("data generate pathfinder --out '" + dir + "/pf'", dir);
  CHECK(no_count.code == 2);
  CHECK(contains(no_count.err, "--count"));

  CliResult extra = run_cli("data generate pathfinder --out '" + dir + "/pf' --count 3 --nope", dir);
  CHECK(extra.code == 2);
  CHECK(contains(extra.err, "--nope"));
  CHECK(!std::filesystem::exists(dir + "/pf"));

  CliResult unknown = run_cli("data generate pathfinder32 --out '" + dir + "/pf'", dir);
  CHECK(unknown.code == 2);
  CHECK(contains(unknown.err, "unknown generator 'pathfinder32'"));
  CHECK(contains(unknown.err, "listops, pathfinder"));
  std::filesystem::remove_all(dir);
}

namespace {
CliResult generate_aan(const std::string& out, int seed, const std::string& extra, const std::string& dir) {
  return run_cli("data generate aan --out '" + out + "' --count 40 --seed " + std::to_string(seed) + extra, dir);
}
}  // namespace

TEST_CASE("cli: data generate aan writes the three AAN files, and refuses to overwrite them") {
  const std::string dir = scratch_dir("data_generate_aan");
  const std::string out = dir + "/aan";
  CliResult r = generate_aan(out, 3, "", dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string train = slurp(out + "/new_aan_pairs.train.tsv");
  const std::string eval = slurp(out + "/new_aan_pairs.eval.tsv");
  CHECK(count_lines(train) == 32);
  CHECK(count_lines(eval) == 4);
  CHECK(count_lines(slurp(out + "/new_aan_pairs.test.tsv")) == 4);
  CHECK((train.rfind("0\tsyn-0-1\tsyn-0-2\t", 0) == 0 || train.rfind("1\tsyn-0-1\tsyn-0-2\t", 0) == 0));
  CHECK(contains(r.err, "new_aan_pairs.train.tsv: 32 pairs, 50.0 % label 1, mean document length"));

  // The same folder again, another seed, no --overwrite: refused, the files kept.
  CliResult again = generate_aan(out, 4, "", dir);
  CHECK(again.code == 2);
  CHECK(contains(again.err, "already exists"));
  CHECK(contains(again.err, "--overwrite"));
  CHECK((slurp(out + "/new_aan_pairs.train.tsv") == train));
  CHECK((slurp(out + "/new_aan_pairs.eval.tsv") == eval));

  CliResult same = generate_aan(dir + "/again", 3, "", dir);  // the same seed elsewhere: the same bytes
  CHECK(same.code == 0);
  CHECK((slurp(dir + "/again/new_aan_pairs.train.tsv") == train));

  CliResult replaced = generate_aan(out, 4, " --overwrite", dir);
  CHECK(replaced.code == 0);
  CHECK((slurp(out + "/new_aan_pairs.train.tsv") != train));
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: data generate aan refuses a bad option with exit 2, naming it") {
  const std::string dir = scratch_dir("data_generate_aan_bad");
  CliResult few = run_cli("data generate aan --out '" + dir + "/aan' --count 5", dir);
  CHECK(few.code == 2);
  CHECK(contains(few.err, "--count 5"));
  CliResult seed = run_cli("data generate aan --out '" + dir + "/aan' --seed -1", dir);
  CHECK(seed.code == 2);
  CHECK(contains(seed.err, "--seed"));
  CliResult extra = run_cli("data generate aan --out '" + dir + "/aan' --topics 3", dir);
  CHECK(extra.code == 2);
  CHECK(contains(extra.err, "--topics"));
  CHECK(!std::filesystem::exists(dir + "/aan"));

  CliResult no_out = run_cli("data generate aan --count 40", dir);
  CHECK(no_out.code == 2);
  CHECK(contains(no_out.err, "--out"));
  write_text(dir + "/file", "x");
  CliResult file = run_cli("data generate aan --out '" + dir + "/file'", dir);
  CHECK(file.code == 2);
  CHECK(contains(file.err, "is a file, not a folder"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: a generated AAN set trains configs/small/lra/retrieval_t1.yaml") {
  const std::string dir = scratch_dir("data_generate_aan_train");
  REQUIRE(run_cli("data generate aan --out '" + dir + "/data/lra/aan-generated' --count 100 --seed 1", dir).code == 0);
  CliResult r = run_cli("train '" + source_dir() + "/configs/small/lra/retrieval_t1.yaml' --data-root '" + dir +
                            "/data' --out '" + dir + "/run' --set train.max_steps=6 --set train.eval_every=6 "
                            "--set train.test_every=6 --set train.log_every=3",
                        dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json summary = nlohmann::json::parse(slurp(dir + "/run/summary.json"));
  CHECK(summary["valid"]["examples"] == 10);
  CHECK(summary["test"]["examples"] == 10);
  CHECK(summary["test"]["accuracy"].get<double>() >= 0.0);
  CHECK(contains(r.err, "AAN train: 80 examples"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: data generate refuses an --out no folder can be made at (exit 2) before generating, for every generator") {
  const std::string dir = scratch_dir("data_generate_unmakeable");
  std::filesystem::create_symlink(dir + "/loop_b", dir + "/loop_a");
  std::filesystem::create_symlink(dir + "/loop_a", dir + "/loop_b");
  std::filesystem::create_symlink("/nonexistent/target", dir + "/dangling");
  // Each exited 1 after the generation, with "cannot create the staging folder" or "cannot put
  // the new folder in place: it is not a folder any more".
  const std::vector<std::pair<std::string, std::string>> outs = {
      {"/proc/transnormer_set", "virtual file system"},
      {dir + "/loop_a", "a loop of links"},
      {dir + "/dangling", "which does not exist"},
      {dir + "/" + std::string(300, 's'), "over the 255 a file name may have"}};
  for (const char* generate : {"listops --train 20 --valid 5 --test 5", "aan --count 20", "pathfinder --count 4"}) {
    for (const auto& entry : outs) {  // no structured binding: CAPTURE is a lambda (clang 14)
      const std::string& out = entry.first;
      const std::string& reason = entry.second;
      CAPTURE(generate);
      CAPTURE(out);
      const CliResult r = run_cli(std::string("data generate ") + generate + " --out '" + out + "'", dir);
      CHECK(r.code == 2);
      CHECK(r.err.find(reason) != std::string::npos);
    }
  }
}

TEST_CASE("cli: data fetch runs the fetch script into the data root, and a failed download exits 1") {
  const std::string dir = scratch_dir("data_fetch");
  // A curl that records what it was asked for and fails as an unreachable server does (22): no
  // network is needed, and nothing is fetched.
  std::filesystem::create_directories(dir + "/bin");
  write_text(dir + "/bin/curl", "#!/bin/sh\necho \"$@\" >> '" + dir + "/curl.log'\nexit 22\n");
  std::filesystem::permissions(dir + "/bin/curl", std::filesystem::perms::owner_all);
  const std::string root = dir + "/root";
  const CliResult r = run_command_line("PATH='" + dir + "/bin':\"$PATH\" '" + binary() + "' data fetch --data-root '" +
                                           root + "'",
                                       dir + "/out.txt", dir + "/err.txt");
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK(contains(r.err, "data fetch: into " + root + " with "));
  CHECK(contains(r.err, "scripts/fetch_data.sh"));
  CHECK(contains(r.err, "ended with exit code 22"));
  // The script's first part, from its official source, into the root given.
  CHECK(contains(slurp(dir + "/curl.log"), "https://dl.fbaipublicfiles.com/fairseq/gpt2_bpe/encoder.json"));
  CHECK(std::filesystem::is_directory(root + "/gpt2_bpe"));

  // A download that stalls: SIGTERM stops the script and its curl too (exit 143, nothing left
  // running), not the command alone.
  write_text(dir + "/bin/curl", "#!/bin/sh\necho $$ > '" + dir + "/curl.pid'\nexec sleep 60\n");
  const pid_t fetch = spawn_command_line("env PATH='" + dir + "/bin':\"$PATH\" '" + binary() + "' data fetch --data-root '" +
                                             dir + "/root2'",
                                         dir + "/out2.txt", dir + "/err2.txt");
  for (int i = 0; i < 100 && !std::filesystem::exists(dir + "/curl.pid"); ++i) ::usleep(100000);
  REQUIRE(std::filesystem::exists(dir + "/curl.pid"));
  ::usleep(200000);
  ::kill(fetch, SIGTERM);
  int status = 0;
  ::waitpid(fetch, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 143);
  const pid_t curl = std::stoi(slurp(dir + "/curl.pid"));
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i, ::usleep(100000)) gone = ::kill(curl, 0) != 0;
  CHECK(gone);
  // An empty --data-root is refused, not taken as $TRANSNORMER_DATA.
  const CliResult empty = run_cli("data fetch --data-root ''", dir);
  CHECK(empty.code == 2);
  CHECK(contains(empty.err, "--data-root is empty"));
}

TEST_CASE("cli: missing LRA data names the command that makes or fetches it, with the folder the spec reads") {
  const std::string dir = scratch_dir("lra_missing");
  const std::string root = dir + "/empty";
  std::filesystem::create_directories(root);
  auto dry = [&](const std::string& config) {
    return run_cli("train " + std::string(TN_SOURCE_DIR) + "/configs/small/lra/" + config + ".yaml --dry-run --data-root '" +
                       root + "'",
                   dir);
  };
  const CliResult pathfinder = dry("pathfinder_t1"), listops = dry("listops_t1"), retrieval = dry("retrieval_t1"),
                  text = dry("text_t1");
  CHECK(pathfinder.code == 2);
  CHECK(contains(pathfinder.err, "`transnormer data generate pathfinder --out " + root +
                                     "/lra/pathfinder-generated --count N --contour-length L` (the count and difficulty "
                                     "the spec's comment gives; LRA's own is --count 200000 --contour-length 14)"));
  CHECK(listops.code == 2);
  CHECK(contains(listops.err, "`transnormer data generate listops --out " + root + "/lra/listops-generated`"));
  CHECK(contains(listops.err, "`transnormer data fetch --lra` downloads the 8.23 GB release"));
  CHECK(retrieval.code == 2);
  CHECK(contains(retrieval.err, "`transnormer data generate aan --out " + root + "/lra/aan-generated`"));
  CHECK(contains(retrieval.err, "8.23 GB"));
  CHECK(text.code == 2);
  CHECK(contains(text.err, "`transnormer data fetch` fetches aclImdb_v1.tar.gz"));
}
