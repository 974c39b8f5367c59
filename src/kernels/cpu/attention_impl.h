// Per-ISA inner kernels of attention (internal; dispatched by kernels/attention.cc).
//
// Attention (kernels/attention.h) works on chunks of keys: scores of the chunk, their exponentials
// and sum, then P·V, so every step below works on plain arrays. The float operation order is
// fixed (not just the math), the same on every ISA:
//   * Q·K dot products as tinyBLAS's F16 GEMM computes them: 8 float lanes, lane l accumulating
//     the terms d == l (mod 8) in ascending d with fused multiply-adds, then the lane tree
//     LaneSum below;
//   * exponentials with ggml's ggml_v_expf polynomial, summed per aligned group of 8 keys with
//     the same lane tree, the groups in double;
//   * P·V with one fused multiply-add accumulator per output element over the keys in
//     ascending order (register-blocked over rows and columns; not ggml's 8 key lanes).
// The scalar versions compute the same values (std::fma), so all ISAs agree bit for bit.
// No allocation; keys come in blocks of at most kAttendBlockMax (already converted to float).
#pragma once

#include <cstdint>
#include <type_traits>

namespace radixlm::kernels::cpu {

inline constexpr int kAttendBlockMax = 64;
inline constexpr int kLanes = 8;  // lanes of ggml's AVX2 accumulators

// ggml's horizontal sum of 8 lanes (hi + lo halves, then pairs): ((a0+a4)+(a2+a6)) +
// ((a1+a5)+(a3+a7)).
inline float LaneSum(const float* a) {
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

// scores[j] = dot(q, k_j) for j in [0, n); q: [head_dim], k: [n, head_dim]. Lane l sums the
// terms d == l (mod 8).
using ScoreBlockFn = void (*)(const float* q, const float* k, int n, int head_dim, float* scores);
// p[j] = ggml_v_expf(s[j] - max) in place for j in [0, n); s[j] belongs to lane
// (lane0 + j) % 8. Returns the sum of the lane sums of each group of 8 lanes, in double.
using ExpSumFn = double (*)(float* s, int n, int lane0, float max);
// P·V for a tile of rows: acc[r * acc_stride + d] = fma(v_j[d], p[r * p_stride + j], acc[...])
// for r in [0, n_rows), j ascending in [0, n), d in [0, width); v: [n, width]. One accumulator per
// output element, keys in ascending order (rows whose keys are not visible carry p = 0, which
// adds exact zeros), so each output is independent of the tile it was computed in.
using AccumulateTileFn = void (*)(const float* p, int64_t p_stride, int n_rows, const float* v,
                                  int n, int width, float* acc, int64_t acc_stride);

// ScoreBlockFn for n_q query rows at once (q: [n_q, head_dim]; scores of query i at
// scores + i * score_stride): each value bit-identical to ScoreBlockFn's, with each key row
// loaded once for all the queries (the query heads that share a kv head).
using ScoreTileFn = void (*)(const float* q, int n_q, const float* k, int n, int head_dim,
                             float* scores, int64_t score_stride);

// Runs block(r0, std::integral_constant<int, R>) over rows [0, n_rows) in blocks of 4 rows,
// the last block of 1-3 (the register-blocked P·V kernels' row loop, shared by every ISA).
template <typename Block>
inline void ForRowBlocksOf4(int n_rows, Block&& block) {
  int r = 0;
  for (; r + 4 <= n_rows; r += 4) block(r, std::integral_constant<int, 4>{});
  switch (n_rows - r) {
    case 3:
      return block(r, std::integral_constant<int, 3>{});
    case 2:
      return block(r, std::integral_constant<int, 2>{});
    case 1:
      return block(r, std::integral_constant<int, 1>{});
    default:
      return;
  }
}

// Converts the F16 values [head_off, head_off + width) of cache rows slots[0, n) (row stride
// row_elems) to float, dst: [n, width]; width % 8 == 0. Prefetches the same columns of the rows
// slots[n, n_ahead) (the keys read next: a cache row holds every kv head, so one head's columns
// are a strided read the hardware prefetchers do not follow). The conversion is exact.
using LoadF16RowsFn = void (*)(const uint16_t* base, const int32_t* slots, int64_t row_elems,
                               int64_t head_off, int width, int n, int n_ahead, float* dst);

// The largest of s[0, n), n >= 1 (scores are never NaN, so the order of the comparisons does
// not change the result).
using RowMaxFn = float (*)(const float* s, int n);

// ScoreTileFn with the keys read in place from an F16 cache: key j's head_dim values at
// base + slots[j] * row_elems + head_off, converted in registers (exactly), so no float copy
// is written and read back; the same values as ScoreBlockFn on the converted rows. Prefetches
// the rows slots[n, n_ahead) as LoadF16RowsFn does.
using ScoreF16Fn = void (*)(const float* q, int n_q, const uint16_t* base, const int32_t* slots,
                            int64_t row_elems, int64_t head_off, int n, int n_ahead, int head_dim,
                            float* scores, int64_t score_stride);
// AccumulateTileFn with the values read in place from an F16 cache (row j at base + slots[j] *
// row_elems + head_off, width % 8 == 0): the same values as AccumulateTileFn on the converted
// rows.
using AccumulateF16Fn = void (*)(const float* p, int64_t p_stride, int n_rows, const uint16_t* base,
                                 const int32_t* slots, int64_t row_elems, int64_t head_off, int n,
                                 int width, float* acc, int64_t acc_stride);

// Prefill's key blocks transposed, in panels of kPanelKeys keys: keys slots[0, n)
// (n <= kAttendBlockMax; F16 head columns [head_off, head_off + head_dim), head_dim % 8 == 0) as
// float, key j's value d at dst[TransposedAt(j, d, head_dim)] (exact); the keys from n to n
// rounded up to 8 are zero. A panel ([head_dim, kPanelKeys], contiguous) stays in L1 while
// every query of a tile is scored against it. Prefetches the rows slots[n, n_ahead) as
// LoadF16RowsFn does.
inline constexpr int kPanelKeys = 16;
inline int64_t TransposedAt(int j, int d, int head_dim) {
  return static_cast<int64_t>(j / kPanelKeys) * head_dim * kPanelKeys + d * kPanelKeys +
         j % kPanelKeys;
}
using LoadF16KeysTFn = void (*)(const uint16_t* base, const int32_t* slots, int64_t row_elems,
                                int64_t head_off, int head_dim, int n, int n_ahead, float* dst);
// ScoreBlockFn's values, bit for bit, for n_q queries (q: [n_q, head_dim]) against keys
// [j0, j1) of a transposed block kt (LoadF16KeysTFn's dst): query i's score of key j at
// scores[i * score_stride + j - j0]. Eight keys share a vector and each lane class of the dot
// (terms d == l mod 8) its own accumulator, so the classes meet in vertical adds in LaneSum's
// order instead of a horizontal sum per (query, key).
using ScoreKeysTFn = void (*)(const float* q, int n_q, const float* kt, int j0, int j1,
                              int head_dim, float* scores, int64_t score_stride);

struct AttentionKernels {
  ScoreBlockFn score;
  ScoreTileFn score_tile;
  ExpSumFn exp_sum;
  AccumulateTileFn accumulate;
  LoadF16RowsFn load_f16;  // null: the generic row conversion
  RowMaxFn row_max;
  // Decode's kernels over an F16 cache (null: convert blocks with load_f16, then score and
  // accumulate): with one query row per tile, each key and value row serves only that row's
  // heads, so converting it in registers saves a float block's write and reads.
  ScoreF16Fn score_f16 = nullptr;
  AccumulateF16Fn accumulate_f16 = nullptr;
  // Prefill's scores over an F16 cache with transposed key blocks (null: load_f16 and
  // score_tile), for tiles of at least kMinPairsT (query, head) pairs: the transposition is
  // paid once per block for all of them.
  LoadF16KeysTFn load_f16_t = nullptr;
  ScoreKeysTFn score_t = nullptr;
};
inline constexpr int kMinPairsT = 16;

namespace scalar {
float RowMax(const float* s, int n);
// ggml_v_expf (AVX2) for one value: exp(x) by a degree-5 polynomial after range reduction by
// ln2, with the same special cases for |n| > 126 and > 192.
float GgmlExp(float x);
void ScoreBlock(const float* q, const float* k, int n, int head_dim, float* scores);
double ExpSum(float* s, int n, int lane0, float max);
void AccumulateTile(const float* p, int64_t p_stride, int n_rows, const float* v, int n, int width,
                    float* acc, int64_t acc_stride);
}  // namespace scalar
namespace avx2 {
float RowMax(const float* s, int n);
void LoadF16Rows(const uint16_t* base, const int32_t* slots, int64_t row_elems, int64_t head_off,
                 int width, int n, int n_ahead, float* dst);
void ScoreBlock(const float* q, const float* k, int n, int head_dim, float* scores);
double ExpSum(float* s, int n, int lane0, float max);
void AccumulateTile(const float* p, int64_t p_stride, int n_rows, const float* v, int n, int width,
                    float* acc, int64_t acc_stride);
// Query rows four at a time against pairs of keys (each key row loaded once per four heads).
void ScoreTile(const float* q, int n_q, const float* k, int n, int head_dim, float* scores,
               int64_t score_stride);
void ScoreF16(const float* q, int n_q, const uint16_t* base, const int32_t* slots,
              int64_t row_elems, int64_t head_off, int n, int n_ahead, int head_dim, float* scores,
              int64_t score_stride);
void AccumulateF16(const float* p, int64_t p_stride, int n_rows, const uint16_t* base,
                   const int32_t* slots, int64_t row_elems, int64_t head_off, int n, int width,
                   float* acc, int64_t acc_stride);
void LoadF16KeysT(const uint16_t* base, const int32_t* slots, int64_t row_elems, int64_t head_off,
                  int head_dim, int n, int n_ahead, float* dst);
void ScoreKeysT(const float* q, int n_q, const float* kt, int j0, int j1, int head_dim,
                float* scores, int64_t score_stride);
}  // namespace avx2
namespace avx512 {  // only with RADIXLM_KERNELS_AVX512 and CpuHasAvx512()
void ScoreTile(const float* q, int n_q, const float* k, int n, int head_dim, float* scores,
               int64_t score_stride);
void AccumulateTile(const float* p, int64_t p_stride, int n_rows, const float* v, int n, int width,
                    float* acc, int64_t acc_stride);
// ScoreKeysTFn with a whole panel (16 keys) per vector; over avx2::LoadF16KeysT's blocks.
void ScoreKeysT(const float* q, int n_q, const float* kt, int j0, int j1, int head_dim,
                float* scores, int64_t score_stride);
}  // namespace avx512

}  // namespace radixlm::kernels::cpu
