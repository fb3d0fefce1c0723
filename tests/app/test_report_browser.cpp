// report.html in a real browser (Debian's headless Chromium, which scripts/setup.sh installs): the
// page of a real sweep renders its tables and every plot, logs no console message and makes no
// request beyond the file (Chromium's net log lists every URL it asked for; its own calls to
// Google's update and account services are left aside); the screenshot stays in the test's folder. The same check on a page with a script error
// and an outside image shows that it catches both.
#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <regex>
#include <sstream>

#include "tests/app/cli_runner.h"
#include "tests/app/tiny_spec.h"

using namespace tn::test;
namespace fs = std::filesystem;

namespace {

struct Browsed {
  int code = -1;
  std::string dom, log, netlog;
};

/// Opens `html` in headless Chromium: the DOM after loading, and its log (console lines, failed loads).
Browsed browse(const std::string& html, const std::string& dir, const std::string& tag) {
  const std::string flags = "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                            "--disable-background-networking --disable-component-update --disable-sync "
                            "--enable-logging=stderr --v=0 --host-resolver-rules='MAP * ~NOTFOUND' "
                            "--window-size=1400,3000 --user-data-dir='" + dir + "/profile-" + tag + "' " +
                            "--log-net-log='" + dir + "/" + tag + ".netlog.json' ";
  const std::string url = "'file://" + fs::absolute(html).string() + "'";
  Browsed b;
  b.code = std::system(("timeout 120 chromium " + flags + "--dump-dom " + url + " > '" + dir + "/" + tag +
                        ".dom' 2> '" + dir + "/" + tag + ".log'").c_str());
  std::system(("timeout 120 chromium " + flags + "--screenshot='" + dir + "/" + tag + ".png' " + url +
               " > /dev/null 2>> '" + dir + "/" + tag + ".log'").c_str());
  b.dom = slurp(dir + "/" + tag + ".dom");
  b.log = slurp(dir + "/" + tag + ".log");
  b.netlog = slurp(dir + "/" + tag + ".netlog.json");
  return b;
}

/// The URLs of the net log that leave the machine, without Chromium's own service calls.
std::string outside_requests(const std::string& netlog) {
  static const std::regex url("\"url\":\"((https?|wss?|ftp)://([^/\":]+)[^\"]*)\"");
  static const std::regex chromium_own("(^|\\.)(google\\.com|googleapis\\.com|gstatic\\.com|chromium\\.org)$");
  std::string out;
  for (std::sregex_iterator it(netlog.begin(), netlog.end(), url), end; it != end; ++it)
    if (!std::regex_search((*it)[3].str(), chromium_own)) out += (*it)[1].str() + "\n";
  return out;
}

/// The log lines that are the page's: console messages and failed resource loads (not Chromium's
/// own complaints about the sandbox's missing D-Bus).
std::string page_problems(const std::string& log) {
  std::string out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);)
    if (line.find("CONSOLE") != std::string::npos || line.find("net::ERR") != std::string::npos) out += line + "\n";
  return out;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("report.html: tables and every plot render in headless Chromium, with no console message and no request") {
  REQUIRE_MESSAGE(std::system("command -v chromium > /dev/null") == 0,
                  "Chromium is missing: scripts/setup.sh installs Debian's chromium package");
  const std::string dir = scratch_dir("report_browser");
  const std::string runs = source_dir() + "/docs/results/diag_norm_combination/runs";
  const CliResult r = run_cli("report '" + runs + "' --out '" + dir + "/report' --metrics valid.ppl,test.ppl", dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const size_t plots = std::distance(fs::directory_iterator(dir + "/report/plots"), fs::directory_iterator{});
  REQUIRE(plots >= 4);

  const Browsed page = browse(dir + "/report/report.html", dir, "report");
  INFO(page.log);
  REQUIRE(page.code == 0);
  CHECK(count(page.dom, "<table") == 2);                    // the points and the runs
  CHECK(count(page.dom, "<svg") == plots);                   // every plot, inline
  CHECK(page.dom.find("parallel") != std::string::npos);
  CHECK(page_problems(page.log).empty());
  REQUIRE_FALSE(page.netlog.empty());  // the net log was written: an empty list below means something
  CHECK(outside_requests(page.netlog).empty());
  CHECK(fs::file_size(dir + "/report.png") > 10000);        // the screenshot, kept as an artefact

  // The check can fail: a script error and an image from outside are both caught.
  write_text(dir + "/bad.html", "<!DOCTYPE html><html><body><img src=\"http://example.org/x.png\">"
                                "<script>console.error('broken page')</script></body></html>");
  const Browsed bad = browse(dir + "/bad.html", dir, "bad");
  const std::string problems = page_problems(bad.log);
  CHECK(problems.find("broken page") != std::string::npos);
  CHECK(outside_requests(bad.netlog).find("http://example.org/x.png") != std::string::npos);
}

TEST_CASE("report --watch: a live page of a run that is training, reloading itself, then final when the run ends") {
  REQUIRE_MESSAGE(std::system("command -v chromium > /dev/null") == 0,
                  "Chromium is missing: scripts/setup.sh installs Debian's chromium package");
  const std::string dir = scratch_dir("report_watch");
  write_text(dir + "/tiny.yaml", tiny_spec(dir));
  // A run of a minute or so on one thread: long enough to be seen while it trains.
  const CliChild run = spawn_cli("train " + dir + "/tiny.yaml --set train.max_steps=6000 --set train.eval_every=1000 "
                                 "--set train.log_every=10 --threads 1 --out " + dir + "/run",
                                 dir, "train");
  const std::string metrics = dir + "/run/metrics.jsonl";
  for (int i = 0; i < 600 && slurp(metrics).find("\"step\":20,") == std::string::npos; ++i) ::usleep(100000);
  REQUIRE(slurp(metrics).find("\"step\":20,") != std::string::npos);
  const CliChild watch = spawn_cli("report " + dir + "/run --out " + dir + "/live --watch 1", dir, "watch");
  const std::string html = dir + "/live/report.html";
  for (int i = 0; i < 300 && slurp(html).find("running (1 of 1 seed): step") == std::string::npos; ++i) ::usleep(100000);

  const Browsed page = browse(html, dir, "live");
  INFO(page.log);
  CHECK(page.code == 0);
  CHECK(page.dom.find("<meta http-equiv=\"refresh\" content=\"1\">") != std::string::npos);
  CHECK(page.dom.find("Live: written at ") != std::string::npos);
  static const std::regex progress("running \\(1 of 1 seed\\): step [0-9]+/6000 \\([0-9]+ %\\), ETA [0-9:]+");
  CHECK(std::regex_search(page.dom, progress));
  CHECK(count(page.dom, "<svg") >= 1);  // the training-loss curve so far
  CHECK(page_problems(page.log).empty());
  CHECK(outside_requests(page.netlog).empty());
  // The page follows the run: a later version shows a later step.
  const std::string first = slurp(html);
  for (int i = 0; i < 100 && slurp(html) == first; ++i) ::usleep(100000);
  CHECK(slurp(html) != first);

  // A watch stopped while the run trains leaves a final page that says so, and exits 143.
  const CliChild stopped = spawn_cli("report " + dir + "/run --out " + dir + "/live2 --watch 1", dir, "watch2");
  const std::string html2 = dir + "/live2/report.html";
  for (int i = 0; i < 300 && slurp(html2).find("running (1 of 1 seed)") == std::string::npos; ++i) ::usleep(100000);
  ::kill(stopped.pid, SIGTERM);
  const CliResult stopped_result = wait_cli(stopped);
  CHECK(stopped_result.code == 143);
  const std::string stopped_page = slurp(html2);
  CHECK(stopped_page.find("http-equiv=\"refresh\"") == std::string::npos);
  CHECK(stopped_page.find("The watch was stopped by SIGTERM at ") != std::string::npos);
  CHECK(stopped_page.find("the page no longer reloads") != std::string::npos);

  // The run ends: the watcher writes the final page (no reload, the run done) and exits 0.
  const CliResult trained = wait_cli(run);
  INFO(trained.err);
  REQUIRE(trained.code == 0);
  const CliResult watched = wait_cli(watch);
  INFO(watched.err);
  CHECK(watched.code == 0);
  CHECK(watched.err.find("every run has ended; report.html is final") != std::string::npos);
  // One log line per update: the final page's alone says "report: ... final".
  CHECK(count(watched.err, "info report: ") == 1);
  CHECK(count(watched.err, "still training") >= 1);
  const std::string final_page = slurp(html);
  CHECK(final_page.find("http-equiv=\"refresh\"") == std::string::npos);
  CHECK(final_page.find("running (") == std::string::npos);
  CHECK(final_page.find(">done<") != std::string::npos);
}
