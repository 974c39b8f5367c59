// The matmul half of bench/order_cost_bench.cc: one Q8_0 matrix times Q8_0 activations,
//   radixlm   MatMul over the packed int8 weights (the default dispatch): per output, each
//             32-value block summed exactly in int32, then one float multiply-add per block;
//   ymm-order a 4-row x 4-token tile written after llamafile's algorithm (what llama.cpp runs
//             for Q8_0 / Q5_0 matrices on x86 at two tokens or more; its one-token dot
//             products keep the same per-output order): per output, eight float partial sums,
//             each 32-value block adding its eight 4-value integer sums into them with one
//             fused multiply-add each, the eight summed at the end;
//   zmm-order the same per-output float operations in the same order, two outputs per zmm
//             (weights repacked once), 4 row pairs x 4 tokens per tile.
// Rates are G multiply-adds per second; radixlm's include quantizing the activations (the
// other two start from quantized activations).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "bench/order_cost.h"
#include "kernels/fp16.h"
#include "kernels/matmul.h"
#include "kernels/packed_weights.h"
#include "kernels/quant.h"
#include "kernels/quant_blocks.h"

namespace radixlm::order_cost {
namespace {

using kernels::BlockQ8_0;
using kernels::F16ToF32;

struct Problem {
  int64_t rows, cols, tokens;
  std::vector<BlockQ8_0> w;  // rows x (cols / 32)
  std::vector<float> x;      // tokens x cols
  std::vector<BlockQ8_0> a;  // tokens x (cols / 32): x quantized as the matmul quantizes it
  int64_t nb() const { return cols / 32; }
};

Problem MakeProblem(int64_t rows, int64_t cols, int64_t tokens) {
  Problem p{rows, cols, tokens, {}, {}, {}};
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> row(cols);
  p.w.resize(rows * p.nb());
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : row) v = dist(rng);
    kernels::QuantizeRowQ8_0(row.data(), p.w.data() + r * p.nb(), cols);
  }
  p.x.resize(tokens * cols);
  for (auto& v : p.x) v = dist(rng);
  p.a.resize(tokens * p.nb());
  for (int64_t t = 0; t < tokens; ++t) {
    kernels::QuantizeRowQ8_0(p.x.data() + t * cols, p.a.data() + t * p.nb(), cols);
  }
  return p;
}

// The order, stated plainly: lane j of an output holds the blocks' 4-value sums j in a float,
// one fma per block; at the end HsumOrder.
float OrderReferenceDot(const BlockQ8_0* w, const BlockQ8_0* a, int64_t nb) {
  float lane[8] = {};
  for (int64_t b = 0; b < nb; ++b) {
    const float scale = F16ToF32(w[b].d) * F16ToF32(a[b].d);
    for (int j = 0; j < 8; ++j) {
      int32_t s = 0;
      for (int k = 4 * j; k < 4 * j + 4; ++k) s += w[b].qs[k] * a[b].qs[k];
      lane[j] = std::fma(scale, static_cast<float>(s), lane[j]);
    }
  }
  return HsumOrder(lane);
}

__attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512vnni"))) void YmmOrderGemm(
    const Problem& p, float* y) {
  const int64_t nb = p.nb();
  for (int64_t r0 = 0; r0 < p.rows; r0 += 4) {
    for (int64_t t0 = 0; t0 < p.tokens; t0 += 4) {
      __m256 acc[4][4];
      for (auto& at : acc) {
        for (auto& v : at) v = _mm256_setzero_ps();
      }
      for (int64_t b = 0; b < nb; ++b) {
        __m256i wv[4];
        __m256i wabs[4];
        float dw[4];
        for (int i = 0; i < 4; ++i) {
          const BlockQ8_0& blk = p.w[(r0 + i) * nb + b];
          wv[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs));
          wabs[i] = _mm256_sign_epi8(wv[i], wv[i]);
          dw[i] = F16ToF32(blk.d);
        }
        for (int t = 0; t < 4; ++t) {
          const BlockQ8_0& ab = p.a[(t0 + t) * nb + b];
          const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab.qs));
          const float da = F16ToF32(ab.d);
          for (int i = 0; i < 4; ++i) {
            const __m256i s =
                _mm256_dpbusd_epi32(_mm256_setzero_si256(), wabs[i], _mm256_sign_epi8(av, wv[i]));
            acc[t][i] =
                _mm256_fmadd_ps(_mm256_set1_ps(dw[i] * da), _mm256_cvtepi32_ps(s), acc[t][i]);
          }
        }
      }
      for (int t = 0; t < 4; ++t) {
        for (int i = 0; i < 4; ++i) {
          float lane[8];
          _mm256_storeu_ps(lane, acc[t][i]);
          y[(t0 + t) * p.rows + r0 + i] = HsumOrder(lane);
        }
      }
    }
  }
}

// Weights for the zmm kernel: per row pair and block, 64 quant bytes (row 2q then 2q+1, each
// + 128 as unsigned) and the two rows' scales as floats. Activations per token and block: the
// 32 quants twice, and 16 int32 corrections -128 * (sum of the lane's 4 quants) that start each
// lane's integer sum, so a lane ends at exactly sum(w * a) over its 4 values.
struct ZmmPacked {
  std::vector<uint8_t> wq;  // [pairs][nb][64]
  std::vector<float> wd;    // [pairs][nb][2]
  std::vector<int8_t> aq;   // [tokens][nb][64]
  std::vector<int32_t> ac;  // [tokens][nb][16]
  std::vector<float> ad;    // [tokens][nb]
};

ZmmPacked PackForZmm(const Problem& p) {
  const int64_t nb = p.nb(), pairs = p.rows / 2;
  ZmmPacked z;
  z.wq.resize(pairs * nb * 64);
  z.wd.resize(pairs * nb * 2);
  for (int64_t q = 0; q < pairs; ++q) {
    for (int64_t b = 0; b < nb; ++b) {
      for (int h = 0; h < 2; ++h) {
        const BlockQ8_0& blk = p.w[(2 * q + h) * nb + b];
        for (int k = 0; k < 32; ++k) {
          z.wq[(q * nb + b) * 64 + 32 * h + k] = static_cast<uint8_t>(blk.qs[k] + 128);
        }
        z.wd[(q * nb + b) * 2 + h] = F16ToF32(blk.d);
      }
    }
  }
  z.aq.resize(p.tokens * nb * 64);
  z.ac.resize(p.tokens * nb * 16);
  z.ad.resize(p.tokens * nb);
  for (int64_t t = 0; t < p.tokens; ++t) {
    for (int64_t b = 0; b < nb; ++b) {
      const BlockQ8_0& ab = p.a[t * nb + b];
      std::memcpy(&z.aq[(t * nb + b) * 64], ab.qs, 32);
      std::memcpy(&z.aq[(t * nb + b) * 64 + 32], ab.qs, 32);
      for (int j = 0; j < 8; ++j) {
        int32_t s = 0;
        for (int k = 4 * j; k < 4 * j + 4; ++k) s += ab.qs[k];
        z.ac[(t * nb + b) * 16 + j] = z.ac[(t * nb + b) * 16 + 8 + j] = -128 * s;
      }
      z.ad[t * nb + b] = F16ToF32(ab.d);
    }
  }
  return z;
}

__attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512dq,avx512bw,avx512vnni"))) void
ZmmOrderGemm(const Problem& p, const ZmmPacked& z, float* y) {
  const int64_t nb = p.nb(), pairs = p.rows / 2;
  const __m512i half_idx = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  for (int64_t q0 = 0; q0 < pairs; q0 += 4) {
    for (int64_t t0 = 0; t0 < p.tokens; t0 += 4) {
      __m512 acc[4][4];
      for (auto& at : acc) {
        for (auto& v : at) v = _mm512_setzero_ps();
      }
      for (int64_t b = 0; b < nb; ++b) {
        __m512i wv[4];
        __m512 wd[4];
        for (int i = 0; i < 4; ++i) {
          const int64_t k = (q0 + i) * nb + b;
          // The first token tile's pass streams the weights: ask for them 8 KiB ahead (as
          // radixlm's kernels do, kernels/cpu/gemm_packed.h).
          if (t0 == 0) __builtin_prefetch(&z.wq[k * 64] + 8192, 0, 3);
          wv[i] = _mm512_loadu_si512(&z.wq[k * 64]);
          const __m128 d2 =
              _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(&z.wd[k * 2])));
          wd[i] = _mm512_permutexvar_ps(half_idx, _mm512_castps128_ps512(d2));
        }
        for (int t = 0; t < 4; ++t) {
          const int64_t k = (t0 + t) * nb + b;
          const __m512i av = _mm512_loadu_si512(&z.aq[k * 64]);
          const __m512i corr = _mm512_loadu_si512(&z.ac[k * 16]);
          const __m512 da = _mm512_set1_ps(z.ad[k]);
          for (int i = 0; i < 4; ++i) {
            const __m512i s = _mm512_dpbusd_epi32(corr, wv[i], av);
            acc[t][i] = _mm512_fmadd_ps(_mm512_mul_ps(wd[i], da), _mm512_cvtepi32_ps(s), acc[t][i]);
          }
        }
      }
      for (int t = 0; t < 4; ++t) {
        for (int i = 0; i < 4; ++i) {
          float lane[16];
          _mm512_storeu_ps(lane, acc[t][i]);
          y[(t0 + t) * p.rows + 2 * (q0 + i)] = HsumOrder(lane);
          y[(t0 + t) * p.rows + 2 * (q0 + i) + 1] = HsumOrder(lane + 8);
        }
      }
    }
  }
}

}  // namespace

bool RunGemmOrderCost(int reps) {
  struct Shape {
    int64_t rows, cols, tokens;
    const char* what;
  };
  const Shape shapes[] = {
      {2048, 640, 64, "ffn_up/gate shape, 64 prefill tokens"},
      {2048, 640, 512, "ffn_up/gate shape, 512 prefill tokens"},
      {32768, 640, 16, "output head slice, 16 decoding sequences"},
      {32768, 640, 4, "output head slice, 4 decoding sequences"},
  };
  std::printf(
      "| Q8_0 matmul, rows x cols, tokens | radixlm GMAC/s | ymm-order | zmm-order |"
      " zmm-order / radixlm | zmm-order / ymm-order | order mismatches (ymm, zmm) |"
      " radixlm max diff / max output |\n|---|---|---|---|---|---|---|---|\n");
  bool exact = true;
  for (const Shape& s : shapes) {
    const Problem p = MakeProblem(s.rows, s.cols, s.tokens);
    std::vector<float> ref(p.tokens * p.rows), yy(ref.size()), yz(ref.size()), yr(ref.size());
    for (int64_t t = 0; t < p.tokens; ++t) {
      for (int64_t r = 0; r < p.rows; ++r) {
        ref[t * p.rows + r] = OrderReferenceDot(&p.w[r * p.nb()], &p.a[t * p.nb()], p.nb());
      }
    }
    kernels::WeightMatrix wm =
        kernels::MakeWeightMatrix(gguf::GgmlType::kQ8_0, p.w.data(), p.rows, p.cols);
    const auto packed = kernels::PackWeights(wm, nullptr);
    wm.packed = packed.get();
    const ZmmPacked z = PackForZmm(p);
    YmmOrderGemm(p, yy.data());
    ZmmOrderGemm(p, z, yz.data());
    kernels::MatMul(wm, p.x.data(), p.tokens, yr.data(), nullptr);
    const int64_t my = CountMismatches(yy, ref), mz = CountMismatches(yz, ref);
    exact = exact && my == 0 && mz == 0;
    double max_diff = 0.0, max_ref = 0.0;
    for (size_t i = 0; i < ref.size(); ++i) {
      max_diff = std::max(max_diff, std::abs(static_cast<double>(yr[i]) - ref[i]));
      max_ref = std::max(max_ref, std::abs(static_cast<double>(ref[i])));
    }
    const double macs = static_cast<double>(p.rows) * p.cols * p.tokens / 1e9;
    const double g_r = macs * CallsPerSecond(reps, [&] {
                         kernels::MatMul(wm, p.x.data(), p.tokens, yr.data(), nullptr);
                       });
    const double g_y = macs * CallsPerSecond(reps, [&] { YmmOrderGemm(p, yy.data()); });
    const double g_z = macs * CallsPerSecond(reps, [&] { ZmmOrderGemm(p, z, yz.data()); });
    std::printf(
        "| %lld x %lld, %lld (%s) | %.1f | %.1f | %.1f | %.2fx | %.2fx | %lld, %lld | %.2g |\n",
        static_cast<long long>(s.rows), static_cast<long long>(s.cols),
        static_cast<long long>(s.tokens), s.what, g_r, g_y, g_z, g_z / g_r, g_z / g_y,
        static_cast<long long>(my), static_cast<long long>(mz), max_diff / max_ref);
  }
  return exact;
}

}  // namespace radixlm::order_cost
