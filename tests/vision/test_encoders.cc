#include "test_encoders.h"

#include <gif_lib.h>
#include <png.h>
#include <webp/encode.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

// clang-format off
#include <jpeglib.h>
// clang-format on

namespace radixlm::vision::testing {

std::vector<uint8_t> EncodePng(const std::vector<uint8_t>& pixels, int width, int height,
                               int channels, bool interlaced, int bit_depth) {
  // The low-level writer (the simplified one cannot interlace).
  std::vector<uint8_t> out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) throw std::runtime_error("png encode");
  png_set_write_fn(
      png, &out,
      [](png_structp p, png_bytep data, size_t n) {
        auto* o = static_cast<std::vector<uint8_t>*>(png_get_io_ptr(p));
        o->insert(o->end(), data, data + n);
      },
      nullptr);
  const int color = channels == 1   ? PNG_COLOR_TYPE_GRAY
                    : channels == 2 ? PNG_COLOR_TYPE_GRAY_ALPHA
                    : channels == 3 ? PNG_COLOR_TYPE_RGB
                                    : PNG_COLOR_TYPE_RGB_ALPHA;
  png_set_IHDR(png, info, width, height, bit_depth, color,
               interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  std::vector<png_bytep> rows(height);
  for (int y = 0; y < height; ++y) {
    rows[y] = const_cast<png_bytep>(pixels.data()) + size_t(y) * width * channels * bit_depth / 8;
  }
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

std::vector<uint8_t> EncodePalettePng(const std::vector<uint8_t>& indices, int width, int height,
                                      const std::vector<uint8_t>& palette) {
  png_image image;
  std::memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  image.width = width;
  image.height = height;
  image.format = PNG_FORMAT_RGB_COLORMAP;
  image.colormap_entries = static_cast<png_uint_32>(palette.size() / 3);
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&image, nullptr, &size, 0, indices.data(), width,
                                 palette.data())) {
    throw std::runtime_error("png palette size");
  }
  std::vector<uint8_t> out(size);
  if (!png_image_write_to_memory(&image, out.data(), &size, 0, indices.data(), width,
                                 palette.data())) {
    throw std::runtime_error("png palette encode");
  }
  out.resize(size);
  return out;
}

std::vector<uint8_t> EncodeJpeg(const std::vector<uint8_t>& pixels, int width, int height,
                                int channels, int quality, bool progressive) {
  jpeg_compress_struct cinfo;
  jpeg_error_mgr err;
  cinfo.err = jpeg_std_error(&err);
  jpeg_create_compress(&cinfo);
  unsigned char* mem = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &mem, &size);
  cinfo.image_width = width;
  cinfo.image_height = height;
  cinfo.input_components = channels;
  cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  if (progressive) jpeg_simple_progression(&cinfo);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row =
        const_cast<JSAMPROW>(pixels.data()) + size_t(cinfo.next_scanline) * width * channels;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  std::vector<uint8_t> out(mem, mem + size);
  jpeg_destroy_compress(&cinfo);
  std::free(mem);
  return out;
}

std::vector<uint8_t> EncodeWebpLossless(const std::vector<uint8_t>& pixels, int width, int height,
                                        int channels) {
  uint8_t* mem = nullptr;
  const size_t size = channels == 4
                          ? WebPEncodeLosslessRGBA(pixels.data(), width, height, width * 4, &mem)
                          : WebPEncodeLosslessRGB(pixels.data(), width, height, width * 3, &mem);
  if (size == 0) throw std::runtime_error("webp encode");
  std::vector<uint8_t> out(mem, mem + size);
  WebPFree(mem);
  return out;
}

std::vector<uint8_t> EncodeGif(int screen_w, int screen_h, int background,
                               const std::vector<uint8_t>& palette,
                               const std::vector<GifFrame>& frames) {
  std::vector<uint8_t> out;
  int error = 0;
  GifFileType* gif = EGifOpen(
      &out,
      [](GifFileType* g, const GifByteType* data, int n) {
        auto* o = static_cast<std::vector<uint8_t>*>(g->UserData);
        o->insert(o->end(), data, data + n);
        return n;
      },
      &error);
  if (gif == nullptr) throw std::runtime_error("gif open");
  const int entries = static_cast<int>(palette.size() / 3);
  std::vector<GifColorType> colors(entries);
  for (int i = 0; i < entries; ++i) {
    colors[i] = {palette[3 * i], palette[3 * i + 1], palette[3 * i + 2]};
  }
  ColorMapObject* map = GifMakeMapObject(entries, colors.data());
  EGifSetGifVersion(gif, true);
  if (EGifPutScreenDesc(gif, screen_w, screen_h, 8, background, map) == GIF_ERROR) {
    throw std::runtime_error("gif screen");
  }
  for (const GifFrame& f : frames) {
    GraphicsControlBlock gcb{};
    gcb.DisposalMode = DISPOSAL_UNSPECIFIED;
    gcb.TransparentColor = f.transparent >= 0 ? f.transparent : NO_TRANSPARENT_COLOR;
    GifByteType ext[4];
    const size_t len = EGifGCBToExtension(&gcb, ext);
    EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, static_cast<int>(len), ext);
    if (EGifPutImageDesc(gif, f.left, f.top, f.width, f.height, f.interlaced, nullptr) ==
        GIF_ERROR) {
      throw std::runtime_error("gif image desc");
    }
    // Interlaced rows go out in pass order.
    constexpr int kStart[4] = {0, 4, 2, 1}, kStep[4] = {8, 8, 4, 2};
    for (int pass = 0; pass < (f.interlaced ? 4 : 1); ++pass) {
      for (int y = f.interlaced ? kStart[pass] : 0; y < f.height;
           y += f.interlaced ? kStep[pass] : 1) {
        std::vector<GifPixelType> line(f.indices.begin() + size_t(y) * f.width,
                                       f.indices.begin() + size_t(y + 1) * f.width);
        EGifPutLine(gif, line.data(), f.width);
      }
    }
  }
  EGifCloseFile(gif, &error);
  GifFreeMapObject(map);
  return out;
}

}  // namespace radixlm::vision::testing
