#include "model/rotary.h"

#include <algorithm>
#include <cmath>

namespace radixlm::model {

namespace {

// ggml's rope_yarn_ramp, with i0 = 2k.
float YarnRamp(float low, float high, int64_t k) {
  const float y = (static_cast<float>(k) - low) / std::max(0.001f, high - low);
  return 1.0f - std::min(1.0f, std::max(0.0f, y));
}

}  // namespace

void YarnCorrDims(int64_t rope_dims, int64_t original_context, float base, float beta_fast,
                  float beta_slow, float dims[2]) {
  auto corr_dim = [&](float n_rot) {
    return static_cast<float>(rope_dims) *
           std::log(static_cast<float>(original_context) / (n_rot * 2 * static_cast<float>(M_PI))) /
           (2 * std::log(base));
  };
  const float start = std::floor(corr_dim(beta_fast));
  const float end = std::ceil(corr_dim(beta_slow));
  dims[0] = std::max(0.0f, start);
  dims[1] = std::min(static_cast<float>(rope_dims - 1), end);
}

RotaryEmbedding::RotaryEmbedding(const RopeParams& p)
    : head_dim_(p.head_dim),
      rope_dims_(p.rope_dims > 0 ? p.rope_dims : p.head_dim),
      layout_(p.layout),
      theta_scale_(std::pow(p.base, -2.0f / static_cast<float>(rope_dims_))),
      freq_scale_(p.freq_scale),
      attn_factor_(p.attn_factor),
      ext_factor_(p.ext_factor),
      corr_dims_{p.corr_dims[0], p.corr_dims[1]},
      mrope_sections_(p.mrope_sections),
      mrope_interleaved_(p.mrope_interleaved),
      mrope_section_e_(p.mrope_section_e) {
  if (p.freq_factors != nullptr) {
    freq_factors_.assign(p.freq_factors, p.freq_factors + rope_dims_ / 2);
  }
}

void RotaryEmbedding::ComputeRow(const int64_t pos[3], float* cos, float* sin) const {
  const int64_t h = half();
  const int64_t rotated = rope_dims_ / 2;
  const bool factors = !freq_factors_.empty();
  float mscale = attn_factor_;
  if (ext_factor_ != 0.0f) mscale *= 1.0f + 0.1f * std::log(1.0f / freq_scale_);
  // Which of the three positions drives pair k (ggml_mrope_cache_init's sectors); one
  // position for all pairs without sections.
  const int64_t s0 = mrope_sections_[0];
  const int64_t s01 = s0 + mrope_sections_[1];
  const int64_t total = s01 + mrope_sections_[2] + (mrope_interleaved_ ? mrope_section_e_ : 0);
  // The fourth: IMROPE's pairs outside the t, h and w sectors, always at position 0.
  float theta[4] = {static_cast<float>(pos[0]), static_cast<float>(pos[1]),
                    static_cast<float>(pos[2]), 0.0f};
  for (int64_t k = rotated; k < h; ++k) {  // partial rotary: the rest pass through
    cos[k] = 1.0f;
    sin[k] = 0.0f;
  }
  for (int64_t k = 0; k < rotated; ++k) {
    int section = 0;
    if (total > 0 && mrope_interleaved_) {
      const int64_t sector = k % total;
      if (sector % 3 == 1 && sector < 3 * mrope_sections_[1]) {
        section = 1;
      } else if (sector % 3 == 2 && sector < 3 * mrope_sections_[2]) {
        section = 2;
      } else if (sector % 3 == 0 && sector < 3 * s0) {
        section = 0;
      } else {
        section = 3;
      }
    } else if (total > 0) {
      const int64_t sector = k % total;
      section = sector < s0 ? 0 : sector < s01 ? 1 : 2;
    }
    const float extrap = factors ? theta[section] / freq_factors_[k] : theta[section];
    float angle = freq_scale_ * extrap;
    if (ext_factor_ != 0.0f) {
      const float mix = YarnRamp(corr_dims_[0], corr_dims_[1], k) * ext_factor_;
      angle = angle * (1 - mix) + extrap * mix;
    }
    cos[k] = std::cos(angle);
    sin[k] = std::sin(angle);
    for (float& t : theta) t *= theta_scale_;
  }
  if (mscale != 1.0f) {
    for (int64_t k = 0; k < rotated; ++k) {
      cos[k] *= mscale;
      sin[k] *= mscale;
    }
  }
}

void RotaryEmbedding::ComputeTables(const int64_t* positions, int64_t n, float* cos,
                                    float* sin) const {
  const int64_t h = half();
  for (int64_t t = 0; t < n; ++t) {
    const int64_t pos[3] = {positions[t], positions[t], positions[t]};
    ComputeRow(pos, cos + t * h, sin + t * h);
  }
}

void RotaryEmbedding::ComputeTablesMrope(const int64_t* positions3, int64_t n, float* cos,
                                         float* sin) const {
  const int64_t h = half();
  for (int64_t t = 0; t < n; ++t) {
    const int64_t* p = positions3 + 3 * t;
    const int64_t pos[3] = {p[0], mrope() ? p[1] : p[0], mrope() ? p[2] : p[0]};
    ComputeRow(pos, cos + t * h, sin + t * h);
  }
}

}  // namespace radixlm::model
