// The LRA Pathfinder generator (data/generators/pathfinder_generator, paddle_raster, raster_ops,
// pathfinder_files): the raster primitives, image size and value range, markers, label balance,
// determinism, the files and their metadata, the refusals, and a label check written here that
// looks only at the pixels and the two marker centres: a flood fill over lit pixels, bridging the
// gaps between a contour's dashes, from one marker towards the other.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <numeric>
#include <queue>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/platform/io/png_image.h"
#include "data/generators/paddle_raster.h"
#include "data/generators/pathfinder_files.h"
#include "data/generators/pathfinder_generator.h"
#include "data/generators/raster_ops.h"
#include "tests/temp_dir.h"

using namespace tn;

namespace {

constexpr double kPi = 3.14159265358979323846;

std::vector<PathfinderImage> generate(const PathfinderParams& params, uint64_t seed, int64_t count) {
  const PathfinderGenerator generator(params);
  std::vector<PathfinderImage> images;
  for (int64_t i = 0; i < count; ++i) images.push_back(generator.generate(pathfinder_image_seed(seed, i)));
  return images;
}

/// The label check: true when a flood fill from marker 0's centre over pixels brighter than
/// `threshold`, stepping to any such pixel within `bridge` pixels (the dashes of a contour are up
/// to ~4 px apart), reaches marker 1's centre. Uses the pixels and the marker centres only.
bool markers_joined(const PathfinderImage& im, int threshold, double bridge) {
  const int64_t n = im.image.width, reach = static_cast<int64_t>(bridge);
  auto lit = [&](int64_t y, int64_t x) { return im.image.pixels[static_cast<size_t>(y * n + x)] > threshold; };
  std::vector<char> seen(static_cast<size_t>(n * n), 0);
  std::queue<std::array<int64_t, 2>> todo;
  todo.push(im.markers[0]);
  seen[static_cast<size_t>(im.markers[0][0] * n + im.markers[0][1])] = 1;
  while (!todo.empty()) {
    const auto [y, x] = todo.front();
    todo.pop();
    if (y == im.markers[1][0] && x == im.markers[1][1]) return true;
    for (int64_t dy = -reach; dy <= reach; ++dy)
      for (int64_t dx = -reach; dx <= reach; ++dx) {
        const int64_t yy = y + dy, xx = x + dx;
        if (static_cast<double>(dy * dy + dx * dx) > bridge * bridge || yy < 0 || xx < 0 || yy >= n || xx >= n)
          continue;
        char& visited = seen[static_cast<size_t>(yy * n + xx)];
        if (visited || !lit(yy, xx)) continue;
        visited = 1;
        todo.push({yy, xx});
      }
  }
  return false;
}

struct CheckShares {
  double agree = 0, positives_joined = 0, negatives_apart = 0;
};

CheckShares label_check(const std::vector<PathfinderImage>& images, int threshold, double bridge) {
  int64_t agree = 0, pos = 0, pos_joined = 0, neg_apart = 0;
  for (const PathfinderImage& im : images) {
    const bool joined = markers_joined(im, threshold, bridge);
    agree += joined == (im.label == 1);
    pos += im.label;
    pos_joined += joined && im.label == 1;
    neg_apart += !joined && im.label == 0;
  }
  const auto n = static_cast<double>(images.size());
  return {static_cast<double>(agree) / n, static_cast<double>(pos_joined) / static_cast<double>(pos),
          static_cast<double>(neg_apart) / (n - static_cast<double>(pos))};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("pathfinder raster: PIL's line includes both ends, Lanczos keeps a flat image, dilation is a max") {
  // ImageDraw.line with width 1: Bresenham's n = max(|dx|, |dy|) steps from the start, then the end
  // point on its own (Pillow's _draw_lines), so a line of n steps lights n + 1 pixels.
  Raster canvas(5, 7);
  draw_line(canvas, 1, 2, 5, 2, 1, 255.0f);  // (x, y) = (1, 2) to (5, 2): pixels x = 1..5
  for (int64_t x = 0; x < 7; ++x) CHECK(canvas.at(2, x) == ((x >= 1 && x <= 5) ? 255.0f : 0.0f));
  CHECK(std::accumulate(canvas.values.begin(), canvas.values.end(), 0.0f) == 5 * 255.0f);
  // (0, 0) to (4, 2), by hand: e = 2·2 − 4 = 0; step 0 lights (0, 0) and moves down (e ≥ 0), then
  // (1, 1), (2, 1) (moves down), (3, 2), and the end (4, 2).
  Raster slope(4, 6);
  draw_line(slope, 0, 0, 4, 2, 1, 1.0f);
  const std::vector<std::array<int, 2>> lit{{0, 0}, {1, 1}, {1, 2}, {2, 3}, {2, 4}};  // (row, column)
  for (int64_t y = 0; y < 4; ++y)
    for (int64_t x = 0; x < 6; ++x) {
      const bool on = std::find(lit.begin(), lit.end(), std::array<int, 2>{static_cast<int>(y), static_cast<int>(x)}) != lit.end();
      CHECK(slope.at(y, x) == (on ? 1.0f : 0.0f));
    }
  Raster dot_line(3, 3);
  draw_line(dot_line, 1, 1, 1, 1, 1, 1.0f);  // a zero-length line is its one point
  CHECK(std::accumulate(dot_line.values.begin(), dot_line.values.end(), 0.0f) == 1.0f);

  const Raster flat = lanczos_resize(Raster(17, 17, 200.0f), 9, 9);
  CHECK(std::all_of(flat.values.begin(), flat.values.end(), [](float v) { return v == 200.0f; }));

  Raster dot(5, 5);
  dot.at(2, 2) = 0.5f;
  const Raster cross = dilate(dot, disk_offsets(1));
  CHECK(cross.at(1, 2) == 0.5f);
  CHECK(cross.at(2, 3) == 0.5f);
  CHECK(cross.at(1, 1) == 0.0f);
  CHECK(cross.at(0, 0) == 0.0f);  // an element holding its anchor always lands inside
  CHECK(disk_offsets(2).size() == 13);
}

TEST_CASE("pathfinder raster: dilation keeps OpenCV's border value where no tap lands inside") {
  // cv2.dilate on float input: the default border is the lowest float, so with the element
  // {(+1, +1)} alone (no anchor) out(y, x) = src(y + 1, x + 1) inside and the border value on the
  // last row and column, by hand.
  Raster src(3, 3);
  for (int64_t i = 0; i < 9; ++i) src.values[static_cast<size_t>(i)] = static_cast<float>(i);
  const Raster out = dilate(src, {{1, 1}});
  CHECK(out.at(0, 0) == 4.0f);
  CHECK(out.at(1, 1) == 8.0f);
  CHECK(out.at(0, 1) == 5.0f);
  for (int64_t k = 0; k < 3; ++k) {
    CHECK(out.at(2, k) == kDilateBorder);
    CHECK(out.at(k, 2) == kDilateBorder);
  }
  CHECK(kDilateBorder < 0.0f);
  // A second tap (−1, −1) covers the last row and column and the max takes the larger, but the
  // corners (0, 2) and (2, 0) still have no tap inside: their quadrants hold none.
  const Raster both = dilate(src, {{1, 1}, {-1, -1}});
  CHECK(both.at(2, 2) == 4.0f);
  CHECK(both.at(0, 0) == 4.0f);
  CHECK(both.at(1, 1) == 8.0f);
  CHECK(both.at(1, 2) == 1.0f);
  CHECK(both.at(0, 2) == kDilateBorder);
  CHECK(both.at(2, 0) == kDilateBorder);
}

TEST_CASE("pathfinder raster: every paddle of the LRA geometry is a short bright line inside its wider mask") {
  const PaddleAtlas atlas(PaddleGeometry{});
  CHECK(atlas.side() == 9);
  for (int degrees = -180; degrees < 180; degrees += 7) {
    INFO(degrees);
    const PaddleStamp& stamp = atlas.stamp(degrees * kPi / 180.0);
    const float peak = *std::max_element(stamp.line.begin(), stamp.line.end());
    CHECK(peak > 0.3f);
    CHECK(peak <= 1.0f);
    CHECK(*std::max_element(stamp.mask.begin(), stamp.mask.end()) == 1.0f);  // seed_snake's element needs 1s
    CHECK(!stamp.seed_element.empty());
    const auto lit = std::count_if(stamp.line.begin(), stamp.line.end(), [](float v) { return v > 0.1f; });
    const auto masked = std::count_if(stamp.mask.begin(), stamp.mask.end(), [](float v) { return v > 0.1f; });
    CHECK(lit >= 2);
    CHECK(masked > lit);
  }
  const Raster marker = render_marker(32, 10, 20, 1.5, 2);
  CHECK(marker.at(10, 20) > 0.9f);
  CHECK(marker.at(10, 25) == 0.0f);
}

TEST_CASE("pathfinder generator: 32 x 32 images, black background, bright contours and two lit markers") {
  const std::vector<PathfinderImage> images = generate(PathfinderParams{}, 11, 50);
  for (const PathfinderImage& im : images) {
    REQUIRE(im.image.width == 32);
    REQUIRE(im.image.height == 32);
    REQUIRE(im.image.pixels.size() == 1024);
    const auto [lo, hi] = std::minmax_element(im.image.pixels.begin(), im.image.pixels.end());
    CHECK(*lo == 0);
    CHECK(*hi == 255);  // byte-scaled: the brightest pixel is white
    const auto black = std::count(im.image.pixels.begin(), im.image.pixels.end(), uint8_t{0});
    const auto bright =
        std::count_if(im.image.pixels.begin(), im.image.pixels.end(), [](uint8_t v) { return v > 128; });
    CHECK(black > 300);  // the background (~57 % of the pixels are exactly 0)
    CHECK(bright > 40);  // two contours of 14 paddles and the distractors
    CHECK(bright < 400);
    for (const auto& [y, x] : im.markers) {
      REQUIRE(y >= 0);
      REQUIRE(y < 32);
      REQUIRE(x >= 0);
      REQUIRE(x < 32);
      CHECK(im.image.pixels[static_cast<size_t>(y * 32 + x)] >= 180);  // a disk at least as bright as a contour
    }
    CHECK(im.markers[0] != im.markers[1]);
    CHECK(im.pair_attempts >= 1);
    CHECK(im.distractors <= 5);
  }
}

TEST_CASE("pathfinder generator: labels are balanced") {
  // 200 fair coin flips: mean 100, standard deviation sqrt(200 / 4) = 7.07. [72, 128] is +-4
  // standard deviations: a fair generator falls outside with probability ~6e-5.
  const std::vector<PathfinderImage> images = generate(PathfinderParams{}, 5, 200);
  const auto positives = std::count_if(images.begin(), images.end(), [](const auto& im) { return im.label == 1; });
  CHECK(positives >= 72);
  CHECK(positives <= 128);
}

TEST_CASE("pathfinder generator: the same seed gives the same bytes, another seed other bytes") {
  const PathfinderGenerator a{PathfinderParams{}}, b{PathfinderParams{}};
  for (int64_t i = 0; i < 5; ++i) {
    const PathfinderImage x = a.generate(pathfinder_image_seed(42, i)), y = b.generate(pathfinder_image_seed(42, i));
    CHECK((x.image.pixels == y.image.pixels));
    CHECK(x.label == y.label);
    CHECK((x.markers == y.markers));
    CHECK((x.image.pixels != a.generate(pathfinder_image_seed(43, i)).image.pixels));
    CHECK((x.image.pixels != a.generate(pathfinder_image_seed(42, i + 1)).image.pixels));
  }
  CHECK(pathfinder_image_seed(0, 0) != pathfinder_image_seed(0, 1));
  CHECK(pathfinder_image_seed(0, 1) != pathfinder_image_seed(1, 0));
}

TEST_CASE("pathfinder label check: markers joined exactly in the positives where contours cannot meet") {
  // The same generator with the two seeds 30 px apart in a 128 px window and contours of 3
  // paddles (<= 12 px each): the targets cannot come within the bridge of each other, so the
  // check must follow the labels (20 one-paddle distractors are drawn too). Measured: 200 of 200.
  PathfinderParams apart = PathfinderParams::for_contour_length(3);
  apart.window = 128;
  apart.seed_distance = 30;
  const CheckShares shares = label_check(generate(apart, 2, 200), 50, 4.5);
  MESSAGE("separated contours: the check agrees with ", 100 * shares.agree, " % of the labels (positives joined ",
          100 * shares.positives_joined, " %, negatives apart ", 100 * shares.negatives_apart, " %)");
  CHECK(shares.agree >= 0.97);
}

TEST_CASE("pathfinder label check: at LRA's parameters every positive is joined, negatives mostly too") {
  // At curv_contour_length_14 the two target contours start 7 px apart (seed_distance, about the
  // spacing of a contour's dashes) and each runs 14 paddles (~52 px) through a 30 x 30 field, so
  // they meet in most images (snakes2 tests a new paddle only against paddles at least one step
  // old, so the two targets, grown in turn, may even run side by side). Pixel connectivity thus
  // joins the negatives too; what it does show is that a positive's markers lie on one dashed
  // contour. Measured on these 200 images: positives joined 100 %, negatives apart 0 %, agreement
  // 49.5 % (the share of positives).
  const CheckShares shares = label_check(generate(PathfinderParams{}, 3, 200), 50, 4.5);
  MESSAGE("LRA parameters: the check agrees with ", 100 * shares.agree, " % of the labels (positives joined ",
          100 * shares.positives_joined, " %, negatives apart ", 100 * shares.negatives_apart, " %)");
  CHECK(shares.positives_joined >= 0.95);
}

TEST_CASE("pathfinder files: the released layout, text metadata, the generator's bytes, any thread count") {
  const test::TempDir dir("pathfinder");
  const PathfinderGenerator generator{PathfinderParams{}};
  const PathfinderSetOptions options{.count = 7, .batch_size = 3, .seed = 9};
  const std::string out = dir.file("set");
  const PathfinderSetSummary summary = write_pathfinder_set(out, generator, options, false);
  CHECK(summary.images == 7);
  CHECK(summary.batches == 3);
  const std::vector<int64_t> sizes = {3, 3, 1};
  int64_t positives = 0;
  for (int64_t batch = 0; batch < 3; ++batch) {
    const std::vector<std::string> lines = lines_of(read_file(out + "/metadata/" + std::to_string(batch) + ".npy"));
    REQUIRE(static_cast<int64_t>(lines.size()) == sizes[static_cast<size_t>(batch)]);
    for (int64_t i = 0; i < sizes[static_cast<size_t>(batch)]; ++i) {
      const PathfinderImage expected = generator.generate(pathfinder_image_seed(9, batch * 3 + i));
      const std::string subpath = "imgs/" + std::to_string(batch), name = "sample_" + std::to_string(i) + ".png";
      CHECK(lines[static_cast<size_t>(i)] == subpath + " " + name + " " + std::to_string(i) + " " +
                                                 std::to_string(expected.label) + " 1.0 14 4 2 0.5 1 1");
      CHECK((read_png_gray(out + "/" + subpath + "/" + name).pixels == expected.image.pixels));
      positives += expected.label;
    }
  }
  CHECK(summary.positives == positives);
  CHECK(!std::filesystem::exists(out + "/imgs/2/sample_1.png"));

  // One thread and two threads write the same bytes.
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  write_pathfinder_set(dir.file("one"), generator, options, false);
  omp_set_num_threads(2);
  write_pathfinder_set(dir.file("two"), generator, options, false);
  omp_set_num_threads(threads);
  for (const char* file : {"metadata/0.npy", "metadata/2.npy", "imgs/1/sample_2.png", "imgs/2/sample_0.png"})
    CHECK(read_file(dir.file("one/") + file) == read_file(dir.file("two/") + file));
}

TEST_CASE("pathfinder files: a metadata line prints floats as Python does") {
  PathfinderParams p = PathfinderParams::for_contour_length(9);
  p.continuity = 1.8;
  CHECK(pathfinder_metadata_line("imgs/12", 7, 0, p) == "imgs/12 sample_7.png 7 0 1.8 9 3 2 0.5 1 1\n");
  CHECK(pathfinder_metadata_line("imgs/0", 0, 1, PathfinderParams{}) == "imgs/0 sample_0.png 0 1 1.0 14 4 2 0.5 1 1\n");
  CHECK(PathfinderParams::for_contour_length(14).num_distractor_snakes == 5);
  CHECK(PathfinderParams::for_contour_length(6).num_distractor_snakes == 10);
}

TEST_CASE("pathfinder files: never replaces data without overwrite, and only a set with it") {
  const test::TempDir dir("pathfinder_out");
  const PathfinderGenerator generator{PathfinderParams{}};
  const std::string out = dir.file("set");
  write_pathfinder_set(out, generator, {.count = 2, .batch_size = 1000, .seed = 1}, false);
  const std::string before = read_file(out + "/metadata/0.npy");
  CHECK_THROWS_WITH_AS(check_pathfinder_output(out, false), doctest::Contains("--overwrite"), ConfigError);
  CHECK_THROWS_AS(write_pathfinder_set(out, generator, {.count = 3, .batch_size = 1000, .seed = 2}, false),
                  ConfigError);
  CHECK(read_file(out + "/metadata/0.npy") == before);

  // --overwrite replaces the old set whole: no stale batch is left behind.
  write_pathfinder_set(out, generator, {.count = 3, .batch_size = 2, .seed = 2}, true);
  CHECK(lines_of(read_file(out + "/metadata/0.npy")).size() == 2);
  CHECK(std::filesystem::exists(out + "/metadata/1.npy"));
  write_pathfinder_set(out, generator, {.count = 1, .batch_size = 2, .seed = 2}, true);
  CHECK(!std::filesystem::exists(out + "/metadata/1.npy"));
  CHECK(!std::filesystem::exists(out + "/imgs/1"));

  // Stopped (a SIGTERM, polled after each chunk of 256 images) part way through an --overwrite:
  // what it wrote is removed, the old set is as it was.
  const std::string kept = read_file(out + "/metadata/0.npy");
  int polls = 0;
  PathfinderSetOptions stopping{.count = 600, .batch_size = 1000, .seed = 3};
  stopping.stop_requested = [&] { return ++polls == 2 ? SIGTERM : 0; };
  const PathfinderSetSummary stopped = write_pathfinder_set(out, generator, stopping, true);
  CHECK(stopped.stopped_by == SIGTERM);
  CHECK(polls == 2);
  CHECK(read_file(out + "/metadata/0.npy") == kept);
  CHECK(!std::filesystem::exists(out + "/.pathfinder-staging"));

  // A folder with anything else in it is not a set: refused even with --overwrite.
  dir.write("set/notes.txt", "mine");
  CHECK_THROWS_WITH_AS(check_pathfinder_output(out, true), doctest::Contains("notes.txt"), ConfigError);
  const std::string file = dir.write("plain", "x");
  CHECK_THROWS_AS(check_pathfinder_output(file, true), ConfigError);
  CHECK_THROWS_AS(check_pathfinder_output(file + "/below", false), ConfigError);
  CHECK_THROWS_AS(check_pathfinder_output("", false), ConfigError);
}

TEST_CASE("pathfinder generator: refuses impossible parameters, naming the option") {
  CHECK_THROWS_WITH_AS(PathfinderParams::for_contour_length(0).validate(), doctest::Contains("--contour-length 0"),
                       ConfigError);
  PathfinderParams p;
  p.continuity = 0;
  CHECK_THROWS_WITH_AS(p.validate(), doctest::Contains("--continuity 0"), ConfigError);
  p = PathfinderParams{};
  p.num_distractor_snakes = -1;
  CHECK_THROWS_WITH_AS(p.validate(), doctest::Contains("--distractors -1"), ConfigError);
  p = PathfinderParams{};
  p.paddle_thickness = 0.3;  // 0.3 x 2 is not an integer number of fine pixels
  CHECK_THROWS_AS(PathfinderGenerator{p}, ConfigError);
  p = PathfinderParams{};
  p.seed_distance = 8;  // 32 - 4 x 8 = 0: no room for seed 1
  CHECK_THROWS_AS(p.validate(), ConfigError);
  CHECK_THROWS_WITH_AS((PathfinderSetOptions{.count = 0}.validate()), doctest::Contains("--count 0"), ConfigError);
  CHECK_THROWS_WITH_AS((PathfinderSetOptions{.count = 5, .batch_size = 0}.validate()),
                       doctest::Contains("--batch-size 0"), ConfigError);
}

TEST_CASE("pathfinder pixel stats: lit and bright pixels and the levels at the marker centres, by hand") {
  PathfinderImage im;
  im.image.width = im.image.height = 3;
  im.image.pixels = {0, 10, 128, 255, 0, 127, 0, 0, 200};
  im.markers = {{{1, 0}, {2, 2}}};  // (row, column): levels 255 and 200
  const PathfinderPixelStats s = pathfinder_pixel_stats(im);
  CHECK(s.lit == 5);     // 10, 128, 255, 127, 200
  CHECK(s.bright == 3);  // 128, 255, 200
  CHECK(s.marker_level == 455);
  CHECK(s.markers_full == 1);
}

TEST_CASE("pathfinder generator: seeds only at the orientations the original can seed, so few distractors") {
  // snakes.py's seed element is the paddle's mask cut around its head; cv2.dilate leaves its
  // negative border value on some pixel unless a tap reaches into the image from every pixel
  // (for a 32 x 32 window: a tap in each quadrant, which these elements have only when they hold
  // their anchor). The original code, run with OpenCV 4.6, seeds at exactly 30 orientations:
  // -150..-121 degrees.
  const PaddleAtlas atlas(PaddleGeometry{});
  std::vector<int> seeding;
  for (int degrees = -180; degrees < 180; ++degrees) {
    Raster empty(32, 32);
    const Raster dilated = dilate(empty, atlas.stamp(degrees * kPi / 180.0).seed_element);
    if (std::none_of(dilated.values.begin(), dilated.values.end(), [](float v) { return v < 0.0f; }))
      seeding.push_back(degrees);
  }
  std::vector<int> original(30);
  std::iota(original.begin(), original.end(), -150);
  CHECK(seeding == original);

  // Per image over 200 images at LRA's parameters the original samples about 300 target pairs and
  // places 1.26 of 5 distractors (datasets/README.md); a generator without the border rule
  // sampled about 25 and placed 4.8.
  const std::vector<PathfinderImage> images = generate(PathfinderParams{}, 11, 200);
  double pairs = 0, distractors = 0;
  for (const PathfinderImage& im : images) {
    pairs += static_cast<double>(im.pair_attempts);
    distractors += static_cast<double>(im.distractors);
  }
  MESSAGE("per image: " << pairs / 200 << " target pairs sampled, " << distractors / 200 << " distractors placed");
  CHECK(pairs / 200 > 200.0);
  CHECK(pairs / 200 < 450.0);
  CHECK(distractors / 200 > 0.9);
  CHECK(distractors / 200 < 1.7);
}
