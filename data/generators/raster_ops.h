#pragma once
// The small raster operations the LRA Pathfinder generator (pathfinder_generator.h) is built from,
// each the counterpart of the library call the published "snakes" code (Linsley et al. 2018,
// github.com/drewlinsley/pathfinder, snakes.py / snakes2.py) makes: a PIL ImageDraw line, a
// numpy disk, an OpenCV dilation and scipy.misc.imresize's Lanczos downscale. They follow those
// libraries' definitions, not their exact floating-point arithmetic.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace tn {

/// A float raster, row-major: height rows of width values.
struct Raster {
  int64_t height = 0, width = 0;
  std::vector<float> values;

  Raster() = default;
  Raster(int64_t h, int64_t w, float fill = 0.0f) : height(h), width(w), values(static_cast<size_t>(h * w), fill) {}
  float& at(int64_t y, int64_t x) { return values[static_cast<size_t>(y * width + x)]; }
  float at(int64_t y, int64_t x) const { return values[static_cast<size_t>(y * width + x)]; }
  bool contains(int64_t y, int64_t x) const { return y >= 0 && y < height && x >= 0 && x < width; }
};

/// An offset (dy, dx) of a structuring element from its anchor.
struct Offset {
  int dy = 0, dx = 0;
};

/// Draws the segment from column x0, row y0 to (x1, y1) as PIL's ImageDraw.line does on an 'F'
/// image: `width` <= 1 is PIL's Bresenham line (its loop runs `i < n`, one pixel short of (x1, y1))
/// followed by the end point, which ImageDraw.line sets on its own (Pillow's _imaging.c
/// _draw_lines: "draw last point"), so both ends are drawn; a wider line sets the pixels whose centres lie within width / 2 of the
/// segment (PIL fills a polygon there; the two differ on a few edge pixels). Pixels outside the
/// raster are skipped. Sets the pixels to `value` (no blending).
void draw_line(Raster& canvas, int x0, int y0, int x1, int y1, int width, float value);

/// Sets to `value` the pixels (y, x) with (y - cy)^2 + (x - cx)^2 <= radius^2, as the numpy ogrid
/// disk of snakes2.draw_circle and snakes.generate_dilation_struct.
void fill_disk(Raster& canvas, int64_t cy, int64_t cx, double radius, float value);

/// The offsets of a disk structuring element of integer `radius` (dy^2 + dx^2 <= radius^2; radius
/// 0 is the anchor alone), as snakes.generate_dilation_struct.
std::vector<Offset> disk_offsets(int64_t radius);

/// The value cv2.dilate gives a pixel of float input where no offset of the element lands inside
/// the image: OpenCV's default border for morphology (morphologyDefaultBorderValue) becomes, for
/// a dilation, the lowest value of the depth (-FLT_MAX for CV_32F, -DBL_MAX for CV_64F;
/// imgproc/src/morph.dispatch.cpp), so the border never wins a max but a pixel with no tap
/// inside keeps it. snakes.py's dilations of float masks rely on this: find_available_coordinates
/// returns no position when np.min of the dilated mask is negative.
inline constexpr float kDilateBorder = std::numeric_limits<float>::lowest();

/// cv2.dilate of float input with a binary structuring element given as offsets from its anchor:
/// out(y, x) = max over the offsets of src(y + dy, x + dx), pixels outside `src` contributing
/// nothing; kDilateBorder where no offset lands inside (an element that holds its anchor never
/// leaves one).
Raster dilate(const Raster& src, const std::vector<Offset>& element);

/// PIL's Image.resize with the LANCZOS filter on an 8-bit ('L') image, as scipy.misc.imresize
/// (interp='lanczos') calls it: a separable resample, horizontal pass first, the Lanczos kernel
/// (a = 3) widened by the scale when shrinking, centres at (i + 0.5) · in / out, weights
/// normalised per output pixel, each pass rounded and clipped to 0..255. `src` holds levels in
/// 0..255 (imresize's byte-scaling is the caller's); returns levels in 0..255, integer-valued.
/// Differs from PIL only in using double instead of 22-bit fixed-point weights.
Raster lanczos_resize(const Raster& src, int64_t height, int64_t width);

}  // namespace tn
