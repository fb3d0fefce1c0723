// A generated data set (data generate pathfinder, listops, aan) replaces an old one in one step (core/platform/io/staged_folder.h): a writer killed
// with SIGKILL at any moment, during the generation or in the swap, leaves the folder holding the
// old set whole or the new set whole, never images of one set under the labels of the other, nor
// splits of two generations, nor a partial file; and the next writer cleans up what the killed
// one left beside it. Each case forks a writer, kills it at many points (timed from the moment its
// new set is complete, where the swap happens, and across the generation), and looks at the folder.
#include <doctest/doctest.h>
#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "data/generators/aan_generator.h"
#include "data/generators/listops_generator.h"
#include "data/generators/pathfinder_files.h"
#include "data/generators/pathfinder_generator.h"
#include "tests/temp_dir.h"

using namespace tn;
namespace fs = std::filesystem;

namespace {

/// Every file below `dir` with its bytes, by path relative to `dir` (sorted); hidden entries (a
/// writer's working folder, which readers do not list) are passed over.
std::map<std::string, std::string> tree(const fs::path& dir) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->path().filename().string()[0] == '.') {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_directory()) files[fs::relative(it->path(), dir).generic_string()] = read_file(it->path().string());
  }
  return files;
}

/// Whether the writer `pid` has written `file` into its working folder: the folder beside `out`
/// whose name ends with ".<pid>" (this version's staging folder), or `older` below `out` (where an
/// earlier version staged it). Looks at named paths only, so it is quick enough to catch the swap.
bool staged(const fs::path& out, pid_t pid, const std::string& file, const std::string& older) {
  std::error_code ec;
  if (fs::exists(out / older, ec)) return true;
  const std::string tail = "." + std::to_string(pid);
  for (const auto& entry : fs::directory_iterator(out.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0 &&
        fs::exists(entry.path() / file, ec))
      return true;
  }
  return false;
}

/// Forks a writer running `write`; waits until `ready(its pid)` (polled every 20 µs, at most 60 s)
/// when given, then `delay_us` more, and kills it with SIGKILL. Returns whether it was still running.
bool kill_writer(const std::function<void()>& write, const std::function<bool(pid_t)>& ready, int delay_us) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    omp_set_num_threads(1);  // the parent's OpenMP pool does not exist in the child
    try {
      write();
    } catch (...) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  const auto start = std::chrono::steady_clock::now();
  while (ready && !ready(child) && std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
    if (::waitpid(child, nullptr, WNOHANG) == child) return false;
    ::usleep(20);
  }
  if (delay_us > 0) ::usleep(static_cast<useconds_t>(delay_us));
  const bool running = ::kill(child, SIGKILL) == 0 && ::waitpid(child, nullptr, WNOHANG) == 0;
  int status = 0;
  ::waitpid(child, &status, 0);
  return running && WIFSIGNALED(status);
}

/// The delays after the new set is complete at which the writer is killed: in and around the swap.
const std::vector<int> kSwapDelaysUs = {0, 100, 300, 700, 1500, 3000, 6000, 10000, 15000, 25000, 40000};

/// A kill point: when the writer is ready (null: from its start), and the delay after that in µs.
using KillPoint = std::pair<std::function<bool(pid_t)>, int>;

/// Kills a writer running `write` at each of `points`, calling `look` after each writer has ended
/// (it checks the folder and puts the old set back). A writer that finished before its kill (the
/// machine was quicker than the delay) is run again with a quarter of the delay, up to 4 times, so
/// the number killed does not hang on the machine's load. Returns the number of writers killed.
int kill_at_points(const std::function<void()>& write, const std::vector<KillPoint>& points,
                   const std::function<void()>& look) {
  int killed = 0;
  for (const auto& point : points) {
    int delay = point.second;
    for (int attempt = 0; attempt < 4; ++attempt, delay /= 4) {
      CAPTURE(delay);
      const bool was_killed = kill_writer(write, point.first, delay);
      look();
      if (was_killed) {
        ++killed;
        break;
      }
    }
  }
  return killed;
}

/// A Pathfinder set of 4,000 images (small files) in 4 batches, as an older run left it: deleting it
/// takes long enough that a swap deleting before renaming is caught part-way.
std::map<std::string, std::string> make_old_pathfinder_set(const fs::path& out) {
  for (int b = 0; b < 4; ++b) {
    fs::create_directories(out / "imgs" / std::to_string(b));
    std::string metadata;
    for (int i = 0; i < 1000; ++i) {
      const std::string name = "sample_" + std::to_string(i) + ".png";
      std::ofstream(out / "imgs" / std::to_string(b) / name) << "old " << b << " " << i;
      metadata += "imgs/" + std::to_string(b) + " " + name + " " + std::to_string(i) + " " + std::to_string((b + i) % 2) +
                  " 1.0 14 4 2 0.5 1 1\n";
    }
    fs::create_directories(out / "metadata");
    std::ofstream(out / "metadata" / (std::to_string(b) + ".npy")) << metadata;
  }
  return tree(out);
}

/// Removes what an earlier version of the writers left inside `out` when killed (its staging folder,
/// its .partial files), after they were looked at: the next writer's last file is then its own.
void clear_inner_leftovers(const fs::path& out) {
  std::error_code ec;
  fs::remove_all(out / ".pathfinder-staging", ec);
  for (const auto& entry : fs::directory_iterator(out, ec))
    if (entry.path().extension() == ".partial") fs::remove(entry.path(), ec);
}

/// What a killed writer may leave beside `out`: nothing but its own hidden working folders.
void check_only_leftovers(const fs::path& parent, const std::string& name) {
  for (const auto& entry : fs::directory_iterator(parent)) {
    const std::string n = entry.path().filename().string();
    CHECK_MESSAGE((n == name || n == "ref" || n.rfind("." + name + ".", 0) == 0), n);
  }
}

}  // namespace

TEST_CASE("data set swap: a Pathfinder --overwrite killed at any moment leaves the old set whole or the new one") {
  const test::TempDir dir("pathfinder_swap");
  const PathfinderGenerator generator{PathfinderParams{}};
  const PathfinderSetOptions options{.count = 20, .batch_size = 5, .seed = 5};
  write_pathfinder_set(dir.file("ref"), generator, options, false);
  const std::map<std::string, std::string> fresh = tree(dir.file("ref"));
  const fs::path out = dir.file("set"), master = dir.file("ref/.old");  // hidden: not a set of its own
  const std::map<std::string, std::string> old = make_old_pathfinder_set(master);
  const auto restore_old = [&] {  // hard links to the master copy: quick, and deleting them leaves it
    fs::remove_all(out);
    fs::copy(master, out, fs::copy_options::recursive | fs::copy_options::create_hard_links);
  };
  restore_old();
  const auto write = [&] { write_pathfinder_set(out.string(), generator, options, true); };
  // The new set is complete: its last metadata file is in the writer's staging folder (this
  // version's, beside --out and named with its pid, or an earlier version's .pathfinder-staging).
  const auto complete = [&](pid_t pid) {
    return staged(out, pid, "metadata/3.npy", ".pathfinder-staging/metadata/3.npy");
  };
  int old_seen = 0, new_seen = 0;
  std::vector<KillPoint> points;
  for (int delay : kSwapDelaysUs) points.emplace_back(complete, delay);
  for (int delay : {2000, 20000, 60000}) points.emplace_back(nullptr, delay);  // while generating
  const int killed = kill_at_points(write, points, [&] {
    const std::map<std::string, std::string> now = tree(out);
    const bool is_old = now == old, is_new = now == fresh;
    CHECK_MESSAGE((is_old || is_new), "a mixed or broken set: ", now.size(), " files");
    old_seen += is_old;
    new_seen += is_new;
    if (!is_old) restore_old();  // the next kill starts from an old set again
    check_only_leftovers(dir.path, "set");
    clear_inner_leftovers(out);
  });
  MESSAGE(killed << " writers killed; " << old_seen << " times the old set, " << new_seen << " times the new");
  CHECK(killed >= 10);
  // The next writer removes the killed writers' leftovers and puts its set in place.
  write();
  CHECK(tree(out) == fresh);
  for (const auto& entry : fs::directory_iterator(dir.path))
    CHECK_MESSAGE((entry.path().filename() == "set" || entry.path().filename() == "ref"), entry.path().string());
}

TEST_CASE("data set swap: a ListOps --overwrite killed at any moment leaves one generation's three splits, no partial file") {
  const test::TempDir dir("listops_swap");
  ListOpsOptions o;
  o.min_length = 10;
  o.max_length = 200;
  o.train = 6000;
  o.valid = 500;
  o.test = 500;
  o.seed = 1;
  const ListOpsData old_data = generate_listops(o);
  ListOpsOptions other = o;
  other.seed = 2;
  const ListOpsData new_data = generate_listops(other);
  write_listops(dir.file("ref"), other, new_data, false);
  const std::map<std::string, std::string> fresh = tree(dir.file("ref"));
  const fs::path out = dir.file("set");
  write_listops(out.string(), o, old_data, false);
  const std::map<std::string, std::string> old = tree(out);
  const auto write = [&] { write_listops(out.string(), other, new_data, true); };
  const auto complete = [&](pid_t pid) {  // this version's staging folder, or an earlier one's partial files
    return staged(out, pid, "basic_test.tsv", "basic_test.tsv.partial");
  };
  std::vector<KillPoint> points;
  for (int delay : kSwapDelaysUs) points.emplace_back(complete, delay);
  for (int delay : {200, 1000, 3000, 10000}) points.emplace_back(nullptr, delay);
  const int killed = kill_at_points(write, points, [&] {
    const std::map<std::string, std::string> now = tree(out);
    CHECK_MESSAGE((now == old || now == fresh), "files: ", now.size());
    for (const auto& entry : fs::directory_iterator(out))  // no partial file of a killed writer
      CHECK_MESSAGE(entry.path().extension() == ".tsv", entry.path().string());
    if (now != old) write_listops(out.string(), o, old_data, true);
    check_only_leftovers(dir.path, "set");
    clear_inner_leftovers(out);
  });
  CHECK(killed >= 10);
  write();
  CHECK(tree(out) == fresh);
}

TEST_CASE("data set swap: an AAN --overwrite killed at any moment leaves one generation's three splits, no partial file") {
  const test::TempDir dir("aan_swap");
  AanOptions o;
  o.count = 20000;
  o.seed = 1;
  const AanData old_data = generate_aan(o);
  AanOptions other = o;
  other.seed = 2;
  const AanData new_data = generate_aan(other);
  write_aan(dir.file("ref"), other, new_data, false);
  const std::map<std::string, std::string> fresh = tree(dir.file("ref"));
  const fs::path out = dir.file("set");
  write_aan(out.string(), o, old_data, false);
  const std::map<std::string, std::string> old = tree(out);
  const auto write = [&] { write_aan(out.string(), other, new_data, true); };
  const auto complete = [&](pid_t pid) {  // this version's staging folder, or an earlier one's partial files
    return staged(out, pid, "new_aan_pairs.test.tsv", "new_aan_pairs.test.tsv.partial");
  };
  std::vector<KillPoint> points;
  for (int delay : kSwapDelaysUs) points.emplace_back(complete, delay);
  for (int delay : {200, 1000, 3000, 10000}) points.emplace_back(nullptr, delay);
  const int killed = kill_at_points(write, points, [&] {
    const std::map<std::string, std::string> now = tree(out);
    CHECK_MESSAGE((now == old || now == fresh), "files: ", now.size());
    for (const auto& entry : fs::directory_iterator(out))  // no partial file of a killed writer
      CHECK_MESSAGE(entry.path().extension() == ".tsv", entry.path().string());
    if (now != old) write_aan(out.string(), o, old_data, true);
    check_only_leftovers(dir.path, "set");
    clear_inner_leftovers(out);
  });
  CHECK(killed >= 10);
  write();
  CHECK(tree(out) == fresh);
}

TEST_CASE("data set folders: --out of a ListOps or AAN set holds only its files, which --overwrite replaces") {
  const test::TempDir dir("set_folder");
  ListOpsOptions o;
  o.min_length = 10;
  o.max_length = 100;
  o.train = 30;
  o.valid = 5;
  o.test = 5;
  const ListOpsData data = generate_listops(o);
  // The set replaces the whole folder: anything else in it is refused, with or without --overwrite.
  const std::string out = dir.file("listops");
  std::ofstream(dir.file("notes.txt")) << "mine";
  fs::create_directories(out);
  fs::copy_file(dir.file("notes.txt"), out + "/notes.txt");
  for (bool overwrite : {false, true})
    CHECK_THROWS_WITH_AS(write_listops(out, o, data, overwrite), doctest::Contains("holds notes.txt"), ConfigError);
  CHECK(read_file(out + "/notes.txt") == "mine");
  fs::remove(out + "/notes.txt");
  // One of its files as a link: refused, the link's target untouched.
  fs::create_symlink(dir.file("notes.txt"), out + "/basic_val.tsv");
  CHECK_THROWS_WITH_AS(write_listops(out, o, data, true), doctest::Contains("not a regular file"), ConfigError);
  CHECK(read_file(dir.file("notes.txt")) == "mine");
  fs::remove(out + "/basic_val.tsv");
  // An earlier version's leftover .partial file is the set's: replaced with it.
  std::ofstream(out + "/basic_test.tsv.partial") << "half";
  write_listops(out, o, data, false);
  CHECK_FALSE(fs::exists(out + "/basic_test.tsv.partial"));
  CHECK(fs::exists(out + "/basic_test.tsv"));
  // A link to a folder as --out: the folder it leads to is replaced, the link kept.
  fs::create_directory_symlink(out, dir.file("link"));
  write_listops(dir.file("link"), o, data, true);
  CHECK(fs::is_symlink(dir.file("link")));
  CHECK(fs::exists(out + "/basic_train.tsv"));

  const std::string aan = dir.file("aan");
  fs::create_directories(aan);
  std::ofstream(aan + "/README") << "mine";
  AanOptions a;
  a.count = 20;
  CHECK_THROWS_WITH_AS(write_aan(aan, a, generate_aan(a), true), doctest::Contains("holds README"), ConfigError);
  CHECK(read_file(aan + "/README") == "mine");
}
