#include "data/generators/paddle_raster.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace tn {
namespace {

constexpr float kWhite = 255.0f;

/// Levels 0..255 as values in [0, 1].
std::vector<float> unit_values(const Raster& levels) {
  std::vector<float> out(levels.values.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = levels.values[i] / kWhite;
  return out;
}

}  // namespace

PaddleAtlas::PaddleAtlas(const PaddleGeometry& geometry) : geometry_(geometry) {
  const PaddleGeometry& g = geometry;
  const double fine_thickness = g.thickness * static_cast<double>(g.antialias_scale);
  if (g.length < 1 || g.antialias_scale < 1 || g.margin < 0 || !(fine_thickness >= 1.0) ||
      fine_thickness != std::round(fine_thickness))
    throw std::invalid_argument(
        "PaddleAtlas: paddle_length " + std::to_string(g.length) + ", antialias_scale " +
        std::to_string(g.antialias_scale) + ", margin " + std::to_string(g.margin) + ", thickness " +
        std::to_string(g.thickness) +
        ": needs length >= 1, scale >= 1, margin >= 0 and thickness x scale a positive integer");
  half_ = g.length + static_cast<int64_t>(std::ceil(g.thickness)) + g.margin;
  reach_ = g.length * g.antialias_scale;
  const int64_t span = 2 * reach_ + 1;
  stamps_.resize(static_cast<size_t>(span * span));
  // A ceil-rounded end lies less than sqrt(2) from the exact one, at distance reach: render the ring.
  for (int64_t dy = -reach_; dy <= reach_; ++dy)
    for (int64_t dx = -reach_; dx <= reach_; ++dx)
      if (std::abs(std::hypot(static_cast<double>(dy), static_cast<double>(dx)) - static_cast<double>(reach_)) < 1.5)
        stamps_[static_cast<size_t>((dy + reach_) * span + dx + reach_)] =
            render(static_cast<int>(dy), static_cast<int>(dx));
}

PaddleStamp PaddleAtlas::render(int dy, int dx) const {
  const PaddleGeometry& g = geometry_;
  const int64_t side = this->side(), fine_centre = half_ * g.antialias_scale;
  Raster fine(2 * fine_centre + 1, 2 * fine_centre + 1);
  const auto c = static_cast<int>(fine_centre);
  draw_line(fine, c, c, c + dx, c + dy,
            static_cast<int>(std::lround(g.thickness * static_cast<double>(g.antialias_scale))), kWhite);
  PaddleStamp stamp;
  stamp.line = unit_values(lanczos_resize(fine, side, side));
  stamp.mask = unit_values(lanczos_resize(dilate(fine, disk_offsets(g.margin * g.antialias_scale)), side, side));
  // seed_snake's structuring element: the mask drawn from (head, head) in a window of `window`
  // pixels, cast to uint8 by OpenCV (so only the values exactly 1 count), anchored at its centre.
  const int64_t window = 2 * (g.length + g.margin) + 1, head = g.length + g.margin + 1, anchor = window / 2;
  for (int64_t r = 0; r < window; ++r)
    for (int64_t col = 0; col < window; ++col) {
      const int64_t pr = r - head + half_, pc = col - head + half_;
      if (pr >= 0 && pr < side && pc >= 0 && pc < side && stamp.mask[static_cast<size_t>(pr * side + pc)] == 1.0f)
        stamp.seed_element.push_back({static_cast<int>(r - anchor), static_cast<int>(col - anchor)});
    }
  return stamp;
}

const PaddleStamp& PaddleAtlas::stamp(double orientation) const {
  const auto fine_centre = static_cast<double>(half_ * geometry_.antialias_scale);
  const auto reach = static_cast<double>(reach_);
  // snakes.translate_coord on the fine grid: ceil(centre + reach · sin), ceil(centre + reach · cos).
  const auto dy = static_cast<int64_t>(std::ceil(fine_centre + reach * std::sin(orientation)) - fine_centre);
  const auto dx = static_cast<int64_t>(std::ceil(fine_centre + reach * std::cos(orientation)) - fine_centre);
  const int64_t span = 2 * reach_ + 1;
  if (std::abs(dy) > reach_ || std::abs(dx) > reach_ ||
      stamps_[static_cast<size_t>((dy + reach_) * span + dx + reach_)].line.empty())
    throw std::logic_error("PaddleAtlas: no paddle rendered for the end offset (" + std::to_string(dy) + ", " +
                           std::to_string(dx) + ")");
  return stamps_[static_cast<size_t>((dy + reach_) * span + dx + reach_)];
}

Raster render_marker(int64_t window, int64_t row, int64_t column, double radius, int64_t antialias_scale) {
  if (window < 1 || antialias_scale < 1)
    throw std::invalid_argument("render_marker: window " + std::to_string(window) + ", antialias_scale " +
                                std::to_string(antialias_scale) + " (both must be >= 1)");
  const auto scale = static_cast<double>(antialias_scale);
  Raster fine(window * antialias_scale, window * antialias_scale);
  fill_disk(fine, row * antialias_scale, column * antialias_scale, radius * scale, kWhite);
  Raster marker = lanczos_resize(fine, window, window);
  for (float& v : marker.values) v /= kWhite;
  return marker;
}

}  // namespace tn
