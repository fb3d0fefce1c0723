#include "data/generators/raster_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace tn {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kLanczosSupport = 3.0;

double sinc(double x) {
  if (x == 0.0) return 1.0;
  x *= kPi;
  return std::sin(x) / x;
}

/// PIL's lanczos_filter: sinc(x) · sinc(x / 3) on [-3, 3).
double lanczos(double x) { return (x >= -kLanczosSupport && x < kLanczosSupport) ? sinc(x) * sinc(x / 3.0) : 0.0; }

/// The taps of one output pixel along one axis: the first input index and the normalised weights.
struct Taps {
  int64_t first = 0;
  std::vector<double> weights;
};

/// PIL's precompute_coeffs for an axis of `in` pixels resampled to `out`.
std::vector<Taps> lanczos_taps(int64_t in, int64_t out) {
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  const double filterscale = std::max(scale, 1.0);
  const double support = kLanczosSupport * filterscale;
  std::vector<Taps> taps(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    const double center = (static_cast<double>(i) + 0.5) * scale;
    // PIL rounds with (int)(v + 0.5), a truncation towards zero.
    const auto lo = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    const auto hi = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in);
    Taps& t = taps[static_cast<size_t>(i)];
    t.first = lo;
    double sum = 0.0;
    for (int64_t x = lo; x < hi; ++x) {
      const double w = lanczos((static_cast<double>(x) - center + 0.5) / filterscale);
      t.weights.push_back(w);
      sum += w;
    }
    if (sum != 0.0)
      for (double& w : t.weights) w /= sum;
  }
  return taps;
}

/// An 8-bit level as PIL's clip8 leaves it: rounded, clamped to 0..255.
float clip8(double v) { return static_cast<float>(std::clamp(std::floor(v + 0.5), 0.0, 255.0)); }

}  // namespace

void draw_line(Raster& canvas, int x0, int y0, int x1, int y1, int width, float value) {
  auto put = [&](int x, int y) {
    if (canvas.contains(y, x)) canvas.at(y, x) = value;
  };
  if (width > 1) {
    const double vx = x1 - x0, vy = y1 - y0, len2 = vx * vx + vy * vy, r2 = width * width / 4.0;
    for (int64_t y = 0; y < canvas.height; ++y)
      for (int64_t x = 0; x < canvas.width; ++x) {
        const double px = static_cast<double>(x - x0), py = static_cast<double>(y - y0);
        const double t = len2 > 0 ? std::clamp((px * vx + py * vy) / len2, 0.0, 1.0) : 0.0;
        const double ex = px - t * vx, ey = py - t * vy;
        if (ex * ex + ey * ey <= r2) canvas.at(y, x) = value;
      }
    return;
  }
  // PIL's line32: Bresenham over the major axis (vertical on a tie), n steps that stop short of the
  // end; ImageDraw.line then sets the end point itself (_imaging.c _draw_lines, "draw last point").
  int dx = std::abs(x1 - x0), dy = std::abs(y1 - y0);
  const int xs = x1 >= x0 ? 1 : -1, ys = y1 >= y0 ? 1 : -1;
  int x = x0, y = y0;
  if (dx == 0 || dy == 0) {
    for (int i = 0; i < dx + dy; ++i, x += dx ? xs : 0, y += dy ? ys : 0) put(x, y);
  } else if (dx > dy) {
    int e = 2 * dy - dx;
    for (int i = 0; i < dx; ++i, x += xs, e += 2 * dy) {
      put(x, y);
      if (e >= 0) y += ys, e -= 2 * dx;
    }
  } else {
    int e = 2 * dx - dy;
    for (int i = 0; i < dy; ++i, y += ys, e += 2 * dx) {
      put(x, y);
      if (e >= 0) x += xs, e -= 2 * dy;
    }
  }
  put(x1, y1);
}

void fill_disk(Raster& canvas, int64_t cy, int64_t cx, double radius, float value) {
  const double r2 = radius * radius;
  for (int64_t y = 0; y < canvas.height; ++y)
    for (int64_t x = 0; x < canvas.width; ++x) {
      const auto ry = static_cast<double>(y - cy), rx = static_cast<double>(x - cx);
      if (ry * ry + rx * rx <= r2) canvas.at(y, x) = value;
    }
}

std::vector<Offset> disk_offsets(int64_t radius) {
  std::vector<Offset> offsets;
  for (int64_t dy = -radius; dy <= radius; ++dy)
    for (int64_t dx = -radius; dx <= radius; ++dx)
      if (dy * dy + dx * dx <= radius * radius) offsets.push_back({static_cast<int>(dy), static_cast<int>(dx)});
  return offsets;
}

Raster dilate(const Raster& src, const std::vector<Offset>& element) {
  Raster out(src.height, src.width);
  for (int64_t y = 0; y < src.height; ++y)
    for (int64_t x = 0; x < src.width; ++x) {
      float m = kDilateBorder;
      for (const Offset& o : element)
        if (src.contains(y + o.dy, x + o.dx)) m = std::max(m, src.at(y + o.dy, x + o.dx));
      out.at(y, x) = m;
    }
  return out;
}

Raster lanczos_resize(const Raster& src, int64_t height, int64_t width) {
  const std::vector<Taps> across = lanczos_taps(src.width, width), down = lanczos_taps(src.height, height);
  Raster wide(src.height, width);  // the horizontal pass, 8-bit as PIL keeps it
  for (int64_t y = 0; y < src.height; ++y)
    for (int64_t x = 0; x < width; ++x) {
      const Taps& t = across[static_cast<size_t>(x)];
      double v = 0.0;
      for (size_t k = 0; k < t.weights.size(); ++k) v += t.weights[k] * src.at(y, t.first + static_cast<int64_t>(k));
      wide.at(y, x) = clip8(v);
    }
  Raster out(height, width);
  for (int64_t y = 0; y < height; ++y) {
    const Taps& t = down[static_cast<size_t>(y)];
    for (int64_t x = 0; x < width; ++x) {
      double v = 0.0;
      for (size_t k = 0; k < t.weights.size(); ++k) v += t.weights[k] * wide.at(t.first + static_cast<int64_t>(k), x);
      out.at(y, x) = clip8(v);
    }
  }
  return out;
}

}  // namespace tn
