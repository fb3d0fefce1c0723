#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/readers/wikitext.h"
#include "tests/test_paths.h"

using namespace tn;
namespace fs = std::filesystem;

namespace {

/// A per-process temp folder, removed at scope exit; file() writes a file into it.
struct TempFolder {
  fs::path path = fs::temp_directory_path() / ("tn_test_wikitext_" + std::to_string(::getpid()));
  TempFolder() { fs::create_directories(path); }
  ~TempFolder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name, const std::string& text) const {
    const std::string file_path = (path / name).string();
    std::ofstream(file_path, std::ios::binary | std::ios::trunc) << text;
    return file_path;
  }
};

std::string data_error(const std::string& path) {
  try {
    read_lines(path);
  } catch (const DataError& err) {
    return err.what();
  }
  return "";
}

}  // namespace

TEST_CASE("wikitext: read_lines splits on \\n only, and a final newline starts no line") {
  const TempFolder tmp;
  CHECK(read_lines(tmp.file("a.txt", "a b\n \nc\n")) ==
        std::vector<std::string>{"a b", " ", "c"});
  CHECK(read_lines(tmp.file("b.txt", "a\r\nb")) == std::vector<std::string>{"a\r", "b"});
  CHECK(read_lines(tmp.file("c.txt", "")).empty());
  CHECK(read_lines(tmp.file("d.txt", "\n")) == std::vector<std::string>{""});
  CHECK(read_lines(tmp.file("e.txt", "x\n\n")) == std::vector<std::string>{"x", ""});
  CHECK(read_lines(tmp.file("f.txt", "café ü\n")) == std::vector<std::string>{"café ü"});
}

TEST_CASE("wikitext: unusable files throw DataError naming the path and the fix") {
  const TempFolder tmp;
  const std::string missing = test::data_root() + "/wikitext-103/wiki.train.tokens.missing";
  const std::string message = data_error(missing);
  CHECK(message.find(missing) != std::string::npos);
  CHECK(message.find("TRANSNORMER_DATA") != std::string::npos);
  CHECK(message.find("`transnormer data fetch`") != std::string::npos);

  const std::string dir = test::data_root() + "/wikitext-103";
  CHECK(data_error(dir).find("directory") != std::string::npos);

  const std::string binary = tmp.file("nul.bin", std::string("ab\0cd", 5));
  CHECK(data_error(binary).find(binary) != std::string::npos);
  CHECK(data_error(binary).find("NUL") != std::string::npos);

  const std::string latin1 = tmp.file("latin1.txt", "caf\xe9\n");
  CHECK(data_error(latin1).find("UTF-8") != std::string::npos);
  CHECK(data_error(tmp.file("surrogate.txt", "\xed\xa0\x80")).find("UTF-8") !=
        std::string::npos);
  CHECK(data_error(tmp.file("cut.txt", "ok \xe6\x97")).find("UTF-8") != std::string::npos);
}

TEST_CASE("wikitext: split_valid_from_train holds out the last round-half-up fraction") {
  std::vector<std::string> lines;
  for (int i = 0; i < 10; ++i) lines.push_back("line " + std::to_string(i));

  auto [train, valid] = split_valid_from_train(lines, 0.25);  // 2.5 -> 3
  CHECK(train.size() == 7);
  REQUIRE(valid.size() == 3);
  CHECK(train.back() == "line 6");
  CHECK(valid.front() == "line 7");
  CHECK(valid.back() == "line 9");

  CHECK(split_valid_from_train(lines, 0.1).second.size() == 1);
  CHECK(split_valid_from_train(lines, 0.14).second.size() == 1);  // 1.4 -> 1
  CHECK(split_valid_from_train(lines, 0.0).first.size() == 10);
  CHECK(split_valid_from_train(lines, 0.0).second.empty());

  CHECK_THROWS_AS(split_valid_from_train(lines, 0.01), ConfigError);  // holds out 0 lines
  CHECK_THROWS_AS(split_valid_from_train(lines, 0.96), ConfigError);  // holds out all 10
  CHECK_THROWS_AS(split_valid_from_train(lines, 1.0), ConfigError);
  CHECK_THROWS_AS(split_valid_from_train(lines, -0.1), ConfigError);
  CHECK_THROWS_AS(split_valid_from_train({}, 0.1), ConfigError);
}
