// The Q4_K matmul of bench/order_cost_bench.cc: Q4_K weights times Q8_K activations,
//   radixlm      MatMul over the packed int8 weights (the default dispatch): per output, each
//                32-value sub-block summed in int32, then float multiply-adds per sub-block
//                (its scale, and its min times the activations' sum);
//   order (zmm)  llama.cpp's one-token order for Q4_K (its repacked 8-row kernel): per output
//                and 256-value super-block, the sub-blocks' scaled sums and the mins times the
//                activations' 32-value sums added up exactly in int32, then one fused
//                multiply-add each into two float sums (by d_w * d_a and dmin_w * d_a, each
//                product rounded), the second subtracted at the end; 16 outputs per zmm (one
//                per lane), weights repacked once as bytes, up to 4 tokens per tile.
// Rates are G multiply-adds per second; radixlm's include quantizing the activations (the
// order kernel starts from quantized activations).
#include <immintrin.h>

#include <cmath>
#include <vector>

#include "bench/order_cost_kquant.h"
#include "kernels/fp16.h"
#include "kernels/quant_blocks.h"

namespace radixlm::order_cost {
namespace {

using kernels::BlockQ4K;
using kernels::BlockQ8K;
using kernels::F16ToF32;
using kernels::kQK_K;

using Q4KProblem = KQuantProblem<BlockQ4K>;

// Element e (0..255) of a Q4_K block: 64-value chunks, low nibbles first, then high.
int Q4Quant(const BlockQ4K& b, int e) {
  const int chunk = e / 64, k = e % 64;
  const uint8_t byte = b.qs[32 * chunk + k % 32];
  return k < 32 ? byte & 15 : byte >> 4;
}

// The order, stated plainly.
float OrderReferenceQ4K(const BlockQ4K* w, const BlockQ8K* a, int64_t nb) {
  float acc = 0.0f, acc_min = 0.0f;
  for (int64_t b = 0; b < nb; ++b) {
    int32_t isum = 0, imin = 0;
    for (int sub = 0; sub < 8; ++sub) {
      uint8_t sc, m;
      kernels::GetScaleMinK4(sub, w[b].scales, &sc, &m);
      int32_t dot = 0;
      for (int e = 32 * sub; e < 32 * sub + 32; ++e) dot += Q4Quant(w[b], e) * a[b].qs[e];
      isum += sc * dot;
      imin += m * (a[b].bsums[2 * sub] + a[b].bsums[2 * sub + 1]);
    }
    acc = std::fma(static_cast<float>(isum), F16ToF32(w[b].d) * a[b].d, acc);
    acc_min = std::fma(static_cast<float>(imin), F16ToF32(w[b].dmin) * a[b].d, acc_min);
  }
  return acc - acc_min;
}

// Weights per group of 16 rows and super-block: 64 chunks of 16 rows x 4 quant bytes (lane r:
// row r's 4 values), the 8 sub-block scales as 16 int32 each, the 8 mins as 4 x 16 pairs of
// int16 (sub 2k, 2k + 1), and d, dmin as 16 floats each. Activations per token and super-block:
// the 256 quants, the 4 pairs of 32-value sums as int16 pairs, and d.
struct Q4KPacked {
  std::vector<uint8_t> q;      // [groups][nb][64][64]
  std::vector<int32_t> sc;     // [groups][nb][8][16]
  std::vector<int16_t> mn;     // [groups][nb][4][32]
  std::vector<float> d, dmin;  // [groups][nb][16]
  std::vector<int16_t> asum;   // [tokens][nb][8]
};

Q4KPacked PackQ4K(const Q4KProblem& p) {
  const int64_t nb = p.nb(), groups = p.rows / 16;
  Q4KPacked z;
  z.q.resize(groups * nb * 64 * 64);
  z.sc.resize(groups * nb * 8 * 16);
  z.mn.resize(groups * nb * 4 * 32);
  z.d.resize(groups * nb * 16);
  z.dmin.resize(groups * nb * 16);
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t gb = g * nb + b;
      for (int r = 0; r < 16; ++r) {
        const BlockQ4K& blk = p.w[(16 * g + r) * nb + b];
        for (int e = 0; e < kQK_K; ++e) {
          z.q[(gb * 64 + e / 4) * 64 + 4 * r + e % 4] = static_cast<uint8_t>(Q4Quant(blk, e));
        }
        for (int sub = 0; sub < 8; ++sub) {
          uint8_t sc, m;
          kernels::GetScaleMinK4(sub, blk.scales, &sc, &m);
          z.sc[(gb * 8 + sub) * 16 + r] = sc;
          z.mn[(gb * 4 + sub / 2) * 32 + 2 * r + sub % 2] = m;
        }
        z.d[gb * 16 + r] = F16ToF32(blk.d);
        z.dmin[gb * 16 + r] = F16ToF32(blk.dmin);
      }
    }
  }
  z.asum.resize(p.tokens * nb * 8);
  for (int64_t t = 0; t < p.tokens; ++t) {
    for (int64_t b = 0; b < nb; ++b) {
      const BlockQ8K& ab = p.a[t * nb + b];
      for (int sub = 0; sub < 8; ++sub) {
        z.asum[(t * nb + b) * 8 + sub] =
            static_cast<int16_t>(ab.bsums[2 * sub] + ab.bsums[2 * sub + 1]);
      }
    }
  }
  return z;
}

template <int T>
__attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512dq,avx512bw,avx512vnni"))) void
Q4KOrderTile(const Q4KProblem& p, const Q4KPacked& z, int64_t g, int64_t t0, float* y) {
  const int64_t nb = p.nb();
  __m512 acc[T], acc_min[T];
  for (int t = 0; t < T; ++t) acc[t] = acc_min[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t gb = g * nb + b;
    __m512i isum[T], imin[T];
    for (int t = 0; t < T; ++t) isum[t] = imin[t] = _mm512_setzero_si512();
    for (int sub = 0; sub < 8; ++sub) {
      __m512i wq[8];
      for (int c = 0; c < 8; ++c) wq[c] = _mm512_loadu_si512(&z.q[(gb * 64 + 8 * sub + c) * 64]);
      const __m512i sc = _mm512_loadu_si512(&z.sc[(gb * 8 + sub) * 16]);
      for (int t = 0; t < T; ++t) {
        const int8_t* aq = p.a[(t0 + t) * nb + b].qs + 32 * sub;
        __m512i s = _mm512_setzero_si512();
        for (int c = 0; c < 8; ++c) {
          int32_t four;
          std::memcpy(&four, aq + 4 * c, 4);
          s = _mm512_dpbusd_epi32(s, wq[c], _mm512_set1_epi32(four));
        }
        isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(s, sc));
      }
    }
    for (int k = 0; k < 4; ++k) {
      const __m512i mn = _mm512_loadu_si512(&z.mn[(gb * 4 + k) * 32]);
      for (int t = 0; t < T; ++t) {
        int32_t pair;
        std::memcpy(&pair, &z.asum[((t0 + t) * nb + b) * 8 + 2 * k], 4);
        imin[t] = _mm512_add_epi32(imin[t], _mm512_madd_epi16(mn, _mm512_set1_epi32(pair)));
      }
    }
    const __m512 d = _mm512_loadu_ps(&z.d[gb * 16]), dmin = _mm512_loadu_ps(&z.dmin[gb * 16]);
    for (int t = 0; t < T; ++t) {
      const __m512 da = _mm512_set1_ps(p.a[(t0 + t) * nb + b].d);
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), _mm512_mul_ps(d, da), acc[t]);
      acc_min[t] =
          _mm512_fmadd_ps(_mm512_cvtepi32_ps(imin[t]), _mm512_mul_ps(dmin, da), acc_min[t]);
    }
  }
  for (int t = 0; t < T; ++t) {
    _mm512_storeu_ps(y + (t0 + t) * p.rows + 16 * g, _mm512_sub_ps(acc[t], acc_min[t]));
  }
}

void Q4KOrderGemm(const Q4KProblem& p, const Q4KPacked& z, float* y) {
  for (int64_t g = 0; g < p.rows / 16; ++g) {
    for (int64_t t0 = 0; t0 < p.tokens; t0 += 4) Q4KOrderTile<4>(p, z, g, t0, y);
  }
}

}  // namespace

bool RunQ4KOrderCost(int reps) {
  return RunKQuantOrderTable<BlockQ4K>("Q4_K", gguf::GgmlType::kQ4_K, 5, reps, OrderReferenceQ4K,
                                       PackQ4K, Q4KOrderGemm);
}

}  // namespace radixlm::order_cost
