#include "testing/fake_image_encoder.h"

#include <string>
#include <string_view>

namespace radixlm {

namespace {

constexpr std::string_view kMagic = "FAKEIMG";

}  // namespace

std::vector<uint8_t> FakeImageEncoder::File(const std::string& seed) {
  const std::string text = std::string(kMagic) + seed;
  return std::vector<uint8_t>(text.begin(), text.end());
}

StatusOr<ImageTokens> FakeImageEncoder::Encode(std::span<const uint8_t> bytes,
                                               std::vector<float>* rows) {
  if (bytes.size() < kMagic.size() ||
      std::string_view(reinterpret_cast<const char*>(bytes.data()), kMagic.size()) != kMagic) {
    return InvalidArgument("cannot decode the image: not a fake image file");
  }
  ++encodes_;
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the bytes
  for (uint8_t b : bytes) h = (h ^ b) * 1099511628211ull;
  rows->resize(static_cast<size_t>(n_tokens_ * n_embd_));
  for (size_t i = 0; i < rows->size(); ++i) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    (*rows)[i] = static_cast<float>(static_cast<int64_t>(h >> 40) % 1000) / 250.0f - 2.0f;
  }
  return ImageTokens{
      .n = n_tokens_, .grid_rows = grid_rows_, .grid_cols = grid_cols_, .pieces = pieces_};
}

}  // namespace radixlm
