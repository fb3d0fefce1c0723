// The Debian package: `cpack -G DEB` in the build folder makes transnormer_<version>_amd64.deb whose
// dependencies are the runtime libraries, and whose unpacked binary runs from any folder, finding
// the installed configs (share/transnormer/configs) by name.
#include <doctest/doctest.h>

#include <filesystem>

#include "tests/app/cli_runner.h"

using namespace tn::test;
namespace fs = std::filesystem;

TEST_CASE("package: cpack builds a .deb with its runtime dependencies, and its binary runs with the installed configs") {
  const std::string dir = scratch_dir("package");
  const fs::path build = fs::path(binary()).parent_path();
  const std::string log = dir + "/cpack.txt";
  REQUIRE(std::system(("cd '" + build.string() + "' && cpack -G DEB -B '" + dir + "/pkg' > '" + log + "' 2>&1").c_str()) == 0);
  fs::path deb;
  for (const auto& entry : fs::directory_iterator(dir + "/pkg"))
    if (entry.path().extension() == ".deb") deb = entry.path();
  INFO(slurp(log));
  REQUIRE_FALSE(deb.empty());
  REQUIRE(std::system(("dpkg-deb -I '" + deb.string() + "' > '" + dir + "/info.txt'").c_str()) == 0);
  const std::string info = slurp(dir + "/info.txt");
  CHECK(info.find("Package: transnormer") != std::string::npos);
  for (const char* lib : {"libdnnl", "libyaml-cpp", "libplplot", "libpcre2-8"}) {
    INFO(lib);
    CHECK(info.find(lib) != std::string::npos);
  }

  REQUIRE(std::system(("dpkg-deb -x '" + deb.string() + "' '" + dir + "/root'").c_str()) == 0);
  const std::string installed = dir + "/root/usr/bin/transnormer";
  REQUIRE(fs::exists(installed));
  CHECK(fs::exists(dir + "/root/usr/share/transnormer/configs/quickstart.yaml"));
  CHECK(fs::exists(dir + "/root/usr/share/doc/transnormer/README.md"));
  // The README's links into docs/ resolve beside it; the results' run records stay out.
  CHECK(fs::exists(dir + "/root/usr/share/doc/transnormer/docs/cli/train.md"));
  CHECK(fs::exists(dir + "/root/usr/share/doc/transnormer/docs/architecture.md"));
  CHECK(!fs::exists(dir + "/root/usr/share/doc/transnormer/docs/results/lra/runs"));
  CHECK(fs::exists(dir + "/root/usr/share/transnormer/scripts/format_mrpc.sh"));
  CHECK(fs::exists(dir + "/root/usr/share/transnormer/datasets/README.md"));
  CHECK(slurp(dir + "/root/usr/share/bash-completion/completions/transnormer").find("complete -o filenames -F _transnormer transnormer") !=
        std::string::npos);
  CHECK(slurp(dir + "/root/usr/share/man/man1/transnormer.1").find(".SS \"transnormer train\"") != std::string::npos);
  // `data fetch` runs the installed fetch script (a curl that fails at once: no network needed).
  fs::create_directories(dir + "/bin");
  write_text(dir + "/bin/curl", "#!/bin/sh\nexit 22\n");
  fs::permissions(dir + "/bin/curl", fs::perms::owner_all);
  const CliResult fetch = run_command_line("cd '" + dir + "' && PATH='" + dir + "/bin':\"$PATH\" '" + installed +
                                               "' data fetch --data-root '" + dir + "/data'",
                                           dir + "/fetch.out", dir + "/fetch.err");
  CHECK(fetch.code == 1);
  CHECK(fetch.err.find("with " + dir + "/root/usr/share/transnormer/scripts/fetch_data.sh") != std::string::npos);
  // From another folder, a config named alone is found in the installed share folder.
  const std::string cmd = "cd '" + dir + "' && TRANSNORMER_DATA='" + data_root() + "' '" + installed +
                          "' train quickstart.yaml --dry-run > '" + dir + "/dry.txt' 2> '" + dir + "/dry.err'";
  CHECK(std::system(cmd.c_str()) == 0);
  INFO(slurp(dir + "/dry.err"));
  CHECK(slurp(dir + "/dry.txt").find("share/transnormer/configs/quickstart.yaml") != std::string::npos);
  CHECK(slurp(dir + "/dry.txt").find("d_model: 128") != std::string::npos);
}
