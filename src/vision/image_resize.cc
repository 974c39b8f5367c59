#include "vision/image_resize.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <vector>

namespace radixlm::vision {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;

double FilterSupport(ResizeFilter filter) {
  switch (filter) {
    case ResizeFilter::kBilinear:
      return 1.0;
    case ResizeFilter::kBicubic:
      return 2.0;
    case ResizeFilter::kLanczos:
      return 3.0;
  }
  return 1.0;
}

double FilterWeight(ResizeFilter filter, double x) {
  if (filter == ResizeFilter::kLanczos) {
    if (x < -3.0 || x >= 3.0) return 0.0;
    auto sinc = [](double v) {
      if (v == 0.0) return 1.0;
      const double pi_v = v * 3.141592653589793238462643383279502884;
      return std::sin(pi_v) / pi_v;
    };
    return sinc(x) * sinc(x / 3.0);
  }
  if (x < 0.0) x = -x;
  if (filter == ResizeFilter::kBilinear) return x < 1.0 ? 1.0 - x : 0.0;
  constexpr double a = -0.5;
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

uint8_t Clip8(int32_t v) { return static_cast<uint8_t>(std::clamp(v, 0, 255)); }

// Per output pixel: the first input pixel, how many, and their fixed-point weights.
struct Coefficients {
  int ksize = 0;
  std::vector<int> bounds;       // [out, 2]: xmin, count
  std::vector<int32_t> weights;  // [out, ksize]
};

Coefficients Precompute(int in_size, int out_size, ResizeFilter filter) {
  Coefficients c;
  const double scale = static_cast<double>(in_size) / out_size;
  const double filterscale = std::max(scale, 1.0);
  const double support = FilterSupport(filter) * filterscale;
  c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  std::vector<double> pre(static_cast<size_t>(out_size) * c.ksize);
  c.bounds.resize(static_cast<size_t>(out_size) * 2);
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = (xx + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double ww = 0.0;
    double* k = pre.data() + static_cast<size_t>(xx) * c.ksize;
    int x = 0;
    for (; x < xmax; ++x) {
      k[x] = FilterWeight(filter, (x + xmin - center + 0.5) * ss);
      ww += k[x];
    }
    for (x = 0; x < xmax; ++x) {
      if (ww != 0.0) k[x] /= ww;
    }
    for (; x < c.ksize; ++x) k[x] = 0;
    c.bounds[xx * 2] = xmin;
    c.bounds[xx * 2 + 1] = xmax;
  }
  c.weights.resize(pre.size());
  const double fxp = std::ldexp(1.0, kPrecisionBits);
  for (size_t i = 0; i < pre.size(); ++i) {
    // Pillow adds +/- 0.5 then truncates toward zero.
    c.weights[i] = static_cast<int32_t>(pre[i] * fxp + (pre[i] < 0 ? -0.5 : 0.5));
  }
  return c;
}

Image Horizontal(const Image& src, int out_w, const Coefficients& c) {
  Image out{.width = out_w, .height = src.height, .rgb = {}};
  out.rgb.resize(static_cast<size_t>(out_w) * src.height * 3);
  for (int y = 0; y < src.height; ++y) {
    const uint8_t* row = src.rgb.data() + static_cast<size_t>(y) * src.width * 3;
    uint8_t* dst = out.rgb.data() + static_cast<size_t>(y) * out_w * 3;
    for (int xx = 0; xx < out_w; ++xx) {
      const int xmin = c.bounds[xx * 2], count = c.bounds[xx * 2 + 1];
      const int32_t* k = c.weights.data() + static_cast<size_t>(xx) * c.ksize;
      const uint8_t* p = row + static_cast<size_t>(xmin) * 3;
      int32_t s0 = 1 << (kPrecisionBits - 1), s1 = s0, s2 = s0;
      for (int x = 0; x < count; ++x, p += 3) {
        s0 += p[0] * k[x];
        s1 += p[1] * k[x];
        s2 += p[2] * k[x];
      }
      dst[xx * 3] = Clip8(s0 >> kPrecisionBits);
      dst[xx * 3 + 1] = Clip8(s1 >> kPrecisionBits);
      dst[xx * 3 + 2] = Clip8(s2 >> kPrecisionBits);
    }
  }
  return out;
}

Image Vertical(const Image& src, int out_h, const Coefficients& c) {
  const size_t row_elems = static_cast<size_t>(src.width) * 3;
  Image out{.width = src.width, .height = out_h, .rgb = {}};
  out.rgb.resize(row_elems * out_h);
  std::vector<int32_t> acc(row_elems);
  for (int yy = 0; yy < out_h; ++yy) {
    const int ymin = c.bounds[yy * 2], count = c.bounds[yy * 2 + 1];
    const int32_t* k = c.weights.data() + static_cast<size_t>(yy) * c.ksize;
    std::fill(acc.begin(), acc.end(), 1 << (kPrecisionBits - 1));
    for (int y = 0; y < count; ++y) {
      const uint8_t* row = src.rgb.data() + static_cast<size_t>(ymin + y) * row_elems;
      for (size_t i = 0; i < row_elems; ++i) acc[i] += row[i] * k[y];
    }
    uint8_t* dst = out.rgb.data() + static_cast<size_t>(yy) * row_elems;
    for (size_t i = 0; i < row_elems; ++i) dst[i] = Clip8(acc[i] >> kPrecisionBits);
  }
  return out;
}

}  // namespace

Image ResizePillow(const Image& src, int width, int height, ResizeFilter filter) {
  assert(width >= 1 && height >= 1 && width <= 65536 && height <= 65536);
  const bool horizontal = width != src.width;
  const bool vertical = height != src.height;
  if (horizontal && vertical) {
    const Image tmp = Horizontal(src, width, Precompute(src.width, width, filter));
    return Vertical(tmp, height, Precompute(src.height, height, filter));
  }
  if (horizontal) return Horizontal(src, width, Precompute(src.width, width, filter));
  if (vertical) return Vertical(src, height, Precompute(src.height, height, filter));
  return src;
}

ImageSize SizePreservingRatio(int width, int height, int align, int64_t min_pixels,
                              int64_t max_pixels) {
  const float f = static_cast<float>(align);
  auto round_by = [&](float x) { return static_cast<int>(std::round(x / f)) * align; };
  auto ceil_by = [&](float x) { return static_cast<int>(std::ceil(x / f)) * align; };
  auto floor_by = [&](float x) { return static_cast<int>(std::floor(x / f)) * align; };
  int w = std::max(align, round_by(static_cast<float>(width)));
  int h = std::max(align, round_by(static_cast<float>(height)));
  if (max_pixels > 0 && int64_t{w} * h > max_pixels) {
    const float beta = std::sqrt(static_cast<float>(height) * width / max_pixels);
    h = std::max(align, floor_by(height / beta));
    w = std::max(align, floor_by(width / beta));
  } else if (min_pixels > 0 && int64_t{w} * h < min_pixels) {
    const float beta =
        std::sqrt(static_cast<float>(min_pixels) / (static_cast<float>(height) * width));
    h = ceil_by(height * beta);
    w = ceil_by(width * beta);
  }
  return {.width = w, .height = h};
}

Image ResizeToFit(const Image& src, int width, int height, ResizeFilter filter,
                  std::array<uint8_t, 3> pad) {
  if (src.width == width && src.height == height) return src;
  const float scale =
      std::min(static_cast<float>(width) / src.width, static_cast<float>(height) / src.height);
  const int new_w = std::min(static_cast<int>(std::ceil(src.width * scale)), width);
  const int new_h = std::min(static_cast<int>(std::ceil(src.height * scale)), height);
  const Image resized = ResizePillow(src, new_w, new_h, filter);
  Image out{.width = width, .height = height, .rgb = {}};
  out.rgb.resize(static_cast<size_t>(width) * height * 3);
  for (size_t i = 0; i < out.rgb.size(); i += 3) {
    out.rgb[i] = pad[0];
    out.rgb[i + 1] = pad[1];
    out.rgb[i + 2] = pad[2];
  }
  const int off_x = (width - new_w) / 2, off_y = (height - new_h) / 2;
  for (int y = 0; y < new_h; ++y) {
    std::copy_n(resized.rgb.data() + static_cast<size_t>(y) * new_w * 3, new_w * 3,
                out.rgb.data() + (static_cast<size_t>(y + off_y) * width + off_x) * 3);
  }
  return out;
}

}  // namespace radixlm::vision
