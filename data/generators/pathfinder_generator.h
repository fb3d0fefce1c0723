#pragma once
// The Long Range Arena Pathfinder generator (Tay et al. 2021, "Long Range Arena"; the task of
// Linsley et al. 2018, "Learning long-range spatial dependencies with horizontal gated recurrent
// units"): a C++ reimplementation of the published "snakes" algorithm (snakes2.py + snakes.py,
// github.com/drewlinsley/pathfinder) with LRA's `curv_contour_length_14` parameters at 32 × 32 as
// defaults. Per image:
//   1. label = uniform {0, 1};
//   2. two target snakes of contour_length paddles (snakes2.two_snakes): seed 1 at a free pixel
//      kept 2 · seed_distance from the borders, seed 2 at seed_distance from it, each grown paddle
//      by paddle (snakes.extend_snake) with the continuity-weighted turn pmf on the circle of
//      radius paddle_length + margin, a paddle rejected when it overlaps the occupancy
//      (max(mask + paddle mask) >= 1.8, max_paddle_retrial + 1 tries); any failure resamples the
//      pair;
//   3. num_distractor_snakes distractor snakes of distractor_length paddles (snakes.make_many_
//      snakes, max_distractor_retrial + 1 tries each), placed while >= 1 % of the area is free;
//      optionally single paddles (use_single_paddles);
//   4. two disk markers: the first at the origin tip of a random target snake, the second at the
//      terminal tip of the same snake when label = 1, else of the other one;
//   5. every paddle and marker drawn antialias_scale × larger and downscaled with PIL's Lanczos
//      filter (data/generators/paddle_raster.h), combined with max; target paddles have contrast
//      snake_contrast · paddle_contrast, distractors snake_contrast, markers 1; the image is
//      byte-scaled to 0..255 (its maximum becomes 255) as scipy.misc.imsave does.
// It keeps snakes2's quirks: seed 2 is not checked against seed 1; the first snake's last
// paddle is never added to the occupancy before the distractors are placed; and a seed (of a
// target pair or a distractor) can only be placed at the orientations whose head-centric
// structuring element reaches into the image from every pixel, since OpenCV's dilation leaves
// its negative border value elsewhere and snakes.py then finds no free position (raster_ops.h,
// kDilateBorder): about one orientation in twelve at LRA's geometry, so many target pairs are
// sampled per image and few distractors are placed.
//
// It cannot be bit-identical to the released LRA images: those come from NumPy's MT19937 call
// sequence, PIL's rasteriser and Lanczos fixed-point arithmetic and scipy's byte-scaling; this
// uses tn::Rng and double arithmetic, and draws lines wider than one fine pixel as a distance
// test, not PIL's polygon. Use generated sets for smoke tests and learnability checks; paper
// numbers need the released lra_release pathfinder32 images.
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/platform/io/png_image.h"
#include "data/generators/paddle_raster.h"

namespace tn {

/// The parameters of snakes2_wrapper's Args that shape an image; the defaults are LRA's
/// `curv_contour_length_14` at 32 × 32 (lra_benchmarks/data/pathfinder.py, Pathfinder32).
struct PathfinderParams {
  int64_t window = 32;            // window_size: images are window × window pixels
  int64_t padding = 1;            // border rows and columns marked occupied
  int64_t paddle_length = 2;      // pixels
  double paddle_thickness = 0.5;  // pixels; · antialias_scale must be an integer
  int64_t paddle_margin = 1;      // paddle_margin_list = [1]
  int64_t antialias_scale = 2;
  double marker_radius = 1.5;          // pixels
  int64_t seed_distance = 7;           // pixels between the two target seeds
  int64_t contour_length = 14;         // paddles per target snake
  double continuity = 1.0;             // turn weight max(cos(min(|dθ| · continuity, π/2)), 0)^2
  int64_t distractor_length = 4;       // paddles per distractor: contour_length / 3
  int64_t num_distractor_snakes = 5;   // 20 / distractor_length
  double snake_contrast = 2.0;         // snake_contrast_list = [2]
  double paddle_contrast = 0.75;       // paddle_contrast_list = [0.75]
  bool use_single_paddles = false;     // LRA's wrapper sets False
  int64_t max_distractor_retrial = 4;  // max_distractor_contour_retrial (snakes2 ignores the target one: 4)
  int64_t max_paddle_retrial = 2;

  /// LRA's derived counts for a contour length: distractor_length = contour_length / 3 (at least
  /// 1) and num_distractor_snakes = 20 / distractor_length, the rest the defaults.
  static PathfinderParams for_contour_length(int64_t contour_length);

  /// Throws ConfigError naming the CLI option (`--contour-length 0: ...`) or the field and the fix
  /// when a value is impossible: window < 8 or > 1024, padding outside 0..window/4, a paddle
  /// length, antialias scale, contour or distractor length below 1, a negative margin, padding,
  /// count or retrial, thickness · antialias_scale not a positive integer, a non-positive
  /// continuity, marker radius or contrast, or a seed_distance that leaves no room for seed 1
  /// (window - 4 · seed_distance < 1).
  void validate() const;
};

/// One generated image and what the tests need to check it.
struct PathfinderImage {
  GrayImage image;                                  // window × window, 8-bit grayscale, row-major
  int label = 0;                                    // 1 when both markers sit on one target snake
  std::array<std::array<int64_t, 2>, 2> markers{};  // (row, column) of the two marker centres
  int64_t pair_attempts = 0;                        // target pairs sampled until one grew to full length (>= 1)
  int64_t distractors = 0;                          // distractor snakes placed (<= num_distractor_snakes)
};

/// What an image's pixels show, as docs/datasets compare it with the original generator's.
struct PathfinderPixelStats {
  int64_t lit = 0;           // pixels above level 0
  int64_t bright = 0;        // pixels at level 128 or above
  int64_t marker_level = 0;  // the levels at the two marker centres, summed
  int64_t markers_full = 0;  // marker centres at level 255 (0..2)
};

/// Counts an image's lit and bright pixels and reads the levels at its marker centres.
PathfinderPixelStats pathfinder_pixel_stats(const PathfinderImage& image);

/// The seed of image `index` of a set generated with `seed`: a SplitMix64 hash of both, so an
/// image depends on (seed, index) only, whatever the thread count or batch split.
uint64_t pathfinder_image_seed(uint64_t seed, int64_t index);

/// Generates images for one PathfinderParams. Construction renders the paddle atlas (well under a
/// millisecond at the defaults); generate() is const and thread-safe.
class PathfinderGenerator {
 public:
  /// Calls params.validate() (ConfigError).
  explicit PathfinderGenerator(const PathfinderParams& params);

  /// One image from tn::Rng(image_seed): the same seed gives the same bytes. Throws ConfigError
  /// when kPathfinderPairStall target pairs in a row fail to grow (parameters that leave the
  /// snakes no room, e.g. contour_length far too long for the window).
  PathfinderImage generate(uint64_t image_seed) const;

  const PathfinderParams& params() const { return params_; }

 private:
  PathfinderParams params_;
  PaddleAtlas atlas_;
  std::vector<std::pair<double, double>> ring_;  // the candidate ends around a pivot (snakes.get_coords_cmf)
};

/// The stall guard of PathfinderGenerator::generate: pairs sampled without one growing to full
/// length. At the defaults a pair succeeds every few tries, so this never trips there.
inline constexpr int64_t kPathfinderPairStall = 100'000;

}  // namespace tn
