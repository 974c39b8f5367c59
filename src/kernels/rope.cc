#include "kernels/rope.h"

#include <cassert>
#include <cmath>

namespace radixlm::kernels {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Maximum rotated pairs per head handled with stack buffers.
constexpr int kMaxPairs = 512;

void ApplyWithFreqs(const RopeConfig& config, const double* inv_freq, float* x, int n_heads,
                    int head_dim, int64_t pos) {
  assert(config.rope_dim <= head_dim);
  const int half = config.rope_dim / 2;
  float cos_t[kMaxPairs], sin_t[kMaxPairs];
  for (int k = 0; k < half; ++k) {
    // Angle in double: pos * inv_freq reaches 1e5+ rad at long contexts, where float loses
    // the fractional part (ggml computes it in float; we are at least as accurate).
    const double theta = static_cast<double>(pos) * inv_freq[k];
    cos_t[k] = static_cast<float>(std::cos(theta));
    sin_t[k] = static_cast<float>(std::sin(theta));
  }
  for (int h = 0; h < n_heads; ++h) {
    float* v = x + static_cast<int64_t>(h) * head_dim;
    if (config.neox) {
      for (int k = 0; k < half; ++k) {
        const float a = v[k], b = v[k + half];
        v[k] = a * cos_t[k] - b * sin_t[k];
        v[k + half] = a * sin_t[k] + b * cos_t[k];
      }
    } else {
      for (int k = 0; k < half; ++k) {
        const float a = v[2 * k], b = v[2 * k + 1];
        v[2 * k] = a * cos_t[k] - b * sin_t[k];
        v[2 * k + 1] = a * sin_t[k] + b * cos_t[k];
      }
    }
  }
}

}  // namespace

Rope::Rope(const RopeConfig& config) : config_(config) {
  assert(config.rope_dim > 0 && config.rope_dim % 2 == 0 && config.rope_dim / 2 <= kMaxPairs);
  const int half = config.rope_dim / 2;
  inv_freq_.resize(half);
  for (int k = 0; k < half; ++k) {
    double inv = std::pow(static_cast<double>(config.freq_base), -2.0 * k / config.rope_dim);
    if (config.llama3_factor > 0.0f) {
      const double factor = config.llama3_factor;
      const double old_len = config.llama3_original_max_position;
      const double low_wavelen = old_len / config.llama3_low_freq_factor;
      const double high_wavelen = old_len / config.llama3_high_freq_factor;
      const double wavelen = 2.0 * kPi / inv;
      if (wavelen > low_wavelen) {
        inv /= factor;
      } else if (wavelen >= high_wavelen) {
        const double smooth = (old_len / wavelen - config.llama3_low_freq_factor) /
                              (config.llama3_high_freq_factor - config.llama3_low_freq_factor);
        inv = (1.0 - smooth) * inv / factor + smooth * inv;
      }
    }
    inv_freq_[k] = inv * config.freq_scale;
  }
}

void Rope::Apply(float* x, int n_heads, int head_dim, int64_t pos) const {
  ApplyWithFreqs(config_, inv_freq_.data(), x, n_heads, head_dim, pos);
}

void Rope::ApplyRows(float* x, int64_t n_tokens, int n_heads, int head_dim,
                     const int64_t* positions) const {
  const int64_t stride = static_cast<int64_t>(n_heads) * head_dim;
  for (int64_t t = 0; t < n_tokens; ++t) Apply(x + t * stride, n_heads, head_dim, positions[t]);
}

void ApplyRope(float* x, int n_heads, int head_dim, int64_t pos, const RopeConfig& config) {
  // Small per-thread MRU cache: models alternate between a few configs (local/global layers).
  constexpr int kCacheSize = 4;
  struct Entry {
    bool used = false;
    RopeConfig config;
    std::vector<double> inv_freq;
  };
  thread_local Entry cache[kCacheSize];
  thread_local int next_victim = 0;
  for (Entry& e : cache) {
    if (e.used && e.config == config) {
      ApplyWithFreqs(config, e.inv_freq.data(), x, n_heads, head_dim, pos);
      return;
    }
  }
  Rope rope(config);
  Entry& slot = cache[next_victim];
  next_victim = (next_victim + 1) % kCacheSize;
  slot.used = true;
  slot.config = config;
  slot.inv_freq = rope.inv_freq();
  rope.Apply(x, n_heads, head_dim, pos);
}

void ApplyRopeTables(float* x, int64_t row_begin, int64_t row_end, int64_t n_heads,
                     int64_t head_dim, bool neox, const float* cos, const float* sin) {
  const int64_t h = head_dim / 2;
  // Pair k's two elements are `stride` apart, and pair k starts at offset (neox ? k : 2k).
  const int64_t stride = neox ? h : 1;
  for (int64_t t = row_begin; t < row_end; ++t) {
    const float* c = cos + t * h;
    const float* s = sin + t * h;
    float* row = x + t * n_heads * head_dim;
    for (int64_t head = 0; head < n_heads; ++head) {
      float* v = row + head * head_dim;
      for (int64_t k = 0; k < h; ++k) {
        float* a = v + (neox ? k : 2 * k);
        float* b = a + stride;
        const float x0 = *a;
        const float x1 = *b;
        *a = std::fma(x0, c[k], -(x1 * s[k]));
        *b = std::fma(x0, s[k], x1 * c[k]);
      }
    }
  }
}

}  // namespace radixlm::kernels
