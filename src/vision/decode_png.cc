// PNG through libpng's progressive-free reader, with libpng's own transformations doing the
// conversions of image.h. libpng reports errors by longjmp: the two functions that call setjmp
// hold only trivially destructible locals, and the buffers live in the caller, so a longjmp
// never skips a destructor.
#include <png.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "vision/image_decoders.h"

namespace radixlm::vision::internal {
namespace {

struct PngSource {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;
  char error[256] = {};
};

void PngRead(png_structp png, png_bytep out, size_t n) {
  auto* src = static_cast<PngSource*>(png_get_io_ptr(png));
  if (n > src->size - src->pos) png_error(png, "the file is truncated");
  std::memcpy(out, src->data + src->pos, n);
  src->pos += n;
}

[[noreturn]] void PngError(png_structp png, png_const_charp message) {
  auto* src = static_cast<PngSource*>(png_get_error_ptr(png));
  std::snprintf(src->error, sizeof(src->error), "%s", message);
  png_longjmp(png, 1);
}

void PngWarning(png_structp, png_const_charp) {}

struct PngHeader {
  png_uint_32 width = 0;
  png_uint_32 height = 0;
};

// Reads the header and sets the transformations to 8-bit RGB. False on a libpng error.
bool ReadPngHeader(png_structp png, png_infop info, PngHeader* header) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_info(png, info);
  header->width = png_get_image_width(png, info);
  header->height = png_get_image_height(png, info);
  const int color = png_get_color_type(png, info);
  if (png_get_bit_depth(png, info) == 16) png_set_strip_16(png);  // the high byte, as stb_image
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) {
    png_set_expand_gray_1_2_4_to_8(png);
    png_set_gray_to_rgb(png);
  }
  png_set_strip_alpha(png);  // also drops the alpha that tRNS expansion would add
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  return true;
}

bool ReadPngRows(png_structp png, png_infop info, png_bytepp rows) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_image(png, rows);
  png_read_end(png, info);
  return true;
}

}  // namespace

StatusOr<Image> DecodePng(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  PngSource src{.data = bytes.data(), .size = bytes.size()};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, PngError, PngWarning);
  if (png == nullptr) return InvalidArgument("png image: libpng could not start");
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    return InvalidArgument("png image: libpng could not start");
  }
  struct Cleanup {
    png_structp* png;
    png_infop* info;
    ~Cleanup() { png_destroy_read_struct(png, info, nullptr); }
  } cleanup{&png, &info};
  png_set_read_fn(png, &src, PngRead);
  PngHeader header;
  if (!ReadPngHeader(png, info, &header)) {
    return InvalidArgument(std::string("png image: ") + src.error);
  }
  RADIXLM_RETURN_IF_ERROR(CheckImageSize("png", header.width, header.height, limits));
  if (png_get_channels(png, info) != 3 || png_get_bit_depth(png, info) != 8 ||
      png_get_rowbytes(png, info) != size_t{header.width} * 3) {
    return InvalidArgument("png image: this color type / bit depth does not convert to RGB");
  }
  Image image;
  image.width = static_cast<int>(header.width);
  image.height = static_cast<int>(header.height);
  image.rgb.resize(size_t{header.width} * header.height * 3);
  std::vector<png_bytep> rows(header.height);
  for (png_uint_32 y = 0; y < header.height; ++y) {
    rows[y] = image.rgb.data() + size_t{y} * header.width * 3;
  }
  if (!ReadPngRows(png, info, rows.data())) {
    return InvalidArgument(std::string("png image: ") + src.error);
  }
  return image;
}

}  // namespace radixlm::vision::internal
