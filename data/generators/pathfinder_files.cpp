#include "data/generators/pathfinder_files.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <regex>
#include <exception>
#include <filesystem>
#include <vector>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/png_image.h"
#include "core/platform/io/staged_folder.h"
#include "core/platform/progress.h"
#include "data/generators/set_folder.h"

namespace tn {
namespace {

/// Where an earlier version wrote a new set before it replaced the old one (inside --out): a killed
/// run's leftover there is part of the old set, replaced with it.
constexpr const char* kStaging = ".pathfinder-staging";

namespace fs = std::filesystem;

constexpr int64_t kChunk = 256;  // images generated between two looks at the progress clock

/// A double as Python's str() prints it: the shortest round-trip digits, ".0" for an integer.
std::string python_float(double value) {
  char buf[64];
  const auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
  std::string text(buf, end);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

/// Logs images done, images/s and the ETA at most every few seconds.
class SetProgress {
 public:
  explicit SetProgress(int64_t total) : total_(total), start_(Clock::now()), last_(start_) {}
  void maybe_log(int64_t done) {
    const Clock::time_point now = Clock::now();
    if (std::chrono::duration<double>(now - last_).count() < kIntervalS || done <= 0) return;
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double rate = static_cast<double>(done) / elapsed;
    spdlog::info("pathfinder: {} of {} images ({:.0f} %), {:.0f} images/s, {} so far, ETA {}", done, total_,
                 100.0 * static_cast<double>(done) / static_cast<double>(total_), rate, format_duration(elapsed),
                 format_duration(static_cast<double>(total_ - done) / rate));
  }

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr double kIntervalS = 5.0;
  int64_t total_;
  Clock::time_point start_, last_;
};

void create_folder(const fs::path& folder) {
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) throw IoError(folder.string() + ": cannot create the folder (" + ec.message() + ")");
}

/// Generates images [first, first + count) of batch `batch` into `folder` (in parallel), their
/// labels into `labels` at their index within the batch; adds the tallies to `summary`.
void write_chunk(const PathfinderGenerator& generator, const PathfinderSetOptions& o, int64_t batch, int64_t first,
                 int64_t count, const fs::path& folder, std::vector<int>& labels, PathfinderSetSummary& summary) {
  std::exception_ptr error;
  int64_t attempts = 0, distractors = 0, lit = 0, bright = 0, marker_level = 0, markers_full = 0;
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : attempts, distractors, lit, bright, marker_level, markers_full)
  for (int64_t i = first; i < first + count; ++i) {
    try {
      const PathfinderImage image = generator.generate(pathfinder_image_seed(o.seed, batch * o.batch_size + i));
      write_png_gray((folder / ("sample_" + std::to_string(i) + ".png")).string(), image.image);
      labels[static_cast<size_t>(i)] = image.label;
      attempts += image.pair_attempts;
      distractors += image.distractors;
      const PathfinderPixelStats pixels = pathfinder_pixel_stats(image);
      lit += pixels.lit;
      bright += pixels.bright;
      marker_level += pixels.marker_level;
      markers_full += pixels.markers_full;
    } catch (...) {
#pragma omp critical(pathfinder_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  summary.pair_attempts += attempts;
  summary.distractors += distractors;
  summary.lit_pixels += lit;
  summary.bright_pixels += bright;
  summary.marker_level += marker_level;
  summary.markers_full += markers_full;
}

}  // namespace

void PathfinderSetOptions::validate() const {
  if (count < 1 || count > 100'000'000)
    throw ConfigError("--count " + std::to_string(count) + ": needs 1..100,000,000 images (LRA: 200,000)");
  if (batch_size < 1 || batch_size > 10'000'000)
    throw ConfigError("--batch-size " + std::to_string(batch_size) +
                      ": needs 1..10,000,000 images per imgs/<batch> folder (default 1000)");
}

std::string pathfinder_metadata_line(const std::string& subpath, int64_t index, int label, const PathfinderParams& p) {
  return subpath + " sample_" + std::to_string(index) + ".png " + std::to_string(index) + " " + std::to_string(label) +
         " " + python_float(p.continuity) + " " + std::to_string(p.contour_length) + " " +
         std::to_string(p.distractor_length) + " " + std::to_string(p.paddle_length) + " " +
         python_float(p.paddle_thickness) + " " + std::to_string(p.paddle_margin) + " 1\n";
}

namespace {
/// Refuses (ConfigError naming it) anything under imgs/ or metadata/ that a Pathfinder set does not
/// hold: only imgs/<n>/sample_<i>.png and metadata/<n>.npy, so --overwrite deletes no one else's file.
void check_set_files(const fs::path& folder, bool images) {
  static const std::regex image_file(R"(imgs/[0-9]+/sample_[0-9]+\.png)"), image_dir(R"(imgs/[0-9]+)"),
      metadata_file(R"(metadata/[0-9]+\.npy)");
  std::error_code ec;
  const fs::path base = folder.parent_path();
  for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string rel = fs::relative(it->path(), base, ec).generic_string();
    const fs::file_status status = it->symlink_status(ec);  // a link is no file of a set, whatever it leads to
    const bool is_dir = fs::is_directory(status), is_file = fs::is_regular_file(status);
    const bool ours = images ? (is_dir ? std::regex_match(rel, image_dir) : is_file && std::regex_match(rel, image_file))
                             : is_file && std::regex_match(rel, metadata_file);
    if (!ours)
      throw ConfigError("--out " + base.string() + ": holds " + rel +
                        ", which is not a file of a Pathfinder set; --overwrite replaces a set, not other files: "
                        "move it away, or pass an empty or new --out");
  }
}
}  // namespace

void check_pathfinder_output(const std::string& dir, bool overwrite) {
  std::error_code ec;
  check_set_path(dir);
  for (fs::path up = fs::path(dir).parent_path(); !up.empty() && up != up.parent_path(); up = up.parent_path())
    if (fs::exists(up, ec) && !fs::is_directory(up, ec))
      throw ConfigError("--out " + dir + ": " + up.string() + " is a file, not a folder; pass another --out");
  if (!fs::exists(dir, ec)) return;
  if (!fs::is_directory(dir, ec))
    throw ConfigError("--out " + dir + ": exists and is not a folder; pass a folder (it is created when missing)");
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == kStaging) continue;  // a killed run's unfinished set: ours, replaced
    if (!overwrite)
      throw ConfigError("--out " + dir + ": the folder is not empty (it holds " + name +
                        "); pass --overwrite to replace a Pathfinder set there, or another --out");
    if ((name != "imgs" && name != "metadata") || !entry.is_directory(ec) || entry.is_symlink(ec))
      throw ConfigError("--out " + dir + ": holds " + name +
                        ", which is not part of a Pathfinder set (only imgs/ "
                        "and metadata/ are); --overwrite replaces a set, not other files: pass an empty or new --out");
    check_set_files(entry.path(), name == "imgs");
  }
}

PathfinderSetSummary write_pathfinder_set(const std::string& dir, const PathfinderGenerator& generator,
                                          const PathfinderSetOptions& o, bool overwrite) {
  o.validate();
  check_pathfinder_output(dir, overwrite);
  const auto start = std::chrono::steady_clock::now();
  // The new set is written beside --out and takes its place in one rename once complete (only with
  // --overwrite over a set, checked above): a failure, a stop or a kill at any moment leaves the old
  // set whole, or the new one.
  StagedFolder staged(dir);
  const fs::path root(staged.path());
  create_folder(root / "metadata");
  PathfinderSetSummary summary;
  summary.batches = o.batches();
  SetProgress progress(o.count);
  for (int64_t batch = 0; batch < summary.batches; ++batch) {
    const int64_t size = std::min(o.batch_size, o.count - batch * o.batch_size);
    const std::string subpath = "imgs/" + std::to_string(batch);
    create_folder(root / subpath);
    std::vector<int> labels(static_cast<size_t>(size));
    for (int64_t first = 0; first < size; first += kChunk) {
      write_chunk(generator, o, batch, first, std::min(kChunk, size - first), root / subpath, labels, summary);
      progress.maybe_log(batch * o.batch_size + std::min(first + kChunk, size));
      if (const int signal = o.stop_requested ? o.stop_requested() : 0) {
        summary.stopped_by = signal;  // the unfinished set goes with `staged`; the old one was never touched
        return summary;
      }
    }
    std::string metadata;
    for (int64_t i = 0; i < size; ++i) {
      metadata += pathfinder_metadata_line(subpath, i, labels[static_cast<size_t>(i)], generator.params());
      summary.positives += labels[static_cast<size_t>(i)];
    }
    write_own_file((root / "metadata" / (std::to_string(batch) + ".npy")).string(), metadata, "data generate");
    summary.images += size;
  }
  staged.commit();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace tn
