// GIF through giflib's record-level reader: the first image only (the rest of an animation is
// never read), composed on the logical screen as image.h says (stb_image's first-frame rule:
// transparent pixels black, pixels outside the frame the background colour when its index is
// above 0, else black). giflib reports errors by return codes.
#include <gif_lib.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "vision/image_decoders.h"

namespace radixlm::vision::internal {
namespace {

struct GifSource {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;
};

int GifRead(GifFileType* gif, GifByteType* out, int n) {
  auto* src = static_cast<GifSource*>(gif->UserData);
  const size_t take = std::min(static_cast<size_t>(std::max(n, 0)), src->size - src->pos);
  std::memcpy(out, src->data + src->pos, take);
  src->pos += take;
  return static_cast<int>(take);
}

std::string GifError(const GifFileType* gif, const char* what) {
  const char* reason = GifErrorString(gif->Error);
  return std::string("gif image: ") + what + (reason != nullptr ? std::string(": ") + reason : "");
}

void PutGifColor(const ColorMapObject* map, int index, uint8_t* rgb) {
  if (map == nullptr || index < 0 || index >= map->ColorCount) {
    rgb[0] = rgb[1] = rgb[2] = 0;
    return;
  }
  const GifColorType& c = map->Colors[index];
  rgb[0] = c.Red;
  rgb[1] = c.Green;
  rgb[2] = c.Blue;
}

}  // namespace

StatusOr<Image> DecodeGif(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  GifSource src{.data = bytes.data(), .size = bytes.size()};
  int error = 0;
  GifFileType* gif = DGifOpen(&src, GifRead, &error);
  if (gif == nullptr) {
    const char* reason = GifErrorString(error);
    return InvalidArgument(std::string("gif image: the header is truncated or corrupt") +
                           (reason != nullptr ? std::string(": ") + reason : ""));
  }
  struct Cleanup {
    GifFileType* gif;
    ~Cleanup() {
      int ignored = 0;
      DGifCloseFile(gif, &ignored);
    }
  } cleanup{gif};
  RADIXLM_RETURN_IF_ERROR(CheckImageSize("gif", gif->SWidth, gif->SHeight, limits));
  int transparent = -1;
  for (;;) {
    GifRecordType record;
    if (DGifGetRecordType(gif, &record) == GIF_ERROR) {
      return InvalidArgument(GifError(gif, "truncated or corrupt before the first image"));
    }
    if (record == TERMINATE_RECORD_TYPE) return InvalidArgument("gif image: no image in the file");
    if (record == EXTENSION_RECORD_TYPE) {
      int code = 0;
      GifByteType* ext = nullptr;
      if (DGifGetExtension(gif, &code, &ext) == GIF_ERROR) {
        return InvalidArgument(GifError(gif, "corrupt extension"));
      }
      if (code == GRAPHICS_EXT_FUNC_CODE && ext != nullptr && ext[0] >= 4) {
        GraphicsControlBlock gcb;
        if (DGifExtensionToGCB(ext[0], ext + 1, &gcb) == GIF_OK) {
          transparent = gcb.TransparentColor;
        }
      }
      while (ext != nullptr) {
        if (DGifGetExtensionNext(gif, &ext) == GIF_ERROR) {
          return InvalidArgument(GifError(gif, "corrupt extension"));
        }
      }
      continue;
    }
    if (record != IMAGE_DESC_RECORD_TYPE) continue;
    if (DGifGetImageDesc(gif) == GIF_ERROR) {
      return InvalidArgument(GifError(gif, "corrupt image descriptor"));
    }
    break;
  }
  const GifImageDesc& frame = gif->Image;
  const int64_t screen_w = gif->SWidth, screen_h = gif->SHeight;
  if (frame.Left < 0 || frame.Top < 0 || frame.Width <= 0 || frame.Height <= 0 ||
      frame.Left + int64_t{frame.Width} > screen_w ||
      frame.Top + int64_t{frame.Height} > screen_h) {
    return InvalidArgument("gif image: the first frame lies outside the logical screen");
  }
  const ColorMapObject* map = frame.ColorMap != nullptr ? frame.ColorMap : gif->SColorMap;
  if (map == nullptr) return InvalidArgument("gif image: no color table");
  Image image;
  image.width = static_cast<int>(screen_w);
  image.height = static_cast<int>(screen_h);
  image.rgb.assign(static_cast<size_t>(screen_w * screen_h * 3), 0);
  if (gif->SBackGroundColor > 0 && gif->SColorMap != nullptr) {
    uint8_t bg[3];
    PutGifColor(gif->SColorMap, gif->SBackGroundColor, bg);
    for (int64_t y = 0; y < screen_h; ++y) {
      for (int64_t x = 0; x < screen_w; ++x) {
        if (y >= frame.Top && y < frame.Top + frame.Height && x >= frame.Left &&
            x < frame.Left + frame.Width) {
          continue;
        }
        std::memcpy(image.rgb.data() + (y * screen_w + x) * 3, bg, 3);
      }
    }
  }
  std::vector<GifPixelType> line(frame.Width);
  // Interlaced frames store rows in four passes: every 8th from 0, every 8th from 4, every 4th
  // from 2, every 2nd from 1.
  constexpr int kPassStart[4] = {0, 4, 2, 1};
  constexpr int kPassStep[4] = {8, 8, 4, 2};
  const int passes = frame.Interlace ? 4 : 1;
  for (int pass = 0; pass < passes; ++pass) {
    const int start = frame.Interlace ? kPassStart[pass] : 0;
    const int step = frame.Interlace ? kPassStep[pass] : 1;
    for (int row = start; row < frame.Height; row += step) {
      if (DGifGetLine(gif, line.data(), frame.Width) == GIF_ERROR) {
        return InvalidArgument(GifError(gif, "the first frame is truncated or corrupt"));
      }
      uint8_t* out = image.rgb.data() + ((frame.Top + row) * screen_w + frame.Left) * 3;
      for (int x = 0; x < frame.Width; ++x) {
        if (line[x] != transparent) PutGifColor(map, line[x], out + 3 * x);
      }
    }
  }
  return image;
}

}  // namespace radixlm::vision::internal
