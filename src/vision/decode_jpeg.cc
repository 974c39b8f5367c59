// JPEG through libjpeg-turbo (islow IDCT and fancy upsampling, its defaults). libjpeg reports
// errors by calling error_exit, which longjmps back to the one function that calls setjmp: it
// holds only trivially destructible locals, and the pixels live in the caller, so a longjmp
// never skips a destructor. A premature end of data is only a warning to libjpeg (it pads the
// image with grey); here it is an error, as are more than kMaxJpegScans scans (a progressive file
// can make the decoder loop over the whole image once per scan).
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>

// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include "vision/image_decoders.h"

namespace radixlm::vision::internal {
namespace {

constexpr int kMaxJpegScans = 1000;

struct JpegErrors {
  jpeg_error_mgr mgr;  // first: libjpeg's pointer to it is a pointer to this
  jpeg_progress_mgr progress;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX + 64] = {};
};

[[noreturn]] void JpegError(j_common_ptr cinfo) {
  auto* errors = reinterpret_cast<JpegErrors*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, errors->message);
  std::longjmp(errors->jump, 1);
}

void JpegMessage(j_common_ptr cinfo, int level) {
  if (level == -1 && cinfo->err->msg_code == JWRN_JPEG_EOF) JpegError(cinfo);  // truncated
}

void JpegProgress(j_common_ptr cinfo) {
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (cinfo->is_decompressor && d->input_scan_number > kMaxJpegScans) {
    auto* errors = reinterpret_cast<JpegErrors*>(cinfo->err);
    std::snprintf(errors->message, sizeof(errors->message), "more than %d scans", kMaxJpegScans);
    std::longjmp(errors->jump, 1);
  }
}

struct JpegHeader {
  JDIMENSION width = 0;
  JDIMENSION height = 0;
  bool cmyk = false;
};

// Stage 1 reads the header (out: its dimensions); stage 2 decodes into `out` (width * height * 3
// bytes; `row` scratch of width * 4). False on a libjpeg error (message in errors).
bool Decode(jpeg_decompress_struct* cinfo, JpegErrors* errors, int stage, JpegHeader* header,
            uint8_t* out, uint8_t* row) {
  if (setjmp(errors->jump)) return false;
  if (stage == 1) {
    jpeg_read_header(cinfo, TRUE);
    header->cmyk = cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK;
    cinfo->out_color_space = header->cmyk ? JCS_CMYK : JCS_RGB;
    header->width = cinfo->image_width;
    header->height = cinfo->image_height;
    return true;
  }
  jpeg_start_decompress(cinfo);
  if (cinfo->output_width != header->width || cinfo->output_height != header->height ||
      cinfo->output_components != (header->cmyk ? 4 : 3)) {
    std::snprintf(errors->message, sizeof(errors->message), "unexpected output geometry");
    return false;
  }
  const size_t w = header->width;
  while (cinfo->output_scanline < cinfo->output_height) {
    uint8_t* dst = out + size_t{cinfo->output_scanline} * w * 3;
    JSAMPROW rows[1] = {header->cmyk ? row : dst};
    jpeg_read_scanlines(cinfo, rows, 1);
    if (header->cmyk) {  // stb_image's blinn_8x8(c, k) on the stored (Adobe-inverted) values
      for (size_t x = 0; x < w; ++x) {
        const unsigned k = row[4 * x + 3];
        for (int c = 0; c < 3; ++c) {
          const unsigned t = row[4 * x + c] * k + 128;
          dst[3 * x + c] = static_cast<uint8_t>((t + (t >> 8)) >> 8);
        }
      }
    }
  }
  jpeg_finish_decompress(cinfo);
  return true;
}

}  // namespace

StatusOr<Image> DecodeJpeg(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  jpeg_decompress_struct cinfo;
  JpegErrors errors;
  cinfo.err = jpeg_std_error(&errors.mgr);
  errors.mgr.error_exit = JpegError;
  errors.mgr.emit_message = JpegMessage;
  jpeg_create_decompress(&cinfo);
  struct Cleanup {
    jpeg_decompress_struct* cinfo;
    ~Cleanup() { jpeg_destroy_decompress(cinfo); }
  } cleanup{&cinfo};
  errors.progress.progress_monitor = JpegProgress;
  cinfo.progress = &errors.progress;
  jpeg_mem_src(&cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
  JpegHeader header;
  if (!Decode(&cinfo, &errors, 1, &header, nullptr, nullptr)) {
    return InvalidArgument(std::string("jpeg image: ") + errors.message);
  }
  RADIXLM_RETURN_IF_ERROR(CheckImageSize("jpeg", header.width, header.height, limits));
  Image image;
  image.width = static_cast<int>(header.width);
  image.height = static_cast<int>(header.height);
  image.rgb.resize(size_t{header.width} * header.height * 3);
  std::vector<uint8_t> row(header.cmyk ? size_t{header.width} * 4 : 0);
  if (!Decode(&cinfo, &errors, 2, &header, image.rgb.data(), row.data())) {
    return InvalidArgument(std::string("jpeg image: ") + errors.message);
  }
  return image;
}

}  // namespace radixlm::vision::internal
