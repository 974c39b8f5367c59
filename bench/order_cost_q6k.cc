// The Q6_K matmul of bench/order_cost_bench.cc: Q6_K weights times Q8_K activations,
//   radixlm      MatMul over the packed int8 weights (the default dispatch);
//   order (zmm)  llama.cpp's order for Q6_K (its AVX2 dot product, which its AVX-512 builds
//                run too): per output, eight int32 lanes per 256-value super-block, lane l
//                holding the scaled products of bytes 4l..4l+3 of each 32-value run minus
//                32 * (the activation sums of 16-value groups 2l and 2l + 1 times their
//                scales); each lane added into its own float sum with one fused multiply-add
//                by d_w * d_a (rounded); the eight summed at the end in llamafile's tree.
//                Two outputs per zmm, weights repacked once as bytes, 2 row pairs x 4 tokens
//                per tile, tokens in blocks of 64. (A trial with the weights repacked as int16
//                products scale * value, summed with vpdpwssd, ran at 0.21-0.32x of radixlm.)
// Rates are G multiply-adds per second; radixlm's include quantizing the activations.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "bench/order_cost_kquant.h"
#include "kernels/fp16.h"
#include "kernels/quant_blocks.h"

namespace radixlm::order_cost {
namespace {

using kernels::BlockQ6K;
using kernels::BlockQ8K;
using kernels::F16ToF32;
using kernels::kQK_K;

using Q6KProblem = KQuantProblem<BlockQ6K>;

// Element e (0..255) of a Q6_K block as an unsigned 6-bit value (the weight is value - 32),
// and its 16-value group's scale index.
int Q6Unsigned(const BlockQ6K& b, int e) {
  const int n = e / 128, k = (e % 128) / 32, l = e % 32;
  const uint8_t lo = b.ql[64 * n + 32 * (k % 2) + l];
  const int low = k < 2 ? lo & 15 : lo >> 4;
  return low | (((b.qh[32 * n + l] >> (2 * k)) & 3) << 4);
}
int Q6ScaleIndex(int e) { return 8 * (e / 128) + 2 * ((e % 128) / 32) + (e % 32) / 16; }

// The order, stated plainly.
float OrderReferenceQ6K(const BlockQ6K* w, const BlockQ8K* a, int64_t nb) {
  float acc[8] = {};
  for (int64_t b = 0; b < nb; ++b) {
    int32_t lane[8] = {};
    for (int e = 0; e < kQK_K; ++e) {
      lane[(e % 32) / 4] += w[b].scales[Q6ScaleIndex(e)] * Q6Unsigned(w[b], e) * a[b].qs[e];
    }
    for (int l = 0; l < 8; ++l) {
      lane[l] -= 32 * (a[b].bsums[2 * l] * w[b].scales[2 * l] +
                       a[b].bsums[2 * l + 1] * w[b].scales[2 * l + 1]);
    }
    const float d = a[b].d * F16ToF32(w[b].d);
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(lane[l]), acc[l]);
  }
  return HsumOrder(acc);
}

// Weights per row pair and super-block: 8 runs (32 values each) of 64 bytes (row 2q, then
// 2q + 1), each with 32 int16 scales (both int16 of lane l: the scale of the 16-value half l / 4
// of its row's run, for vpmaddwd after vpmaddubsw, as ggml does), the correction's int16 scale
// pairs (lane l: groups 2l, 2l + 1) and the two d as floats. Activations per token and super-block:
// each run's 32 quants twice, the 16-value sums as int16 pairs (lane l: 2l, 2l + 1, both halves),
// and d.
struct Q6KPacked {
  std::vector<uint8_t> q;    // [pairs][nb][8][64]
  std::vector<int16_t> sc;   // [pairs][nb][8][32]
  std::vector<int16_t> cs;   // [pairs][nb][32]
  std::vector<float> d;      // [pairs][nb][2]
  std::vector<int8_t> aq;    // [tokens][nb][8][64]
  std::vector<int16_t> abs;  // [tokens][nb][32]
};

Q6KPacked PackQ6K(const Q6KProblem& p) {
  const int64_t nb = p.nb(), pairs = p.rows / 2;
  Q6KPacked z;
  z.q.resize(pairs * nb * 8 * 64);
  z.sc.resize(pairs * nb * 8 * 32);
  z.cs.resize(pairs * nb * 32);
  z.d.resize(pairs * nb * 2);
  for (int64_t q = 0; q < pairs; ++q) {
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t qb = q * nb + b;
      for (int h = 0; h < 2; ++h) {
        const BlockQ6K& blk = p.w[(2 * q + h) * nb + b];
        for (int e = 0; e < kQK_K; ++e) {
          z.q[(qb * 8 + e / 32) * 64 + 32 * h + e % 32] = static_cast<uint8_t>(Q6Unsigned(blk, e));
        }
        for (int run = 0; run < 8; ++run) {
          for (int l = 0; l < 8; ++l) {
            const int8_t scale = blk.scales[Q6ScaleIndex(32 * run + 4 * l)];
            z.sc[(qb * 8 + run) * 32 + 2 * (8 * h + l)] = scale;
            z.sc[(qb * 8 + run) * 32 + 2 * (8 * h + l) + 1] = scale;
          }
        }
        for (int i = 0; i < 16; ++i) z.cs[qb * 32 + 16 * h + i] = blk.scales[i];
        z.d[qb * 2 + h] = F16ToF32(blk.d);
      }
    }
  }
  z.aq.resize(p.tokens * nb * 8 * 64);
  z.abs.resize(p.tokens * nb * 32);
  for (int64_t t = 0; t < p.tokens; ++t) {
    for (int64_t b = 0; b < nb; ++b) {
      const BlockQ8K& ab = p.a[t * nb + b];
      for (int run = 0; run < 8; ++run) {
        std::memcpy(&z.aq[((t * nb + b) * 8 + run) * 64], ab.qs + 32 * run, 32);
        std::memcpy(&z.aq[((t * nb + b) * 8 + run) * 64 + 32], ab.qs + 32 * run, 32);
      }
      for (int i = 0; i < 16; ++i) {
        z.abs[(t * nb + b) * 32 + i] = z.abs[(t * nb + b) * 32 + 16 + i] = ab.bsums[i];
      }
    }
  }
  return z;
}

__attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512dq,avx512bw,avx512vnni"))) void
Q6KOrderGemm(const Q6KProblem& p, const Q6KPacked& z, float* y) {
  constexpr int RP = 2, RT = 4;
  const int64_t nb = p.nb(), pairs = p.rows / 2;
  const __m512i half_idx = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  // Blocks of 64 tokens keep their activations (64 x 528 bytes per super-block) in L2.
  for (int64_t tb = 0; tb < p.tokens; tb += 64) {
    for (int64_t q0 = 0; q0 < pairs; q0 += RP) {
      for (int64_t t0 = tb; t0 < std::min<int64_t>(tb + 64, p.tokens); t0 += RT) {
        __m512 acc[RT][RP];
        for (auto& at : acc) {
          for (auto& v : at) v = _mm512_setzero_ps();
        }
        for (int64_t b = 0; b < nb; ++b) {
          __m512i isum[RT][RP];
          for (auto& it : isum) {
            for (auto& v : it) v = _mm512_setzero_si512();
          }
          for (int run = 0; run < 8; ++run) {
            __m512i wv[RP], ws[RP];
            for (int i = 0; i < RP; ++i) {
              const int64_t k = ((q0 + i) * nb + b) * 8 + run;
              wv[i] = _mm512_loadu_si512(&z.q[k * 64]);
              ws[i] = _mm512_loadu_si512(&z.sc[k * 32]);
            }
            for (int t = 0; t < RT; ++t) {
              const __m512i av = _mm512_loadu_si512(&z.aq[(((t0 + t) * nb + b) * 8 + run) * 64]);
              for (int i = 0; i < RP; ++i) {
                const __m512i s16 = _mm512_maddubs_epi16(wv[i], av);  // |sum| <= 16128
                isum[t][i] = _mm512_add_epi32(isum[t][i], _mm512_madd_epi16(s16, ws[i]));
              }
            }
          }
          for (int i = 0; i < RP; ++i) {
            const int64_t k = (q0 + i) * nb + b;
            const __m512i cs = _mm512_loadu_si512(&z.cs[k * 32]);
            const __m128 d2 =
                _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(&z.d[k * 2])));
            const __m512 dw = _mm512_permutexvar_ps(half_idx, _mm512_castps128_ps512(d2));
            for (int t = 0; t < RT; ++t) {
              const int64_t ka = (t0 + t) * nb + b;
              const __m512i corr = _mm512_madd_epi16(_mm512_loadu_si512(&z.abs[ka * 32]), cs);
              const __m512i lane = _mm512_sub_epi32(isum[t][i], _mm512_slli_epi32(corr, 5));
              const __m512 d = _mm512_mul_ps(_mm512_set1_ps(p.a[ka].d), dw);
              acc[t][i] = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(lane), acc[t][i]);
            }
          }
        }
        for (int t = 0; t < RT; ++t) {
          for (int i = 0; i < RP; ++i) {
            float lane[16];
            _mm512_storeu_ps(lane, acc[t][i]);
            y[(t0 + t) * p.rows + 2 * (q0 + i)] = HsumOrder(lane);
            y[(t0 + t) * p.rows + 2 * (q0 + i) + 1] = HsumOrder(lane + 8);
          }
        }
      }
    }
  }
}

}  // namespace

bool RunQ6KOrderCost(int reps) {
  return RunKQuantOrderTable<BlockQ6K>("Q6_K", gguf::GgmlType::kQ6_K, 3, reps, OrderReferenceQ6K,
                                       PackQ6K, Q6KOrderGemm);
}

}  // namespace radixlm::order_cost
