// `transnormer tokenize`: lines to GPT-2 (or fairseq dictionary) ids and back through the binary,
// and its refusals (exit 2 with FILE:line).
#include <doctest/doctest.h>

#include <string>

#include "tests/app/cli_runner.h"

using namespace tn::test;

namespace {
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("cli: tokenize writes one line of GPT-2 ids per input line, and --decode inverts it") {
  const std::string dir = scratch_dir("tokenize");
  write_text(dir + "/in.txt", "don't\n\na   b\ncafé 2019");  // no final newline: still a line
  CliResult r = run_cli("tokenize --bpe gpt2 " + dir + "/in.txt", dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out == "9099 470\n\n64 220 220 275\n66 1878 2634 13130\n");
  CHECK(contains(r.err, "MB/s"));

  write_text(dir + "/ids.txt", r.out);
  CliResult d = run_cli("tokenize --bpe gpt2 --decode " + dir + "/ids.txt", dir);
  REQUIRE(d.code == 0);
  CHECK(d.out == "don't\n\na   b\ncafé 2019\n");

  // With --dict, model ids: GPT-2 13 (".") is the dictionary's first symbol, id 4.
  const std::string dict = data_root() + "/gpt2_bpe/dict.txt";
  write_text(dir + "/dot.txt", ".\n");
  CliResult m = run_cli("tokenize --bpe gpt2 --dict '" + dict + "' " + dir + "/dot.txt", dir);
  REQUIRE(m.code == 0);
  CHECK(m.out == "4\n");
  write_text(dir + "/model_ids.txt", "0 4 2 50264\n");  // <s> . </s> <mask>
  CliResult md = run_cli("tokenize --bpe gpt2 --dict '" + dict + "' --decode " + dir + "/model_ids.txt", dir);
  REQUIRE(md.code == 0);
  CHECK(md.out == ".\n");
}

TEST_CASE("cli: tokenize round-trips wiki.test.raw through the binary") {
  const std::string dir = scratch_dir("tokenize_wiki");
  const std::string raw = data_root() + "/wikitext-2-raw/wiki.test.raw";
  CliResult r = run_cli("tokenize --bpe gpt2 '" + raw + "'", dir);
  REQUIRE(r.code == 0);
  write_text(dir + "/ids.txt", r.out);
  CliResult d = run_cli("tokenize --bpe gpt2 --decode " + dir + "/ids.txt", dir);
  REQUIRE(d.code == 0);
  CHECK(d.out == slurp(raw));
}

TEST_CASE("cli: tokenize refuses bad input with exit 2 and FILE:line") {
  const std::string dir = scratch_dir("tokenize_bad");
  write_text(dir + "/latin1.txt", "fine\nalso fine\ncaf\xE9\n");
  CliResult u = run_cli("tokenize --bpe gpt2 " + dir + "/latin1.txt", dir);
  CHECK(u.code == 2);
  CHECK(contains(u.err, "latin1.txt:3: not valid UTF-8"));

  write_text(dir + "/words.txt", "1 2 3\n4 five 6\n");
  CliResult w = run_cli("tokenize --bpe gpt2 --decode " + dir + "/words.txt", dir);
  CHECK(w.code == 2);
  CHECK(contains(w.err, "words.txt:2: \"five\" is not a token id"));

  write_text(dir + "/range.txt", "1 2 3\n50257\n");
  CliResult o = run_cli("tokenize --bpe gpt2 --decode " + dir + "/range.txt", dir);
  CHECK(o.code == 2);
  CHECK(contains(o.err, "range.txt:2: the id 50257 is outside 0..50256"));

  CliResult nodir = run_cli("tokenize --bpe gpt2 --bpe-dir " + dir + "/no_bpe " + dir + "/words.txt", dir);
  CHECK(nodir.code == 2);
  CHECK(contains(nodir.err, "no_bpe"));
  CHECK(contains(nodir.err, "`transnormer data fetch`"));

  // A dictionary of another vocabulary: GPT-2 ids missing from it.
  write_text(dir + "/dict.txt", "13 5\n262 4\n");
  CliResult dict = run_cli("tokenize --bpe gpt2 --dict " + dir + "/dict.txt " + dir + "/words.txt", dir);
  CHECK(dict.code == 2);
  CHECK(contains(dict.err, "50255 GPT-2 ids are missing from it, the first 0"));

  CliResult missing = run_cli("tokenize --bpe gpt2 " + dir + "/nothing.txt", dir);
  CHECK(missing.code == 2);
  CHECK(contains(missing.err, "nothing.txt"));

  CliResult bad_bpe = run_cli("tokenize --bpe sentencepiece " + dir + "/words.txt", dir);
  CHECK(bad_bpe.code == 2);

  // /dev/zero never ends and has no lines: it grew to gigabytes, then exited 0 with no output.
  CliResult zero = run_cli("tokenize --bpe gpt2 /dev/zero", dir);
  CHECK(zero.code == 2);
  CHECK(contains(zero.err, "/dev/zero: is a device"));
  CHECK(run_cli("tokenize --bpe gpt2 /dev/null", dir).code == 0);  // empty input
  // A --dict that exists but is no file says what it is, not "no such file".
  CliResult dict_dir = run_cli("tokenize --bpe gpt2 --dict " + dir + " " + dir + "/words.txt", dir);
  CHECK(dict_dir.code == 2);
  CHECK(contains(dict_dir.err, "is a folder, not a dictionary file"));
}

TEST_CASE("cli: tokenize never takes a line too long for memory for the end of its input") {
  // Under ulimit -v 1 GB, a 900 MB line: it exited 0 with the lines before it only, dropping the
  // rest without a word (getline's ENOMEM read as the end of the input).
  const std::string dir = scratch_dir("tokenize_long_line");
  const CliResult r = run_command_line(
      "(ulimit -v 1000000; (printf 'hello world\\n'; head -c 900000000 /dev/zero | tr '\\0' a; printf '\\nlast\\n') | '" +
          binary() + "' tokenize --bpe gpt2 --data-root '" + data_root() + "' -)",
      dir + "/out.txt", dir + "/err.txt");
  CHECK(r.code == 1);
  CHECK(contains(r.err, "out of memory"));
}
