// Image resizing as llama.cpp's mtmd preprocessors do it (tools/mtmd/mtmd-image.cpp, img_tool):
// Pillow's separable resampling in fixed point (22 fractional bits: the same integers as
// Pillow's and llama.cpp's), and the fit-and-pad resize that fixed-size projectors use.
#pragma once

#include <array>
#include <cstdint>

#include "vision/image.h"

namespace radixlm::vision {

enum class ResizeFilter { kBilinear, kBicubic, kLanczos };

// Resamples `src` to width x height (each in [1, 65536]) with Pillow's filter of that kind
// (bicubic a = -0.5): horizontal pass, then vertical, each skipped when that side is unchanged.
Image ResizePillow(const Image& src, int width, int height, ResizeFilter filter);

// The size llama.cpp's dynamic-resolution preprocessors resize to (img_tool::
// calc_size_preserved_ratio, Hugging Face's Qwen2-VL "smart_resize", in llama.cpp's float
// arithmetic): each side rounded to a multiple of `align` (at least `align`); over max_pixels,
// both sides scaled down by sqrt(w * h / max_pixels) and floored to multiples; under
// min_pixels, scaled up by sqrt(min_pixels / (w * h)) and ceiled. width, height >= 1.
struct ImageSize {
  int width = 0;
  int height = 0;
};
ImageSize SizePreservingRatio(int width, int height, int align, int64_t min_pixels,
                              int64_t max_pixels);

// llama.cpp's PAD_CEIL resize: scale to fit inside width x height keeping the aspect ratio
// (each side ceil(side * scale), at most the target), centre on a `pad` canvas at
// ((width - w') / 2, (height - h') / 2). An image already that size is copied.
Image ResizeToFit(const Image& src, int width, int height, ResizeFilter filter,
                  std::array<uint8_t, 3> pad = {0, 0, 0});

}  // namespace radixlm::vision
