// ImageCache: the encoder's outputs kept by the image's content hash, so that an image sent
// again is not encoded again (a bounded LRU by bytes), and the hash the radix tree keys the
// image's token span by (scheduler/prompt_image.h).
//
// The content hash is 128 bits of the SHA-256 of the file's bytes (OpenSSL's libcrypto): two
// different images sharing a cache entry, or a tree prefix, would need a SHA-256 collision in
// those bits. Thread-safe: the HTTP threads encode; two threads asking for the same new image
// may both encode it (the second result is dropped).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/api.h"
#include "engine/image_encoder.h"
#include "scheduler/prompt_image.h"
#include "util/mutex.h"
#include "util/status.h"

namespace radixlm {

struct EncodedImage {
  ImageHash hash;
  int64_t n_tokens = 0;
  std::shared_ptr<const std::vector<float>> rows;  // [n_tokens, n_embd]
  int64_t grid_rows = 0;                           // ImageTokens' grid (0: a plain sequence)
  int64_t grid_cols = 0;
  std::vector<ImagePiece> pieces = {};  // ImageTokens' (empty: one span of all the rows)
};

ImageHash HashImageBytes(std::span<const uint8_t> bytes);

class ImageCache {
 public:
  using Counters = ImageCounters;

  // encoder: not owned, outlives the cache. max_bytes: the rows kept (0: none kept).
  ImageCache(ImageEncoder* encoder, int64_t max_bytes);

  // The image's rows, from the cache or encoded now (then kept, evicting the least recently
  // used). Errors are the encoder's.
  StatusOr<EncodedImage> Get(std::span<const uint8_t> bytes);

  Counters counters() const;
  ImageEncoder& encoder() const { return *encoder_; }

 private:
  struct HashOf {
    size_t operator()(const ImageHash& h) const { return static_cast<size_t>(h.h1 ^ h.h2); }
  };
  struct Entry {
    EncodedImage image;
    std::list<ImageHash>::iterator lru;
  };

  ImageEncoder* const encoder_;
  const int64_t max_bytes_;
  mutable Mutex mu_;
  std::unordered_map<ImageHash, Entry, HashOf> entries_ GUARDED_BY(mu_);
  std::list<ImageHash> lru_ GUARDED_BY(mu_);  // most recent first
  int64_t bytes_ GUARDED_BY(mu_) = 0;
  Counters counters_ GUARDED_BY(mu_);
};

}  // namespace radixlm
