#include "data/generators/pathfinder_generator.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/runtime/rng.h"

namespace tn {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr float kRejectOverlap = 1.8f;  // extend_snake keeps a paddle when max(mask + paddle mask) < 1.8
constexpr float kFreeLevel = 0.3f;      // np.ceil(mask - 0.3) == 0: a pixel is free at occupancy <= 0.3
constexpr double kMinFreeShare = 0.01;  // make_many_snakes' stop_with_availability
constexpr double kMinPmfMass = 1e-4;    // get_coords_cmf: a dead end below this

struct Pixel {
  int64_t y = 0, x = 0;
  bool operator<(const Pixel& o) const { return y != o.y ? y < o.y : x < o.x; }
  bool operator==(const Pixel& o) const { return y == o.y && x == o.x; }
};

/// A paddle at a place: the segment masks snakes.py passes around, as a stamp and its start.
struct Placed {
  const PaddleStamp* stamp = nullptr;
  Pixel at;
};

/// A snake being grown: the state extend_snake carries from paddle to paddle.
struct Snake {
  Pixel pivot;
  double orientation = 0.0;
  Placed last;     // its newest paddle, not yet in the occupancy
  Pixel origin;    // the seed paddle's start
  Pixel terminal;  // the newest paddle's far end
};

/// numpy's randint(lo, hi) on tn::Rng (a modulo of 64 bits: its bias is below 2^-50 here).
int64_t randint(Rng& rng, int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(rng.next_u64() % static_cast<uint64_t>(hi - lo));
}

/// An integer number of degrees in [-180, 180), in radians, as seed_snake draws it.
double random_orientation(Rng& rng) { return static_cast<double>(randint(rng, -180, 180)) * kPi / 180.0; }

/// snakes.flip_by_pi.
double flip(double orientation) { return orientation < 0 ? orientation + kPi : orientation - kPi; }

/// snakes.translate_coord: rounded up.
Pixel translate(const Pixel& p, double orientation, double distance) {
  return {static_cast<int64_t>(std::ceil(static_cast<double>(p.y) + distance * std::sin(orientation))),
          static_cast<int64_t>(std::ceil(static_cast<double>(p.x) + distance * std::cos(orientation)))};
}

std::string field(const char* name, double value) {
  std::string text = std::to_string(value);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return std::string(name) + " " + text;
}

/// One image being drawn: its canvas, its occupancy mask and the draws of snakes.py that change
/// them. Failed snakes leave both as they were.
class PathfinderScene {
 public:
  PathfinderScene(const PathfinderParams& params, const PaddleAtlas& atlas,
                  const std::vector<std::pair<double, double>>& ring, Rng& rng)
      : p_(params),
        atlas_(atlas),
        ring_(ring),
        rng_(rng),
        image_(params.window, params.window),
        mask_(params.window, params.window),
        small_element_(disk_offsets(params.paddle_margin)) {}

  bool grow_target_pair(std::array<Snake, 2>& snakes);
  int64_t add_snakes(int64_t count, int64_t paddles, float contrast, int64_t max_snake_trial);
  void add_marker(const Pixel& centre);
  GrayImage byte_scaled() const;

 private:
  bool seed_snake(Snake& snake, float contrast, int64_t keep_out, bool check_free_share);
  bool seed_second(Snake& snake, const Pixel& first, float contrast);
  std::vector<Pixel> seed_positions(const PaddleStamp& stamp, int64_t keep_out) const;
  bool extend(Snake& snake, float contrast);
  bool make_snake(int64_t paddles, float contrast);
  bool inside(const Pixel& q) const { return image_.contains(q.y, q.x); }
  void start(Snake& snake, const Placed& seed, double orientation, float contrast);
  void paint(const Placed& paddle, float contrast);
  void occupy(const Placed& paddle);
  bool overlaps(const Placed& paddle) const;
  float dilated_occupancy(const Pixel& q) const;

  /// Calls f(image pixel, patch index) for each pixel of `paddle`'s patch inside the image.
  template <class F>
  void for_patch(const Placed& paddle, F&& f) const {
    const int64_t half = atlas_.half(), side = atlas_.side();
    for (int64_t r = 0; r < side; ++r)
      for (int64_t c = 0; c < side; ++c) {
        const Pixel q{paddle.at.y - half + r, paddle.at.x - half + c};
        if (inside(q)) f(q, static_cast<size_t>(r * side + c));
      }
  }

  const PathfinderParams& p_;
  const PaddleAtlas& atlas_;
  const std::vector<std::pair<double, double>>& ring_;  // (R·sin, R·cos) of get_coords_cmf's angles
  Rng& rng_;
  Raster image_, mask_;
  std::vector<Offset> small_element_;  // generate_dilation_struct(margin)
};

void PathfinderScene::paint(const Placed& paddle, float contrast) {
  for_patch(paddle, [&](const Pixel& q, size_t i) {
    image_.at(q.y, q.x) = std::max(image_.at(q.y, q.x), paddle.stamp->line[i] * contrast);
  });
}

void PathfinderScene::occupy(const Placed& paddle) {
  if (!paddle.stamp) return;
  for_patch(paddle, [&](const Pixel& q, size_t i) {
    mask_.at(q.y, q.x) = std::max(mask_.at(q.y, q.x), paddle.stamp->mask[i]);
  });
}

bool PathfinderScene::overlaps(const Placed& paddle) const {
  bool hit = false;
  for_patch(paddle, [&](const Pixel& q, size_t i) {
    hit = hit || mask_.at(q.y, q.x) + paddle.stamp->mask[i] >= kRejectOverlap;
  });
  return hit;
}

float PathfinderScene::dilated_occupancy(const Pixel& q) const {
  float m = 0.0f;
  for (const Offset& o : small_element_)
    if (mask_.contains(q.y + o.dy, q.x + o.dx)) m = std::max(m, mask_.at(q.y + o.dy, q.x + o.dx));
  return m;
}

std::vector<Pixel> PathfinderScene::seed_positions(const PaddleStamp& stamp, int64_t keep_out) const {
  // seed_snake: the occupancy with a border of `keep_out` pixels marked, dilated (cv2.dilate of a
  // float64 mask) with the paddle's head-centric structuring element. A pixel where no tap of the
  // element lands inside the image keeps OpenCV's border value, below 0, and then
  // find_available_coordinates offers no position at all (its np.min(mask) < 0 guard): most
  // orientations cannot seed. Otherwise the free pixels in row-major order (np.nonzero's).
  const int64_t n = p_.window;
  Raster lined = mask_;
  for (int64_t y = 0; y < n; ++y)
    for (int64_t x = 0; x < n; ++x)
      if (y < keep_out || y >= n - keep_out || x < keep_out || x >= n - keep_out) lined.at(y, x) = 1.0f;
  const Raster dilated = dilate(lined, stamp.seed_element);
  if (std::any_of(dilated.values.begin(), dilated.values.end(), [](float v) { return v < 0.0f; })) return {};
  std::vector<Pixel> free;
  for (int64_t y = 0; y < n; ++y)
    for (int64_t x = 0; x < n; ++x)
      if (dilated.at(y, x) <= kFreeLevel) free.push_back({y, x});
  return free;
}

void PathfinderScene::start(Snake& snake, const Placed& seed, double orientation, float contrast) {
  paint(seed, contrast);
  const Pixel head = translate(seed.at, orientation, static_cast<double>(p_.paddle_length));
  snake.pivot = translate(head, flip(orientation), static_cast<double>(p_.paddle_length + p_.paddle_margin));
  snake.orientation = orientation;
  snake.last = seed;
  snake.origin = snake.terminal = seed.at;
}

bool PathfinderScene::seed_snake(Snake& snake, float contrast, int64_t keep_out, bool check_free_share) {
  const auto length = static_cast<double>(p_.paddle_length),
             step = static_cast<double>(p_.paddle_length + p_.paddle_margin);
  for (int64_t trial = 0; trial <= p_.max_paddle_retrial; ++trial) {
    const double orientation = random_orientation(rng_);
    const PaddleStamp& stamp = atlas_.stamp(orientation);
    if (check_free_share) {
      const auto free =
          std::count_if(mask_.values.begin(), mask_.values.end(), [](float v) { return v <= kFreeLevel; });
      if (static_cast<double>(free) / static_cast<double>(mask_.values.size()) < kMinFreeShare) return false;
    }
    const std::vector<Pixel> free = seed_positions(stamp, keep_out);
    if (free.empty()) return false;
    const Pixel tail = free[static_cast<size_t>(randint(rng_, 0, static_cast<int64_t>(free.size())))];
    const Pixel head = translate(tail, orientation, length);
    if (!inside(head) || !inside(translate(head, flip(orientation), step))) continue;
    start(snake, {&stamp, tail}, orientation, contrast);
    return true;
  }
  return false;
}

bool PathfinderScene::seed_second(Snake& snake, const Pixel& first, float contrast) {
  // initialize_two_seeds: seed_distance away at an integer angle, checked against the borders only.
  const auto length = static_cast<double>(p_.paddle_length),
             step = static_cast<double>(p_.paddle_length + p_.paddle_margin);
  const auto distance = static_cast<double>(p_.seed_distance);
  for (int64_t trial = 0; trial <= p_.max_paddle_retrial; ++trial) {
    const double orientation = random_orientation(rng_);
    const double angle = static_cast<double>(randint(rng_, 0, 360)) * kPi / 180.0;
    const Pixel tail{static_cast<int64_t>(std::nearbyint(static_cast<double>(first.y) + distance * std::sin(angle))),
                     static_cast<int64_t>(std::nearbyint(static_cast<double>(first.x) + distance * std::cos(angle)))};
    const Pixel head = translate(tail, orientation, length);
    if (!inside(head) || !inside(translate(head, flip(orientation), step))) continue;
    start(snake, {&atlas_.stamp(orientation), tail}, orientation, contrast);
    return true;
  }
  return false;
}

bool PathfinderScene::extend(Snake& snake, float contrast) {
  // extend_snake + get_coords_cmf: candidate ends on the circle around the next pivot, weighted
  // by the free space (the occupancy dilated by the margin) and the continuity of the turn.
  const Pixel pivot =
      translate(snake.pivot, snake.orientation, static_cast<double>(p_.paddle_length + 2 * p_.paddle_margin));
  std::vector<Pixel> ends;
  for (const auto& [dy, dx] : ring_) {
    const double y = static_cast<double>(pivot.y) + dy, x = static_cast<double>(pivot.x) + dx;
    if (y >= 0 && x >= 0 && y < static_cast<double>(p_.window) && x < static_cast<double>(p_.window))
      ends.push_back({static_cast<int64_t>(y), static_cast<int64_t>(x)});
  }
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  std::vector<double> cmf(ends.size()), turn(ends.size());
  double total = 0.0;
  for (size_t i = 0; i < ends.size(); ++i) {
    turn[i] = std::atan2(static_cast<double>(ends[i].y - pivot.y), static_cast<double>(ends[i].x - pivot.x));
    const double off = std::abs(turn[i] - snake.orientation);
    const double delta = std::min(std::min(off, 2 * kPi - off) * p_.continuity, 0.5 * kPi);
    const double weight = std::pow(std::max(std::cos(delta), 0.0), 2);
    total += (1.0 - dilated_occupancy(ends[i])) * weight;
    cmf[i] = total;
  }
  if (ends.empty() || total < kMinPmfMass) return false;
  for (int64_t trial = 0; trial <= p_.max_paddle_retrial; ++trial) {
    // np.argmax(cmf - r > 0) on the normalised cmf: the first end past r, else the first one.
    const double r = rng_.uniform() * total;
    auto it = std::find_if(cmf.begin(), cmf.end(), [&](double c) { return c > r; });
    const auto i = static_cast<size_t>(it == cmf.end() ? 0 : it - cmf.begin());
    const Placed paddle{&atlas_.stamp(flip(turn[i])), ends[i]};
    if (overlaps(paddle)) continue;
    paint(paddle, contrast);
    occupy(snake.last);
    snake = {pivot, turn[i], paddle, snake.origin, ends[i]};
    return true;
  }
  return false;
}

bool PathfinderScene::grow_target_pair(std::array<Snake, 2>& snakes) {
  std::fill(image_.values.begin(), image_.values.end(), 0.0f);
  for (int64_t y = 0; y < p_.window; ++y)
    for (int64_t x = 0; x < p_.window; ++x) {
      const bool border =
          y < p_.padding || x < p_.padding || y >= p_.window - p_.padding || x >= p_.window - p_.padding;
      mask_.at(y, x) = border ? 1.0f : 0.0f;
    }
  const auto contrast = static_cast<float>(p_.snake_contrast * p_.paddle_contrast);
  if (!seed_snake(snakes[0], contrast, 2 * p_.seed_distance, false)) return false;
  if (!seed_second(snakes[1], snakes[0].origin, contrast)) return false;
  for (int64_t paddle = 1; paddle < p_.contour_length; ++paddle)
    for (Snake& snake : snakes)
      if (!extend(snake, contrast)) return false;
  occupy(snakes[1].last);  // two_snakes adds only the second snake's last paddle
  return true;
}

bool PathfinderScene::make_snake(int64_t paddles, float contrast) {
  const Raster image = image_, mask = mask_;
  Snake snake;
  if (!seed_snake(snake, contrast, 1, true)) return false;
  for (int64_t paddle = 1; paddle < paddles; ++paddle)
    if (!extend(snake, contrast)) {
      image_ = image;
      mask_ = mask;
      return false;
    }
  occupy(snake.last);
  return true;
}

int64_t PathfinderScene::add_snakes(int64_t count, int64_t paddles, float contrast, int64_t max_snake_trial) {
  int64_t placed = 0;
  for (int64_t snake = 0; snake < count; ++snake)
    for (int64_t trial = 0; trial <= max_snake_trial; ++trial)
      if (make_snake(paddles, contrast)) {
        ++placed;
        break;
      }
  return placed;
}

void PathfinderScene::add_marker(const Pixel& centre) {
  const Raster marker = render_marker(p_.window, centre.y, centre.x, p_.marker_radius, p_.antialias_scale);
  for (size_t i = 0; i < image_.values.size(); ++i) image_.values[i] = std::max(image_.values[i], marker.values[i]);
}

GrayImage PathfinderScene::byte_scaled() const {
  // scipy.misc.bytescale: (v - min) · 255 / (max - min), rounded half up.
  const auto [lo, hi] = std::minmax_element(image_.values.begin(), image_.values.end());
  const double low = *lo, scale = *hi > *lo ? 255.0 / (static_cast<double>(*hi) - low) : 255.0;
  GrayImage out;
  out.width = out.height = p_.window;
  out.pixels.resize(image_.values.size());
  for (size_t i = 0; i < out.pixels.size(); ++i)
    out.pixels[i] = static_cast<uint8_t>(std::clamp(std::floor((image_.values[i] - low) * scale + 0.5), 0.0, 255.0));
  return out;
}

}  // namespace

PathfinderParams PathfinderParams::for_contour_length(int64_t contour_length) {
  PathfinderParams p;
  p.contour_length = contour_length;
  p.distractor_length = std::max<int64_t>(contour_length / 3, 1);
  p.num_distractor_snakes = 20 / p.distractor_length;
  return p;
}

void PathfinderParams::validate() const {
  auto require = [](bool ok, const std::string& what, const std::string& fix) {
    if (!ok) throw ConfigError(what + ": " + fix);
  };
  require(window >= 8 && window <= 1024, field("window", window), "images are 8..1024 pixels wide (LRA: 32)");
  require(padding >= 0 && padding <= window / 4, field("padding", padding), "needs 0..window/4 (LRA: 1)");
  require(paddle_length >= 1, field("paddle_length", paddle_length), "a paddle is at least 1 pixel long (LRA: 2)");
  require(antialias_scale >= 1 && antialias_scale <= 8, field("antialias_scale", antialias_scale),
          "needs 1..8 (LRA: 2)");
  require(paddle_margin >= 0, field("paddle_margin", paddle_margin), "cannot be negative (LRA: 1)");
  const double fine = paddle_thickness * static_cast<double>(antialias_scale);
  require(fine >= 1 && fine == std::round(fine), field("paddle_thickness", paddle_thickness),
          "thickness x antialias_scale must be a positive integer, as snakes.py requires (LRA: 0.5 x 2)");
  require(marker_radius > 0 && marker_radius < window, field("marker_radius", marker_radius),
          "needs 0 < r < window (LRA: 1.5)");
  require(
      seed_distance >= 1 && window - 4 * seed_distance >= 1, field("seed_distance", seed_distance),
      "seed 1 is kept 2 x seed_distance from the borders, so it needs 1 <= seed_distance <= (window - 1) / 4 (LRA: 7)");
  require(contour_length >= 1 && contour_length <= 10'000, field("--contour-length", contour_length),
          "a target snake has 1..10000 paddles (LRA: 14; 6 and 9 are the easier sets)");
  require(distractor_length >= 1 && distractor_length <= 10'000, field("--distractor-length", distractor_length),
          "a distractor has 1..10000 paddles (LRA: contour length / 3)");
  require(num_distractor_snakes >= 0 && num_distractor_snakes <= 10'000, field("--distractors", num_distractor_snakes),
          "needs 0..10000 (LRA: 20 / distractor length)");
  require(continuity > 0 && std::isfinite(continuity), field("--continuity", continuity),
          "needs a positive number; lower allows sharper turns (LRA: 1.0)");
  require(snake_contrast > 0 && paddle_contrast > 0,
          field("snake_contrast", snake_contrast) + ", " + field("paddle_contrast", paddle_contrast),
          "contrasts must be positive (LRA: 2 and 0.75)");
  require(
      max_distractor_retrial >= 0 && max_paddle_retrial >= 0 && max_distractor_retrial <= 100 &&
          max_paddle_retrial <= 100,
      field("max_distractor_retrial", max_distractor_retrial) + ", " + field("max_paddle_retrial", max_paddle_retrial),
      "retrials are 0..100 (LRA: 4 and 2)");
}

PathfinderPixelStats pathfinder_pixel_stats(const PathfinderImage& image) {
  PathfinderPixelStats s;
  for (uint8_t v : image.image.pixels) {
    s.lit += v > 0;
    s.bright += v >= 128;
  }
  for (const auto& [row, column] : image.markers) {
    const uint8_t v = image.image.pixels[static_cast<size_t>(row * image.image.width + column)];
    s.marker_level += v;
    s.markers_full += v == 255;
  }
  return s;
}

uint64_t pathfinder_image_seed(uint64_t seed, int64_t index) {
  return splitmix64_mix(splitmix64_mix(seed) + 0x9E3779B97F4A7C15ULL * (static_cast<uint64_t>(index) + 1));
}

namespace {

/// get_coords_cmf's sample angles: np.arange(0, 360, 360 / (2π·R)) degrees, as (R·sin, R·cos).
std::vector<std::pair<double, double>> candidate_ring(int64_t radius) {
  const auto r = static_cast<double>(radius);
  const double step = 360.0 / (2.0 * r * kPi);
  const auto count = static_cast<int64_t>(std::ceil(360.0 / step));
  std::vector<std::pair<double, double>> ring;
  for (int64_t k = 0; k < count; ++k) {
    const double rad = static_cast<double>(k) * step * kPi / 180.0;
    ring.emplace_back(r * std::sin(rad), r * std::cos(rad));
  }
  return ring;
}

PaddleGeometry geometry_of(const PathfinderParams& p) {
  p.validate();
  return {p.paddle_length, p.paddle_thickness, p.paddle_margin, p.antialias_scale};
}

}  // namespace

PathfinderGenerator::PathfinderGenerator(const PathfinderParams& params)
    : params_(params),
      atlas_(geometry_of(params)),
      ring_(candidate_ring(params.paddle_length + params.paddle_margin)) {}

PathfinderImage PathfinderGenerator::generate(uint64_t image_seed) const {
  const PathfinderParams& p = params_;
  Rng rng(image_seed);
  PathfinderImage out;
  out.label = static_cast<int>(randint(rng, 0, 2));
  PathfinderScene scene(p, atlas_, ring_, rng);
  std::array<Snake, 2> snakes;
  while (!scene.grow_target_pair(snakes))
    if (++out.pair_attempts >= kPathfinderPairStall)
      throw ConfigError("pathfinder: " + std::to_string(out.pair_attempts) + " target pairs in a row failed to grow " +
                        std::to_string(p.contour_length) + " paddles in a " + std::to_string(p.window) + " x " +
                        std::to_string(p.window) +
                        " window; lower --contour-length (or --continuity, which allows sharper turns)");
  ++out.pair_attempts;
  const auto contrast = static_cast<float>(p.snake_contrast);
  out.distractors = scene.add_snakes(p.num_distractor_snakes, p.distractor_length, contrast, p.max_distractor_retrial);
  if (p.use_single_paddles) {
    // snakes2: int(150 / ((7.5 + 13 m + 4 m^2) / 123.5)) paddles in all, less those of the snakes.
    const auto m = static_cast<double>(p.paddle_margin);
    const auto total = static_cast<int64_t>(150.0 / ((7.5 + 13 * m + 4 * m * m) / 123.5));
    scene.add_snakes(total - 2 * p.contour_length - p.num_distractor_snakes * p.distractor_length, 1, contrast,
                     p.max_paddle_retrial);
  }
  const auto origin = static_cast<size_t>(randint(rng, 0, 2));
  const size_t terminal = out.label == 1 ? origin : 1 - origin;
  const Pixel a = snakes[origin].origin, b = snakes[terminal].terminal;
  scene.add_marker(a);
  scene.add_marker(b);
  out.markers = {{{a.y, a.x}, {b.y, b.x}}};
  out.image = scene.byte_scaled();
  return out;
}

}  // namespace tn
