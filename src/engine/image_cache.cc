#include "engine/image_cache.h"

#include <openssl/sha.h>

#include <cstring>

namespace radixlm {

ImageHash HashImageBytes(std::span<const uint8_t> bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(bytes.data(), bytes.size(), digest);
  ImageHash h;
  std::memcpy(&h.h1, digest, sizeof(h.h1));
  std::memcpy(&h.h2, digest + sizeof(h.h1), sizeof(h.h2));
  return h;
}

ImageCache::ImageCache(ImageEncoder* encoder, int64_t max_bytes)
    : encoder_(encoder), max_bytes_(max_bytes) {}

StatusOr<EncodedImage> ImageCache::Get(std::span<const uint8_t> bytes) {
  const ImageHash hash = HashImageBytes(bytes);
  {
    MutexLock lock(&mu_);
    if (auto it = entries_.find(hash); it != entries_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      ++counters_.hits;
      return it->second.image;
    }
  }
  auto rows = std::make_shared<std::vector<float>>();
  RADIXLM_ASSIGN_OR_RETURN(ImageTokens tokens, encoder_->Encode(bytes, rows.get()));
  const int64_t n_tokens = tokens.n;
  if (n_tokens <= 0 || static_cast<int64_t>(rows->size()) != n_tokens * encoder_->n_embd() ||
      (tokens.grid_cols != 0 && tokens.grid_rows * tokens.grid_cols != n_tokens)) {
    return Internal("the image encoder returned " + std::to_string(rows->size()) + " values for " +
                    std::to_string(n_tokens) + " tokens (grid " + std::to_string(tokens.grid_rows) +
                    " x " + std::to_string(tokens.grid_cols) + ")");
  }
  int64_t covered = 0;  // the pieces' rows, which must be 0..n_tokens in order
  for (const ImagePiece& piece : tokens.pieces) {
    if (piece.kind != ImagePiece::Kind::kRows) continue;
    if (piece.first_row != covered || piece.n_rows <= 0) covered = -1;
    if (covered < 0) break;
    covered += piece.n_rows;
  }
  if (!tokens.pieces.empty() && covered != n_tokens) {
    return Internal("the image encoder's prompt pieces do not cover its " +
                    std::to_string(n_tokens) + " rows in order");
  }
  EncodedImage image{hash,
                     n_tokens,
                     std::move(rows),
                     tokens.grid_rows,
                     tokens.grid_cols,
                     std::move(tokens).pieces};
  MutexLock lock(&mu_);
  ++counters_.encodes;
  const auto size = static_cast<int64_t>(image.rows->size() * sizeof(float));
  if (size > max_bytes_ || entries_.count(hash) > 0) return image;
  while (bytes_ + size > max_bytes_ && !lru_.empty()) {
    auto victim = entries_.find(lru_.back());
    bytes_ -= static_cast<int64_t>(victim->second.image.rows->size() * sizeof(float));
    entries_.erase(victim);
    lru_.pop_back();
  }
  lru_.push_front(hash);
  entries_.emplace(hash, Entry{image, lru_.begin()});
  bytes_ += size;
  return image;
}

ImageCache::Counters ImageCache::counters() const {
  MutexLock lock(&mu_);
  return counters_;
}

}  // namespace radixlm
