#pragma once
// A generated Pathfinder set on disk, in the layout of the released LRA sets
// (lra_release/pathfinder32/curv_contour_length_14): `OUT/imgs/<batch>/sample_<i>.png` (8-bit
// grayscale) and `OUT/metadata/<batch>.npy`, which despite its name is text, one line per image:
//   subpath filename index label continuity contour_length distractor_length paddle_length
//   paddle_thickness paddle_margin n_contrasts
// e.g. `imgs/0 sample_0.png 0 1 1.0 14 4 2 0.5 1 1` (snakes2.accumulate_meta's fields; the readers
// use fields 0, 1 and 3). `<i>` and `index` count from 0 within a batch, as snakes2 does.
#include <cstdint>
#include <functional>
#include <string>

#include "data/generators/pathfinder_generator.h"

namespace tn {

/// How many images, in which batches, from which seed.
struct PathfinderSetOptions {
  int64_t count = 0;          // images in all
  int64_t batch_size = 1000;  // images per imgs/<batch> folder and metadata file (the last may hold fewer)
  uint64_t seed = 0;          // image i is generated from pathfinder_image_seed(seed, i)
  /// Polled after every chunk of images: a nonzero signal number stops the writer, which removes
  /// its unfinished set and leaves `dir` as it was (PathfinderSetSummary::stopped_by). Empty: never.
  std::function<int()> stop_requested;

  /// Throws ConfigError naming the option when count is outside 1..100,000,000 or batch_size
  /// outside 1..10,000,000.
  void validate() const;
  /// Batches: ceil(count / batch_size).
  int64_t batches() const { return (count + batch_size - 1) / batch_size; }
};

/// What write_pathfinder_set did.
struct PathfinderSetSummary {
  int64_t images = 0, positives = 0, batches = 0;
  int64_t pair_attempts = 0;  // target pairs sampled, over all images
  int64_t distractors = 0;    // distractor snakes placed, over all images
  int64_t lit_pixels = 0;     // pixels above level 0, over all images
  int64_t bright_pixels = 0;  // pixels at level 128 or above, over all images
  int64_t marker_level = 0;   // the levels at the two marker centres, summed over all images
  int64_t markers_full = 0;   // marker centres at level 255, over all images
  double seconds = 0.0;       // generation and writing, wall clock
  int stopped_by = 0;         // the signal that stopped the writer before the set was complete, else 0
};

/// One metadata line (with its '\n') for image `index` of batch folder `subpath` ("imgs/3"),
/// floats as Python prints them ("1.0", "0.5").
std::string pathfinder_metadata_line(const std::string& subpath, int64_t index, int label,
                                     const PathfinderParams& params);

/// Checks that `dir` can take a set without destroying data, creating nothing: throws ConfigError
/// naming --out and the fix when `dir` is empty, a file, below a file, or an existing folder that
/// is not empty while `overwrite` is false. With `overwrite` an existing folder may hold only
/// `imgs/` and `metadata/` (a previous set, which the writer replaces); anything else is refused.
void check_pathfinder_output(const std::string& dir, bool overwrite);

/// Generates options.count images with `generator` and writes them as the folder `dir` (created
/// when missing). Calls options.validate() and check_pathfinder_output first. The set is written
/// into a staging folder beside `dir` (core/platform/io/staged_folder.h) and takes dir's place in one rename
/// once complete, so at any moment, a kill included, `dir` holds the old set whole or the new one
/// whole; with `overwrite` the old set is deleted after the swap. Images are generated and written
/// in parallel (OpenMP; the bytes do not depend on the thread count); every file is written
/// atomically. Logs progress (spdlog info: images, images/s, ETA) every few seconds. Stopped
/// through options.stop_requested, it removes what it wrote and returns with stopped_by set (an
/// older set untouched). Throws ConfigError as the checks do, IoError when a folder or file cannot
/// be written (the staging folder needs dir's parent to be writable).
PathfinderSetSummary write_pathfinder_set(const std::string& dir, const PathfinderGenerator& generator,
                                          const PathfinderSetOptions& options, bool overwrite);

}  // namespace tn
