// AVX-512 VNNI int8 GEMM over PackedWeights (kernels/packed_weights.h): 16 weight rows per zmm
// lane set (one row per 32-bit lane, vpdpbusd over 4 columns), register-tiled over up to 8
// tokens so each weight block is loaded once per 8 tokens. Per element the float operations
// are those of PackedGemmReference, in the same order, whatever the tile (batch invariance).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/gemm_packed.h"
#include "kernels/cpu/packed_chunks.h"
#include "kernels/fp16.h"

namespace radixlm::kernels::cpu::avx512vnni {
namespace {

inline __m512i Broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// y[t0 + t, 16 g + lane] for t < T. kNib: nibble-packed quants; kMin: w = d*u + m;
// kSub16: two scales per block (Q6_K, and with kLow2 Q2_K / Q3_K); kLut: nibbles index
// w.levels (IQ4_NL, IQ4_XS, MXFP4), looked up with vpshufb; kLow2: 2 low bits per chunk.
template <int T, bool kNib, int kHigh, bool kMin, bool kSub16, bool kLut = false,
          bool kLow2 = false>
void Tile(const PackedWeights& w, const PackedActivations& a, int64_t g, int64_t t0, float* y,
          int64_t y_stride, __mmask16 store_mask) {
  __m512 acc[T];
  for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
  const int64_t nb = a.nb;
  const int32_t off = w.offset;
  // The tokens' tiled activations (packed_weights.h): per block, one pointer each for the
  // quants and the scalars, token t at a fixed offset from it.
  const int64_t i0 = t0 % kActTile;
  const int64_t kb0 = t0 / kActTile * nb;
  // The K-quants' super-block scales, widened once per 8 blocks (Q6_K's only in small tiles:
  // in the wide ones the register they hold costs more than it saves).
  const bool k4 = w.scale_form == ScaleForm::kK4;
  const bool i6 = kLut && w.scale_form == ScaleForm::kI6;
  __m512 dsup = _mm512_setzero_ps(), neg_dmin = _mm512_setzero_ps();
  __m512i lut = _mm512_setzero_si512();
  if constexpr (kLut) {
    lut = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w.levels)));
  }
  const uint8_t* group = w.Block(g, 0);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = w.Block(g, b);
    if (t0 == 0) PrefetchAhead(group, b * w.stream_bytes, w.stream_bytes);  // first pass
    __m512i wq[8];
    if constexpr (kLow2) {
      UnpackChunks2<kHigh>(blk, wq);
    } else if constexpr (kNib) {
      UnpackChunks<kHigh>(blk, wq);
      if constexpr (kLut) {
        for (int c = 0; c < 8; ++c) wq[c] = _mm512_shuffle_epi8(lut, wq[c]);
      }
    } else {
      for (int c = 0; c < 8; ++c) wq[c] = _mm512_load_si512(blk + 64 * c);
    }
    __m512 d[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
    __m512 m[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
    if constexpr (kLow2) {
      if (b % 8 == 0) {
        const uint8_t* sup = w.Supers(g, b);
        dsup = LoadHalves16(sup);
        if constexpr (kMin) neg_dmin = Negate16(LoadHalves16(sup + 32));
      }
      if constexpr (kMin) {
        Q2KScales16(w.Scales(g, b), dsup, neg_dmin, d, m);
      } else {
        Q3KScales16(w.Scales(g, b), dsup, d);
      }
    } else if constexpr (kSub16 && T <= 4) {
      if (b % 8 == 0) dsup = LoadHalves16(w.Supers(g, b));
      Q6KScales16(w.Scales(g, b), dsup, d);
    } else if (i6) {
      if (b % 8 == 0) dsup = LoadHalves16(w.Supers(g, b));
      d[0] = I6Scales16(w.Scales(g, b), dsup);
    } else if (kMin && k4) {
      if (b % 8 == 0) {
        const uint8_t* sup = w.Supers(g, b);
        dsup = LoadHalves16(sup);
        neg_dmin = Negate16(LoadHalves16(sup + 32));
      }
      K4Scales16(w.Scales(g, b), dsup, neg_dmin, d, m);
    } else {
      BlockScales16(w, g, b, d, m);
    }
    const int64_t kb = kb0 + b;
    const int8_t* xq = a.tq + (kb * kActTile + i0) * 32;
    const float* dx = a.tdx + kb * kActTile + i0;
    if constexpr (!kSub16) {
      const int32_t* xsum = a.txsum + kb * kActTile + i0;
      __m512i s[T];
      for (int t = 0; t < T; ++t) {
        // Types with a min have offset 0.
        s[t] = kMin ? _mm512_setzero_si512() : _mm512_set1_epi32(-off * xsum[t]);
      }
      if constexpr (T <= 2) {
        // Two chains per token (integer sums: the same result in any order), so a token's
        // eight dependent vpdpbusd do not serialise the block.
        __m512i s2[T];
        for (int t = 0; t < T; ++t) s2[t] = _mm512_setzero_si512();
        for (int c = 0; c < 8; c += 2) {
          for (int t = 0; t < T; ++t) {
            s[t] = _mm512_dpbusd_epi32(s[t], wq[c], Broadcast4(xq + 32 * t + 4 * c));
            s2[t] = _mm512_dpbusd_epi32(s2[t], wq[c + 1], Broadcast4(xq + 32 * t + 4 * c + 4));
          }
        }
        for (int t = 0; t < T; ++t) s[t] = _mm512_add_epi32(s[t], s2[t]);
      } else {
        for (int c = 0; c < 8; ++c) {
          for (int t = 0; t < T; ++t) {
            s[t] = _mm512_dpbusd_epi32(s[t], wq[c], Broadcast4(xq + 32 * t + 4 * c));
          }
        }
      }
      const float* dxs = a.tdxs + kb * kActTile + i0;
      for (int t = 0; t < T; ++t) {
        const __m512 scale = _mm512_mul_ps(d[0], _mm512_set1_ps(dx[t]));
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[t]), scale, acc[t]);
        if constexpr (kMin) acc[t] = _mm512_fmadd_ps(m[0], _mm512_set1_ps(dxs[t]), acc[t]);
      }
    } else {
      for (int h = 0; h < 2; ++h) {
        const int32_t* sum16 = a.tsum16 + (kb * 2 + h) * kActTile + i0;
        __m512i s[T];
        for (int t = 0; t < T; ++t) s[t] = _mm512_set1_epi32(-off * sum16[t]);
        for (int c = 4 * h; c < 4 * h + 4; ++c) {
          for (int t = 0; t < T; ++t) {
            s[t] = _mm512_dpbusd_epi32(s[t], wq[c], Broadcast4(xq + 32 * t + 4 * c));
          }
        }
        for (int t = 0; t < T; ++t) {
          const __m512 scale = _mm512_mul_ps(d[h], _mm512_set1_ps(dx[t]));
          acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[t]), scale, acc[t]);
          if constexpr (kMin) {  // Q2_K: m per 16 columns, times dx * their sum
            const __m512 xs = _mm512_set1_ps(dx[t] * static_cast<float>(sum16[t]));
            acc[t] = _mm512_fmadd_ps(m[h], xs, acc[t]);
          }
        }
      }
    }
  }
  for (int t = 0; t < T; ++t) {
    _mm512_mask_storeu_ps(y + (t0 + t) * y_stride + 16 * g, store_mask, acc[t]);
  }
}

using TileFn = void (*)(const PackedWeights&, const PackedActivations&, int64_t, int64_t, float*,
                        int64_t, __mmask16);

template <bool kNib, int kHigh, bool kMin, bool kSub16, bool kLut = false, bool kLow2 = false>
struct Tiles {
  static constexpr TileFn fns[9] = {nullptr,
                                    Tile<1, kNib, kHigh, kMin, kSub16, kLut, kLow2>,
                                    Tile<2, kNib, kHigh, kMin, kSub16, kLut, kLow2>,
                                    Tile<3, kNib, kHigh, kMin, kSub16, kLut, kLow2>,
                                    Tile<4, kNib, kHigh, kMin, kSub16, kLut, kLow2>,
                                    Tile<5, kNib, kHigh, kMin, kSub16, kLut, kLow2>,
                                    Tile<6, kNib, kHigh, kMin, kSub16, kLut, kLow2>,
                                    Tile<7, kNib, kHigh, kMin, kSub16, kLut, kLow2>,
                                    Tile<8, kNib, kHigh, kMin, kSub16, kLut, kLow2>};
};

const TileFn* TilesFor(const PackedWeights& w) {
  if (w.levels != nullptr) return Tiles<true, 0, false, false, true>::fns;  // lookup types
  if (w.low_bits == 2) {
    return w.has_min ? Tiles<true, 0, true, true, false, true>::fns    // Q2_K
                     : Tiles<true, 1, false, true, false, true>::fns;  // Q3_K
  }
  if (w.sub == 16) return Tiles<true, 2, false, true>::fns;  // Q6_K
  if (w.nibbles && w.high_bits == 1) {
    return w.has_min ? Tiles<true, 1, true, false>::fns : Tiles<true, 1, false, false>::fns;
  }
  if (w.nibbles) {
    return w.has_min ? Tiles<true, 0, true, false>::fns : Tiles<true, 0, false, false>::fns;
  }
  return Tiles<false, 0, false, false>::fns;  // Q8_0
}

}  // namespace

void PackedGemm(const PackedWeights& w, const PackedActivations& a, int64_t n_tokens, int64_t g0,
                int64_t g1, float* y, int64_t y_stride, bool use_amx) {
  const TileFn* fns = TilesFor(w);
#if defined(RADIXLM_KERNELS_AMX)
  use_amx = use_amx && n_tokens >= 16;
  if (use_amx) amx::Begin();
#endif
  for (int64_t g = g0; g < g1; ++g) {
    const int64_t valid = std::min<int64_t>(16, w.rows - 16 * g);
    const auto mask = static_cast<__mmask16>((1u << valid) - 1);
    int64_t t = 0;
#if defined(RADIXLM_KERNELS_AMX)
    if (use_amx) {
      for (; t + 16 <= n_tokens; t += 16) amx::PackedGemm16(w, a, g, t, y, y_stride, mask);
    }
#else
    (void)use_amx;
#endif
    for (; t + 8 <= n_tokens; t += 8) fns[8](w, a, g, t, y, y_stride, mask);
    if (t < n_tokens) fns[n_tokens - t](w, a, g, t, y, y_stride, mask);
  }
#if defined(RADIXLM_KERNELS_AMX)
  if (use_amx) amx::End();
#endif
}

void QuantizeActivationRow(const float* x, int64_t n, int act_block, int8_t* qs, float* dx,
                           int32_t* sum16, float* dxs) {
  const __m512 sign_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
  for (int64_t a = 0; a < n / act_block; ++a) {
    const float* xa = x + act_block * a;
    __m512 amax_v = _mm512_setzero_ps();
    for (int k = 0; k < act_block; k += 16) {
      amax_v = _mm512_max_ps(amax_v, _mm512_and_ps(_mm512_loadu_ps(xa + k), sign_mask));
    }
    const float amax = _mm512_reduce_max_ps(amax_v);
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    const float d =
        act_block == 32 ? F16ToF32(F32ToF16(amax / 127.0f)) : (amax != 0.0f ? 1.0f / id : 0.0f);
    const __m512 idv = _mm512_set1_ps(id);
    for (int64_t b = act_block / 32 * a; b < act_block / 32 * (a + 1); ++b) {
      const __m512i q0 = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + 32 * b), idv));
      const __m512i q1 = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + 32 * b + 16), idv));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + 32 * b), _mm512_cvtepi32_epi8(q0));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + 32 * b + 16), _mm512_cvtepi32_epi8(q1));
      const int32_t s0 = _mm512_reduce_add_epi32(q0), s1 = _mm512_reduce_add_epi32(q1);
      dx[b] = d;
      sum16[2 * b] = s0;
      sum16[2 * b + 1] = s1;
      dxs[b] = d * static_cast<float>(s0 + s1);
    }
  }
}

}  // namespace radixlm::kernels::cpu::avx512vnni
