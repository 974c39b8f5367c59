// radixlm's image embeddings for bench/vision_oracle.py: decodes each image (vision/image.h)
// and encodes it with a projector GGUF (vision/projector.h).
//
//   vision_encode MMPROJ OUT_DIR THREADS IMAGE...
// IMAGE is a file or raw:W:H:PATH (8-bit RGB bytes). For image i, OUT_DIR/i.f32 gets the
// [n_tokens, n_embd] floats and OUT_DIR/i.rgb the decoded pixels, and stdout one JSON line
// {"image": i, "width": .., "height": .., "n_tokens": .., "n_embd": .., "encode_ms": ..}.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "vision/image.h"
#include "vision/projector.h"

using radixlm::vision::DecodeImage;
using radixlm::vision::Image;
using radixlm::vision::Projector;

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s MMPROJ OUT_DIR THREADS IMAGE...\n", argv[0]);
    return 2;
  }
  const std::string out_dir = argv[2];
  auto projector = Projector::Load(argv[1], {.n_threads = std::atoi(argv[3])});
  if (!projector.ok()) {
    std::fprintf(stderr, "%s\n", projector.status().ToString().c_str());
    return 1;
  }
  for (int i = 4; i < argc; ++i) {
    const std::string arg = argv[i];
    Image image;
    if (arg.rfind("raw:", 0) == 0) {
      const size_t a = arg.find(':', 4), b = arg.find(':', a + 1);
      image.width = std::atoi(arg.substr(4, a - 4).c_str());
      image.height = std::atoi(arg.substr(a + 1, b - a - 1).c_str());
      std::ifstream in(arg.substr(b + 1), std::ios::binary);
      image.rgb.assign(std::istreambuf_iterator<char>(in), {});
    } else {
      std::ifstream in(arg, std::ios::binary);
      const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
      auto decoded = DecodeImage(bytes);
      if (!decoded.ok()) {
        std::fprintf(stderr, "%s: %s\n", arg.c_str(), decoded.status().ToString().c_str());
        return 1;
      }
      image = std::move(*decoded);
    }
    std::vector<float> out;
    const auto t0 = std::chrono::steady_clock::now();
    const radixlm::Status status = (*projector)->Encode(image, &out);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!status.ok()) {
      std::fprintf(stderr, "%s: %s\n", arg.c_str(), status.ToString().c_str());
      return 1;
    }
    const std::string stem = out_dir + "/" + std::to_string(i - 4);
    std::ofstream(stem + ".f32", std::ios::binary)
        .write(reinterpret_cast<const char*>(out.data()),
               static_cast<std::streamsize>(out.size() * sizeof(float)));
    std::ofstream(stem + ".rgb", std::ios::binary)
        .write(reinterpret_cast<const char*>(image.rgb.data()),
               static_cast<std::streamsize>(image.rgb.size()));
    std::printf(
        "{\"image\": %d, \"width\": %d, \"height\": %d, \"n_tokens\": %lld, \"n_embd\": %lld, "
        "\"encode_ms\": %.1f}\n",
        i - 4, image.width, image.height, static_cast<long long>((*projector)->TokensFor(image)),
        static_cast<long long>((*projector)->n_embd()), ms);
    std::fflush(stdout);
  }
  return 0;
}
