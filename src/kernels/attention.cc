#include "kernels/attention.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/attention_impl.h"
#include "kernels/dot.h"
#include "kernels/fp16.h"

namespace radixlm::kernels {
namespace cpu::scalar {
namespace {
float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}
uint32_t ToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
}  // namespace

float GgmlExp(float x) {
  const float r = 0x1.8p23f;
  const float z = std::fma(x, 0x1.715476p+0f, r);
  const float n = z - r;
  const float b = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x));
  const uint32_t e = ToBits(z) << 23;
  const float k = FromBits(e + ToBits(1.0f));
  const float u = b * b;
  const float j = std::fma(std::fma(std::fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u,
                                    std::fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)),
                           u, 0x1.ffffecp-1f * b);
  if (!(std::fabs(n) > 126.0f)) return std::fma(k, j, k);
  const uint32_t g = n <= 0.0f ? 0x82000000u : 0u;
  const float s1 = FromBits(g + 0x7f000000u);
  const float s2 = FromBits(e - g);
  if (std::fabs(n) > 192.0f) return s1 * s1;
  return std::fma(s2, j, s2) * s1;
}

void ScoreBlock(const float* q, const float* k, int n, int head_dim, float* scores) {
  for (int j = 0; j < n; ++j) {
    const float* kj = k + static_cast<int64_t>(j) * head_dim;
    float lanes[kLanes] = {};
    for (int d = 0; d < head_dim; ++d) {
      lanes[d % kLanes] = std::fma(kj[d], q[d], lanes[d % kLanes]);
    }
    scores[j] = LaneSum(lanes);
  }
}

double ExpSum(float* s, int n, int lane0, float max) {
  double sum = 0.0;
  int j = 0;
  while (j < n) {
    float lanes[kLanes] = {};
    for (int l = (lane0 + j) % kLanes; l < kLanes && j < n; ++l, ++j) {
      s[j] = GgmlExp(s[j] - max);
      lanes[l] = s[j];
    }
    sum += static_cast<double>(LaneSum(lanes));
  }
  return sum;
}

void AccumulateTile(const float* p, int64_t p_stride, int n_rows, const float* v, int n, int width,
                    float* acc, int64_t acc_stride) {
  for (int r = 0; r < n_rows; ++r) {
    float* a = acc + r * acc_stride;
    for (int j = 0; j < n; ++j) {
      const float pj = p[r * p_stride + j];
      const float* vj = v + static_cast<int64_t>(j) * width;
      for (int d = 0; d < width; ++d) a[d] = std::fma(vj[d], pj, a[d]);
    }
  }
}

}  // namespace cpu::scalar

namespace {
constexpr int kQueryTile = 8;                    // queries per work item
constexpr int kKeyBlock = cpu::kAttendBlockMax;  // keys converted to float at a time
constexpr int kMinKeysPerSplit = 256;            // don't split key ranges finer than this

cpu::AttentionKernels SelectKernels() {
#if defined(RADIXLM_KERNELS_X86) && defined(RADIXLM_KERNELS_AVX512)
  if (ActiveIsa() >= Isa::kAvx512) {
    return {cpu::avx2::ScoreBlock, cpu::avx512::ScoreTile, cpu::avx2::ExpSum,
            cpu::avx512::AccumulateTile};
  }
#endif
#if defined(RADIXLM_KERNELS_X86)
  if (static_cast<int>(ActiveIsa()) >= static_cast<int>(Isa::kAvx2)) {
    return {cpu::avx2::ScoreBlock, nullptr, cpu::avx2::ExpSum, cpu::avx2::AccumulateTile};
  }
#endif
  return {cpu::scalar::ScoreBlock, nullptr, cpu::scalar::ExpSum, cpu::scalar::AccumulateTile};
}

// One unit of parallel work: a tile of queries of one sequence x one kv head. Its score rows
// ([pairs, span1 - span0], pair = (query - q0) * group + head in group) cover the keys
// [span0, span1). An unsplit item does everything; the items of a split tile (decode with a long
// context) each compute the scores of keys [k0, k1) and, after the softmax, the output columns
// [d0, d1) of P·V over all keys (P·V is split by columns, not keys, so that every output keeps
// ggml's summation order over the keys).
struct WorkItem {
  int seq;
  int kv_head;
  int q0, q1;           // query rows [q0, q1)
  int k0, k1;           // key positions [k0, k1) whose scores this item computes
  int span0, span1;     // key positions of the tile's score rows
  int d0, d1;           // output columns [d0, d1) of P·V
  int64_t scores = -1;  // split only: offset of the tile's rows in the shared score buffer
};

// Rounds x[0, n) in place to the nearest value of the cache's half type (round to nearest
// even): what ggml's mul_mat does to a float operand multiplied with an F16 (BF16) matrix.
void RoundThroughHalf(KvDtype dtype, float* x, int64_t n) {
  uint16_t half[256];
  for (int64_t i = 0; i < n; i += 256) {
    const int64_t m = std::min<int64_t>(256, n - i);
    if (dtype == KvDtype::kF16) {
      F32ToF16Row(x + i, half, m);
      F16ToF32Row(half, x + i, m);
    } else {
      F32ToBf16Row(x + i, half, m);
      Bf16ToF32Row(half, x + i, m);
    }
  }
}

inline void ConvertRow(KvDtype dtype, const uint16_t* src, float* dst, int n) {
  if (dtype == KvDtype::kF16) {
    F16ToF32Row(src, dst, n);
  } else {
    Bf16ToF32Row(src, dst, n);
  }
}

// Visible key positions [lo, hi) of a query at position pos.
inline void VisibleKeys(const AttentionParams& p, int64_t pos, int64_t* lo, int64_t* hi) {
  *lo = p.sliding_window > 0 ? std::max<int64_t>(0, pos - p.sliding_window + 1) : 0;
  *hi = pos + 1;
}

// Per-thread buffers (grown on demand).
struct AttentionScratch {
  std::vector<float> kvbuf;   // [kKeyBlock, head_dim]: one block of K or V rows as float
  std::vector<float> q16;     // [pairs, head_dim]: the tile's queries rounded to F16
  std::vector<float> scores;  // [pairs, span]: an unsplit item's score / probability rows
  std::vector<float> out;     // [pairs, d1 - d0]: P·V accumulators
};

void Grow(std::vector<float>& v, int64_t n) {
  if (v.size() < static_cast<size_t>(n)) v.resize(n);
}

// Converts `n` rows of kv head `head_off` (K or V plane `base`) for key positions
// [kb, kb + n) into dst: [n, head_dim].
void LoadKeyBlock(const KvLayerView& kv, const void* base, const AttentionSequence& sq,
                  int64_t head_off, int head_dim, int kb, int n, float* dst) {
  const auto* plane = static_cast<const uint16_t*>(base);
  for (int j = 0; j < n; ++j) {
    const int64_t row = static_cast<int64_t>(sq.kv_slots[kb + j]) * kv.row_elems + head_off;
    ConvertRow(kv.dtype, plane + row, dst + static_cast<int64_t>(j) * head_dim, head_dim);
  }
}

// Phase 1: scores of the item's keys [k0, k1) for every (query, head) pair of the tile, written
// into rows (row stride span1 - span0). Only visible keys are written.
void ComputeScores(const AttentionParams& p, const KvLayerView& kv, const AttentionSequence& sq,
                   const WorkItem& it, const cpu::AttentionKernels& kern, AttentionScratch& sc,
                   float* rows) {
  const int hd = p.head_dim;
  const int group = p.n_heads / p.n_kv_heads;
  const int n_pairs = (it.q1 - it.q0) * group;
  const int64_t span = it.span1 - it.span0;
  const int64_t q_stride = static_cast<int64_t>(p.n_heads) * hd;
  const int64_t head_off = static_cast<int64_t>(it.kv_head) * hd;

  // Queries as llama.cpp multiplies them with the cache: rounded to its half type (after the
  // scale when the model scales Q itself).
  Grow(sc.q16, static_cast<int64_t>(n_pairs) * hd);
  for (int qi = it.q0; qi < it.q1; ++qi) {
    for (int hh = 0; hh < group; ++hh) {
      const float* src = sq.q + qi * q_stride + (it.kv_head * group + hh) * hd;
      float* dst = sc.q16.data() + static_cast<int64_t>((qi - it.q0) * group + hh) * hd;
      const float s = p.scale_query ? p.scale : 1.0f;
      for (int d = 0; d < hd; ++d) dst[d] = src[d] * s;
    }
  }
  RoundThroughHalf(kv.dtype, sc.q16.data(), static_cast<int64_t>(n_pairs) * hd);
  const float score_scale = p.scale_query ? 1.0f : p.scale;

  Grow(sc.kvbuf, static_cast<int64_t>(kKeyBlock) * hd);
  for (int kb = it.k0; kb < it.k1; kb += kKeyBlock) {
    const int ke = std::min(it.k1, kb + kKeyBlock);
    LoadKeyBlock(kv, kv.k, sq, head_off, hd, kb, ke - kb, sc.kvbuf.data());
    for (int qi = it.q0; qi < it.q1; ++qi) {
      int64_t lo, hi;
      VisibleKeys(p, sq.q_pos[qi], &lo, &hi);
      const int blo = static_cast<int>(std::clamp<int64_t>(lo, kb, ke));
      const int bhi = static_cast<int>(std::clamp<int64_t>(hi, kb, ke));
      if (blo >= bhi) continue;
      const int pair0 = (qi - it.q0) * group;
      const float* kblk = sc.kvbuf.data() + static_cast<int64_t>(blo - kb) * hd;
      if (kern.score_tile != nullptr) {  // the query's heads together: each key loaded once
        kern.score_tile(sc.q16.data() + static_cast<int64_t>(pair0) * hd, group, kblk, bhi - blo,
                        hd, rows + pair0 * span + (blo - it.span0), span);
      }
      for (int hh = 0; hh < group; ++hh) {
        const int pair = pair0 + hh;
        float* s = rows + pair * span + (blo - it.span0);
        if (kern.score_tile == nullptr) {
          kern.score(sc.q16.data() + static_cast<int64_t>(pair) * hd, kblk, bhi - blo, hd, s);
        }
        if (score_scale != 1.0f) {
          for (int j = 0; j < bhi - blo; ++j) s[j] *= score_scale;
        }
        if (p.logit_softcap > 0.0f) {
          for (int j = 0; j < bhi - blo; ++j)
            s[j] = p.logit_softcap * std::tanh(s[j] / p.logit_softcap);
        }
      }
    }
  }
}

// Phase 2: turns each pair's scores (its visible part of [span0, span1)) into probabilities
// the way ggml's soft_max does (max-subtracted exp, sum in double, scaled by the float
// reciprocal), then rounds them to the cache's half type as ggml's P·V product does; the rest
// of the row becomes 0. Key position j is lane j % 8 of ggml's row (llama.cpp's cache cell j
// for a fresh sequence).
void NormalizeRows(const AttentionParams& p, const KvLayerView& kv, const AttentionSequence& sq,
                   const WorkItem& it, const cpu::AttentionKernels& kern, float* rows) {
  const int group = p.n_heads / p.n_kv_heads;
  const int64_t span = it.span1 - it.span0;
  for (int qi = it.q0; qi < it.q1; ++qi) {
    int64_t lo, hi;
    VisibleKeys(p, sq.q_pos[qi], &lo, &hi);
    lo = std::clamp<int64_t>(lo, it.span0, it.span1);
    hi = std::clamp<int64_t>(hi, it.span0, it.span1);
    for (int hh = 0; hh < group; ++hh) {
      float* row = rows + ((qi - it.q0) * group + hh) * span;
      // P·V runs over the whole span: keys this query does not see weigh exactly 0.
      std::fill(row, row + (lo - it.span0), 0.0f);
      std::fill(row + (std::max(lo, hi) - it.span0), row + span, 0.0f);
      if (lo >= hi) continue;
      float* s = row + (lo - it.span0);
      const int n = static_cast<int>(hi - lo);
      float max = -INFINITY;
      for (int j = 0; j < n; ++j) max = std::max(max, s[j]);
      const double sum = kern.exp_sum(s, n, static_cast<int>(lo % cpu::kLanes), max);
      const float inv = static_cast<float>(1.0 / sum);
      for (int j = 0; j < n; ++j) s[j] *= inv;
      RoundThroughHalf(kv.dtype, s, n);
    }
  }
}

float* OutputRow(const AttentionParams& p, const AttentionSequence& sq, int kv_head, int qi,
                 int hh) {
  const int group = p.n_heads / p.n_kv_heads;
  return sq.out + static_cast<int64_t>(qi) * p.n_heads * p.head_dim +
         static_cast<int64_t>(kv_head * group + hh) * p.head_dim;
}

// Phase 3: output columns [d0, d1) of every pair: sum over the tile's key span of p * v, one
// accumulator per output element, keys ascending (rows carry p = 0 outside their visible keys).
void AccumulateValues(const AttentionParams& p, const KvLayerView& kv, const AttentionSequence& sq,
                      const WorkItem& it, const cpu::AttentionKernels& kern, AttentionScratch& sc,
                      const float* rows) {
  const int width = it.d1 - it.d0;
  if (width <= 0) return;
  const int group = p.n_heads / p.n_kv_heads;
  const int64_t span = it.span1 - it.span0;
  const int64_t head_off = static_cast<int64_t>(it.kv_head) * p.head_dim + it.d0;
  const int n_pairs = (it.q1 - it.q0) * group;
  Grow(sc.out, static_cast<int64_t>(n_pairs) * width);
  std::fill(sc.out.begin(), sc.out.begin() + static_cast<int64_t>(n_pairs) * width, 0.0f);
  Grow(sc.kvbuf, static_cast<int64_t>(kKeyBlock) * width);
  for (int kb = it.span0; kb < it.span1; kb += kKeyBlock) {
    const int ke = std::min(it.span1, kb + kKeyBlock);
    LoadKeyBlock(kv, kv.v, sq, head_off, width, kb, ke - kb, sc.kvbuf.data());
    kern.accumulate(rows + (kb - it.span0), span, n_pairs, sc.kvbuf.data(), ke - kb, width,
                    sc.out.data(), width);
  }
  for (int qi = it.q0; qi < it.q1; ++qi) {
    for (int hh = 0; hh < group; ++hh) {
      const float* acc = sc.out.data() + static_cast<int64_t>((qi - it.q0) * group + hh) * width;
      std::copy(acc, acc + width, OutputRow(p, sq, it.kv_head, qi, hh) + it.d0);
    }
  }
}

// An unsplit item: all three phases, writing the output rows.
void RunWholeItem(const AttentionParams& p, const KvLayerView& kv, const AttentionSequence& sq,
                  const WorkItem& it, const cpu::AttentionKernels& kern) {
  thread_local AttentionScratch sc;
  const int group = p.n_heads / p.n_kv_heads;
  const int64_t n_pairs = static_cast<int64_t>(it.q1 - it.q0) * group;
  Grow(sc.scores, n_pairs * (it.span1 - it.span0));
  ComputeScores(p, kv, sq, it, kern, sc, sc.scores.data());
  NormalizeRows(p, kv, sq, it, kern, sc.scores.data());
  AccumulateValues(p, kv, sq, it, kern, sc, sc.scores.data());
}

// Runs fn(i) for i in [0, n) on the pool, one item at a time (items differ in cost).
template <typename Fn>
void ForEachItem(ThreadPool* pool, int64_t n, Fn fn) {
  if (n <= 0) return;
  const int n_threads = pool != nullptr ? pool->size() : 1;
  std::atomic<int64_t> next{0};
  ParallelFor(pool, std::min<int64_t>(n, n_threads), 1, [&](int64_t, int64_t, int) {
    for (int64_t i = next.fetch_add(1, std::memory_order_relaxed); i < n;
         i = next.fetch_add(1, std::memory_order_relaxed)) {
      fn(i);
    }
  });
}

}  // namespace

void StoreKv(const KvLayerView& kv, int32_t slot, const float* k_row, const float* v_row) {
  StoreKvRows(kv, &slot, 1, k_row, v_row);
}

void StoreKvRows(const KvLayerView& kv, const int32_t* slots, int64_t n, const float* k_rows,
                 const float* v_rows) {
  auto* kbase = static_cast<uint16_t*>(kv.k);
  auto* vbase = static_cast<uint16_t*>(kv.v);
  for (int64_t i = 0; i < n; ++i) {
    uint16_t* kd = kbase + static_cast<int64_t>(slots[i]) * kv.row_elems;
    uint16_t* vd = vbase + static_cast<int64_t>(slots[i]) * kv.row_elems;
    const float* ks = k_rows + i * kv.row_elems;
    const float* vs = v_rows + i * kv.row_elems;
    if (kv.dtype == KvDtype::kF16) {
      F32ToF16Row(ks, kd, kv.row_elems);
      F32ToF16Row(vs, vd, kv.row_elems);
    } else {
      F32ToBf16Row(ks, kd, kv.row_elems);
      F32ToBf16Row(vs, vd, kv.row_elems);
    }
  }
}

void AttentionForSequence(const AttentionParams& params, const float* q, const int64_t* q_pos,
                          int n_q, const KvLayerView& kv, const int32_t* kv_slots, int n_kv,
                          float* out, ThreadPool* pool) {
  const AttentionSequence seq{q, q_pos, n_q, kv_slots, n_kv, out};
  AttentionForBatch(params, kv, std::span<const AttentionSequence>(&seq, 1), pool);
}

void AttentionForBatch(const AttentionParams& params, const KvLayerView& kv,
                       std::span<const AttentionSequence> seqs, ThreadPool* pool) {
  assert(params.n_kv_heads > 0 && params.n_heads % params.n_kv_heads == 0);
  assert(kv.row_elems == static_cast<int64_t>(params.n_kv_heads) * params.head_dim);
  const int group = params.n_heads / params.n_kv_heads;
  const int hd = params.head_dim;
  const int n_threads = pool != nullptr ? pool->size() : 1;

  // Count tiles to decide whether to split key ranges (few queries, long context: decode).
  int64_t base_items = 0;
  for (const auto& s : seqs) {
    base_items += static_cast<int64_t>(params.n_kv_heads) * ((s.n_q + kQueryTile - 1) / kQueryTile);
  }
  const int64_t want = 2LL * n_threads;

  thread_local std::vector<WorkItem> items;
  thread_local std::vector<int64_t> split_tiles;  // index of the first item of each split tile
  thread_local std::vector<float> shared_scores;
  items.clear();
  split_tiles.clear();
  int64_t score_floats = 0;
  for (int si = 0; si < static_cast<int>(seqs.size()); ++si) {
    const AttentionSequence& s = seqs[si];
    for (int q0 = 0; q0 < s.n_q; q0 += kQueryTile) {
      const int q1 = std::min(s.n_q, q0 + kQueryTile);
      int64_t pmin = s.q_pos[q0], pmax = s.q_pos[q0];
      for (int i = q0; i < q1; ++i) {
        assert(s.q_pos[i] >= 0 && s.q_pos[i] < s.n_kv);
        pmin = std::min(pmin, s.q_pos[i]);
        pmax = std::max(pmax, s.q_pos[i]);
      }
      int k0 = 0;
      if (params.sliding_window > 0) {
        k0 = static_cast<int>(std::max<int64_t>(0, pmin - params.sliding_window + 1));
      }
      const int k1 = static_cast<int>(std::min<int64_t>(s.n_kv, pmax + 1));
      const int64_t span = std::max(0, k1 - k0);
      int64_t splits = 1;
      if (base_items < want) {
        splits = std::min<int64_t>((want + base_items - 1) / base_items,
                                   std::max<int64_t>(1, span / kMinKeysPerSplit));
      }
      const int64_t pairs = static_cast<int64_t>(q1 - q0) * group;
      for (int h = 0; h < params.n_kv_heads; ++h) {
        if (splits == 1) {
          items.push_back(WorkItem{si, h, q0, q1, k0, k1, k0, k1, 0, hd});
          continue;
        }
        split_tiles.push_back(static_cast<int64_t>(items.size()));
        const int64_t rows = score_floats;
        score_floats += pairs * span;
        const int64_t per = (span + splits - 1) / splits;
        // Column ranges in whole SIMD lanes.
        const int dper =
            ((hd + static_cast<int>(splits) - 1) / static_cast<int>(splits) + cpu::kLanes - 1) /
            cpu::kLanes * cpu::kLanes;
        for (int64_t sp = 0; sp < splits; ++sp) {
          const int a = static_cast<int>(std::min<int64_t>(k1, k0 + sp * per));
          const int b = static_cast<int>(std::min<int64_t>(k1, k0 + (sp + 1) * per));
          const int d0 = std::min<int>(hd, static_cast<int>(sp) * dper);
          const int d1 = std::min<int>(hd, static_cast<int>(sp + 1) * dper);
          items.push_back(WorkItem{si, h, q0, q1, a, std::max(a, b), k0, k1, d0, d1, rows});
        }
      }
    }
  }
  if (shared_scores.size() < static_cast<size_t>(score_floats)) shared_scores.resize(score_floats);

  const cpu::AttentionKernels kern = SelectKernels();
  const WorkItem* item_data = items.data();
  float* score_data = shared_scores.data();
  // (The buffers are thread_local: workers must reach them through these pointers.)
  const int64_t* tile_data = split_tiles.data();
  // Unsplit items run whole; split items compute their share of the tile's score rows.
  ForEachItem(pool, static_cast<int64_t>(items.size()), [&](int64_t i) {
    const WorkItem& it = item_data[i];
    if (it.scores < 0) {
      RunWholeItem(params, kv, seqs[it.seq], it, kern);
    } else {
      thread_local AttentionScratch sc;
      ComputeScores(params, kv, seqs[it.seq], it, kern, sc, score_data + it.scores);
    }
  });
  if (split_tiles.empty()) return;

  // Split tiles: softmax over whole rows, then each split's output columns of P·V.
  ForEachItem(pool, static_cast<int64_t>(split_tiles.size()), [&](int64_t t) {
    const WorkItem& it = item_data[tile_data[t]];
    NormalizeRows(params, kv, seqs[it.seq], it, kern, score_data + it.scores);
  });
  ForEachItem(pool, static_cast<int64_t>(items.size()), [&](int64_t i) {
    const WorkItem& it = item_data[i];
    if (it.scores < 0) return;
    thread_local AttentionScratch sc;
    AccumulateValues(params, kv, seqs[it.seq], it, kern, sc, score_data + it.scores);
  });
}

}  // namespace radixlm::kernels
