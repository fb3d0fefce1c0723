#pragma once
// Paddles and markers of the LRA Pathfinder generator, rendered as the published snakes code does
// (snakes.draw_line_n_mask, snakes2.draw_circle; Linsley et al. 2018,
// github.com/drewlinsley/pathfinder): a line drawn antialias_scale times larger, downscaled with
// PIL's Lanczos filter (data/generators/raster_ops.h). A paddle's pixels depend only on where its
// end lands on the fine grid, so PaddleAtlas renders every such paddle once and the generator
// stamps them.
#include <cstdint>
#include <vector>

#include "data/generators/raster_ops.h"

namespace tn {

/// The shape of every paddle of an image, in pixels of the final image.
struct PaddleGeometry {
  int64_t length = 2;           // paddle_length: the line's length
  double thickness = 0.5;       // paddle_thickness; thickness · antialias_scale must be an integer
  int64_t margin = 1;           // paddle_margin: the occupancy mask's extra radius
  int64_t antialias_scale = 2;  // the fine grid is this many times finer
};

/// One paddle: its line and occupancy mask as (2·half + 1)^2 patches centred on the pixel where it
/// starts (half = length + ceil(thickness) + margin), as snakes.draw_line_n_mask returns them.
struct PaddleStamp {
  std::vector<float> line;  // Lanczos levels / 255, in [0, 1], before the contrast factor
  std::vector<float> mask;  // the line dilated by margin · antialias_scale on the fine grid, downscaled, in [0, 1]
  /// The structuring element snakes.seed_snake dilates the occupancy with before it places a
  /// seed paddle: the pixels where `mask`, cut to a (2·(length + margin) + 1)^2 window whose
  /// head sits at (length + margin + 1, length + margin + 1), is exactly 1, as offsets from that
  /// window's centre (cv2.dilate's anchor).
  std::vector<Offset> seed_element;
};

/// Every paddle of a geometry, rendered once at construction: one per end point of the line on
/// the fine grid, i.e. per ceil-rounded position at distance length · antialias_scale from the
/// fine start pixel. Read-only after construction, so threads share one.
class PaddleAtlas {
 public:
  /// Throws std::invalid_argument when length < 1, antialias_scale < 1, margin < 0, or
  /// thickness · antialias_scale is not a positive integer (snakes.py raises there too).
  explicit PaddleAtlas(const PaddleGeometry& geometry);

  /// The paddle that starts at a pixel and points along `orientation` (radians; y = rows down,
  /// x = columns right, 0 along +x, as snakes.translate_coord).
  const PaddleStamp& stamp(double orientation) const;

  /// half = length + ceil(thickness) + margin: a patch is (2·half + 1) pixels wide.
  int64_t half() const { return half_; }
  int64_t side() const { return 2 * half_ + 1; }
  const PaddleGeometry& geometry() const { return geometry_; }

 private:
  PaddleStamp render(int dy, int dx) const;

  PaddleGeometry geometry_;
  int64_t half_ = 0;
  int64_t reach_ = 0;                // length · antialias_scale: the line's end lies within this of the start
  std::vector<PaddleStamp> stamps_;  // by (dy + reach) · (2·reach + 1) + (dx + reach); empty when unreachable
};

/// snakes2.draw_circle: a disk of radius `radius` · `antialias_scale` around fine pixel
/// (row · antialias_scale, column · antialias_scale) on a canvas antialias_scale times larger than
/// `window` × `window`, downscaled to window × window with lanczos_resize. Values are the levels
/// / 255, in [0, 1]. Throws std::invalid_argument for window < 1 or antialias_scale < 1.
Raster render_marker(int64_t window, int64_t row, int64_t column, double radius, int64_t antialias_scale);

}  // namespace tn
