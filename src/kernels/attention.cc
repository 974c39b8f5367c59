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

float RowMax(const float* s, int n) {
  float max = -INFINITY;
  for (int j = 0; j < n; ++j) max = std::max(max, s[j]);
  return max;
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
constexpr int kQueryTile = 32;      // queries per work item, at least
constexpr int kPairsPerTile = 128;  // (query, head) pairs per work item, at most (and kQueryTile)
constexpr int kKeyBlock = cpu::kAttendBlockMax;  // keys converted to float at a time
constexpr int kChunk = 256;                      // keys per softmax chunk (see attention.h)
static_assert(kChunk % kKeyBlock == 0);

cpu::AttentionKernels SelectKernels() {
#if defined(RADIXLM_KERNELS_X86) && defined(RADIXLM_KERNELS_AVX512)
  if (ActiveIsa() >= Isa::kAvx512) {
    return {cpu::avx2::ScoreBlock,       cpu::avx512::ScoreTile,   cpu::avx2::ExpSum,
            cpu::avx512::AccumulateTile, cpu::avx2::LoadF16Rows,   cpu::avx2::RowMax,
            cpu::avx2::ScoreF16,         cpu::avx2::AccumulateF16, cpu::avx2::LoadF16KeysT,
            cpu::avx512::ScoreKeysT};
  }
#endif
#if defined(RADIXLM_KERNELS_X86)
  if (static_cast<int>(ActiveIsa()) >= static_cast<int>(Isa::kAvx2)) {
    return {cpu::avx2::ScoreBlock,     cpu::avx2::ScoreTile,     cpu::avx2::ExpSum,
            cpu::avx2::AccumulateTile, cpu::avx2::LoadF16Rows,   cpu::avx2::RowMax,
            cpu::avx2::ScoreF16,       cpu::avx2::AccumulateF16, cpu::avx2::LoadF16KeysT,
            cpu::avx2::ScoreKeysT};
  }
#endif
  return {cpu::scalar::ScoreBlock,     nullptr, cpu::scalar::ExpSum,
          cpu::scalar::AccumulateTile, nullptr, cpu::scalar::RowMax};
}

// One unit of parallel work: a tile of queries of one sequence x one kv head, over the softmax
// chunks [c0, c1) of the tile's keys. An unsplit item covers all the tile's chunks and writes the
// output; a split one (decode with a long context) stores its chunks' states for the fold.
struct WorkItem {
  int seq;
  int kv_head;
  int q0, q1;           // query rows [q0, q1)
  int k0, k1;           // the tile's key positions [k0, k1) (union of its queries' views)
  int c0, c1;           // chunks [c0, c1): keys [max(k0, c * kChunk), min(k1, (c + 1) * kChunk))
  int64_t states = -1;  // split only: index of chunk c0's first state in the shared buffer
};

// Softmax state of one (query, head) pair over some keys: max score m, sum of exp(s - m) l, and
// o = sum of exp(s - m) * v (head_dim floats, kept apart). Empty: no visible key (m = -inf).
struct RowState {
  float m;
  double l;
};

// Rounds x[0, n) in place to the nearest BF16 value (round to nearest even): what ggml's mul_mat
// does to a float operand multiplied with a BF16 matrix.
void RoundThroughBf16(float* x, int64_t n) {
  uint16_t half[256];
  for (int64_t i = 0; i < n; i += 256) {
    const int64_t m = std::min<int64_t>(256, n - i);
    F32ToBf16Row(x + i, half, m);
    Bf16ToF32Row(half, x + i, m);
  }
}

// Converts n values of `dtype` starting at element `elem` of the plane `base` to float.
inline void ConvertRow(KvDtype dtype, const void* base, int64_t elem, float* dst, int n) {
  switch (dtype) {
    case KvDtype::kF16:
      F16ToF32Row(static_cast<const uint16_t*>(base) + elem, dst, n);
      break;
    case KvDtype::kBF16:
      Bf16ToF32Row(static_cast<const uint16_t*>(base) + elem, dst, n);
      break;
    case KvDtype::kFp8E5M2:
      E5M2ToF32Row(static_cast<const uint8_t*>(base) + elem, dst, n);
      break;
  }
}

// Converts n floats and writes them at element `elem` of the plane `base`.
inline void StoreRow(KvDtype dtype, void* base, int64_t elem, const float* src, int64_t n) {
  switch (dtype) {
    case KvDtype::kF16:
      F32ToF16Row(src, static_cast<uint16_t*>(base) + elem, n);
      break;
    case KvDtype::kBF16:
      F32ToBf16Row(src, static_cast<uint16_t*>(base) + elem, n);
      break;
    case KvDtype::kFp8E5M2:
      F32ToE5M2Row(src, static_cast<uint8_t*>(base) + elem, n);
      break;
  }
}

// The V head size (AttentionParams::v_head_dim, else head_dim).
inline int VDim(const AttentionParams& p) { return p.v_head_dim > 0 ? p.v_head_dim : p.head_dim; }

// The last key position query qi sees (AttentionSequence::q_last_key, else causal).
inline int64_t LastKey(const AttentionSequence& sq, int qi) {
  return sq.q_last_key != nullptr ? sq.q_last_key[qi] : sq.q_pos[qi];
}

// The key range [lo, hi) query qi may see: causal (or q_last_key) and window rule.
inline void VisibleKeys(const AttentionParams& p, const AttentionSequence& sq, int qi, int64_t* lo,
                        int64_t* hi) {
  const int64_t pos = sq.q_pos[qi];
  *lo = p.sliding_window > 0 ? std::max<int64_t>(0, pos - p.sliding_window + 1) : 0;
  *hi = LastKey(sq, qi) + 1;
}

// Per-thread buffers (grown on demand).
struct AttentionScratch {
  std::vector<float> kvbuf;    // [kKeyBlock, max(head_dim, v_dim)]: K or V rows as float
  std::vector<float> ktbuf;    // [kKeyBlock * head_dim]: a key block in transposed panels
  std::vector<float> q;        // [pairs, head_dim]: the tile's queries (see PrepareQueries)
  std::vector<float> scores;   // [pairs, kChunk]: one chunk's scores, then probabilities
  std::vector<float> chunk_o;  // [pairs, v_dim]: one chunk's P·V
  std::vector<float> run_o;    // [pairs, v_dim]: the fold so far (unsplit items)
  std::vector<RowState> chunk_state, run_state;  // [pairs]
};

void Grow(std::vector<float>& v, int64_t n) {
  if (v.size() < static_cast<size_t>(n)) v.resize(n);
}

// Converts `n` rows of kv head columns [head_off, head_off + width) (K or V plane `base`) for
// key positions [kb, kb + n) into dst: [n, width]; the rows up to position kb + n_ahead are
// prefetched where the kernels can.
void LoadKeyBlock(const KvLayerView& kv, const void* base, const AttentionSequence& sq,
                  const cpu::AttentionKernels& kern, int64_t head_off, int width, int kb, int n,
                  int n_ahead, float* dst) {
  if (kv.dtype == KvDtype::kF16 && kern.load_f16 != nullptr && width % 8 == 0) {
    kern.load_f16(static_cast<const uint16_t*>(base), sq.kv_slots + kb, kv.row_elems, head_off,
                  width, n, n_ahead, dst);
    return;
  }
  for (int j = 0; j < n; ++j) {
    const int64_t row = static_cast<int64_t>(sq.kv_slots[kb + j]) * kv.row_elems + head_off;
    ConvertRow(kv.dtype, base, row, dst + static_cast<int64_t>(j) * width, width);
  }
}

// The tile's queries (scaled first when the model scales Q itself), into sc.q: in float with an
// F16 or E5M2 cache (as llama.cpp's batched flash attention multiplies an F16 cache, and the
// exact math), rounded to BF16 with a BF16 cache (llama.cpp's one kernel for it does so).
void PrepareQueries(const AttentionParams& p, const KvLayerView& kv, const AttentionSequence& sq,
                    const WorkItem& it, AttentionScratch& sc) {
  const int hd = p.head_dim;
  const int group = p.n_heads / p.n_kv_heads;
  const int n_pairs = (it.q1 - it.q0) * group;
  const int64_t q_stride = static_cast<int64_t>(p.n_heads) * hd;
  Grow(sc.q, static_cast<int64_t>(n_pairs) * hd);
  const float s = p.scale_query ? p.scale : 1.0f;
  for (int qi = it.q0; qi < it.q1; ++qi) {
    for (int hh = 0; hh < group; ++hh) {
      const float* src = sq.q + qi * q_stride + (it.kv_head * group + hh) * hd;
      float* dst = sc.q.data() + static_cast<int64_t>((qi - it.q0) * group + hh) * hd;
      for (int d = 0; d < hd; ++d) dst[d] = src[d] * s;
    }
  }
  if (kv.dtype == KvDtype::kBF16) RoundThroughBf16(sc.q.data(), static_cast<int64_t>(n_pairs) * hd);
}

// Scales n raw dot products s[0, n) (unless the query was scaled) and applies the soft cap.
void FinishScores(const AttentionParams& p, float score_scale, float* s, int n) {
  if (score_scale != 1.0f) {
    for (int j = 0; j < n; ++j) s[j] *= score_scale;
  }
  if (p.logit_softcap > 0.0f) {
    for (int j = 0; j < n; ++j) s[j] = p.logit_softcap * std::tanh(s[j] / p.logit_softcap);
  }
}

// One softmax chunk of the tile: keys [a, b). Leaves per pair its state in sc.chunk_state and
// its P·V in sc.chunk_o (zero for pairs that see none of these keys).
void RunChunk(const AttentionParams& p, const KvLayerView& kv, const AttentionSequence& sq,
              const WorkItem& it, const cpu::AttentionKernels& kern, int a, int b,
              AttentionScratch& sc) {
  const int hd = p.head_dim;
  const int group = p.n_heads / p.n_kv_heads;
  const int n_pairs = (it.q1 - it.q0) * group;
  const int64_t head_off = static_cast<int64_t>(it.kv_head) * hd;
  const float score_scale = p.scale_query ? 1.0f : p.scale;
  float* rows = sc.scores.data();  // row stride kChunk
  // Decode (one query row) over an F16 cache: keys and values converted in registers.
  const int vd = VDim(p);
  const bool in_place = it.q1 - it.q0 == 1 && kv.dtype == KvDtype::kF16 &&
                        kern.score_f16 != nullptr && hd % 8 == 0 && vd % 8 == 0;
  // Prefill (many pairs) over an F16 cache: scores against transposed key blocks.
  const bool transposed = !in_place && kv.dtype == KvDtype::kF16 && kern.score_t != nullptr &&
                          hd % 8 == 0 && n_pairs >= cpu::kMinPairsT;

  // Scores of the visible keys.
  for (int kb = a; kb < b; kb += kKeyBlock) {
    const int ke = std::min(b, kb + kKeyBlock);
    if (in_place) {
      int64_t lo, hi;
      VisibleKeys(p, sq, it.q0, &lo, &hi);
      const int blo = static_cast<int>(std::clamp<int64_t>(lo, kb, ke));
      const int bhi = static_cast<int>(std::clamp<int64_t>(hi, kb, ke));
      if (blo >= bhi) continue;
      kern.score_f16(sc.q.data(), group, static_cast<const uint16_t*>(kv.k), sq.kv_slots + blo,
                     kv.row_elems, head_off, bhi - blo, b - blo, hd, rows + (blo - a), kChunk);
      for (int pair = 0; pair < group; ++pair) {
        FinishScores(p, score_scale, rows + pair * kChunk + (blo - a), bhi - blo);
      }
      continue;
    }
    if (transposed) {
      kern.load_f16_t(static_cast<const uint16_t*>(kv.k), sq.kv_slots + kb, kv.row_elems, head_off,
                      hd, ke - kb, b - kb, sc.ktbuf.data());
    } else {
      LoadKeyBlock(kv, kv.k, sq, kern, head_off, hd, kb, ke - kb, b - kb, sc.kvbuf.data());
    }
    // Whether query qi sees every key of the block (then its scores may come from one tile
    // call with its neighbours': ScoreTileFn's values do not depend on the rows beside them).
    auto sees_block = [&](int qi) {
      int64_t lo, hi;
      VisibleKeys(p, sq, qi, &lo, &hi);
      return lo <= kb && hi >= ke;
    };
    for (int qi = it.q0, q_next = it.q0; qi < it.q1; qi = q_next) {
      q_next = qi + 1;
      int64_t lo, hi;
      VisibleKeys(p, sq, qi, &lo, &hi);
      const int blo = static_cast<int>(std::clamp<int64_t>(lo, kb, ke));
      const int bhi = static_cast<int>(std::clamp<int64_t>(hi, kb, ke));
      if (blo >= bhi) continue;
      const int pair0 = (qi - it.q0) * group;
      const float* kblk = sc.kvbuf.data() + static_cast<int64_t>(blo - kb) * hd;
      // Consecutive queries that all see the whole block go in one call (each key row then
      // serves several queries: a bidirectional span, or a causal prompt's earlier keys).
      if ((transposed || kern.score_tile != nullptr) && blo == kb && bhi == ke) {
        while (q_next < it.q1 && sees_block(q_next)) ++q_next;
      }
      if (transposed) {
        kern.score_t(sc.q.data() + static_cast<int64_t>(pair0) * hd, (q_next - qi) * group,
                     sc.ktbuf.data(), blo - kb, bhi - kb, hd, rows + pair0 * kChunk + (blo - a),
                     kChunk);
      } else if (kern.score_tile != nullptr) {  // the query's heads together: each key loaded once
        kern.score_tile(sc.q.data() + static_cast<int64_t>(pair0) * hd, (q_next - qi) * group, kblk,
                        bhi - blo, hd, rows + pair0 * kChunk + (blo - a), kChunk);
      }
      for (int hh = 0; hh < (q_next - qi) * group; ++hh) {
        const int pair = pair0 + hh;
        float* s = rows + pair * kChunk + (blo - a);
        if (!transposed && kern.score_tile == nullptr) {
          kern.score(sc.q.data() + static_cast<int64_t>(pair) * hd, kblk, bhi - blo, hd, s);
        }
        FinishScores(p, score_scale, s, bhi - blo);
      }
    }
  }

  // Per pair: max, exp(s - max) summed, invisible keys weigh 0.
  for (int qi = it.q0; qi < it.q1; ++qi) {
    int64_t lo, hi;
    VisibleKeys(p, sq, qi, &lo, &hi);
    lo = std::clamp<int64_t>(lo, a, b);
    hi = std::clamp<int64_t>(hi, a, b);
    for (int hh = 0; hh < group; ++hh) {
      const int pair = (qi - it.q0) * group + hh;
      float* row = rows + pair * kChunk;
      std::fill(row, row + (lo - a), 0.0f);
      std::fill(row + (std::max(lo, hi) - a), row + (b - a), 0.0f);
      RowState& st = sc.chunk_state[pair];
      if (lo >= hi) {
        st = {-INFINITY, 0.0};
        continue;
      }
      float* s = row + (lo - a);
      const int n = static_cast<int>(hi - lo);
      const float max = kern.row_max(s, n);
      st = {max, kern.exp_sum(s, n, static_cast<int>(lo % cpu::kLanes), max)};
    }
  }

  // P·V over the chunk's keys (a latent cache's V: the first vd values of the K head).
  const void* v_plane = kv.v != nullptr ? kv.v : kv.k;
  const int64_t v_off = kv.v != nullptr ? static_cast<int64_t>(it.kv_head) * vd : head_off;
  std::fill(sc.chunk_o.begin(), sc.chunk_o.begin() + static_cast<int64_t>(n_pairs) * vd, 0.0f);
  for (int kb = a; kb < b; kb += kKeyBlock) {
    const int ke = std::min(b, kb + kKeyBlock);
    if (in_place) {
      kern.accumulate_f16(rows + (kb - a), kChunk, n_pairs, static_cast<const uint16_t*>(v_plane),
                          sq.kv_slots + kb, kv.row_elems, v_off, ke - kb, vd, sc.chunk_o.data(),
                          vd);
      continue;
    }
    LoadKeyBlock(kv, v_plane, sq, kern, v_off, vd, kb, ke - kb, b - kb, sc.kvbuf.data());
    kern.accumulate(rows + (kb - a), kChunk, n_pairs, sc.kvbuf.data(), ke - kb, vd,
                    sc.chunk_o.data(), vd);
  }
}

// Folds a chunk's state (m, l, o) into the running one (M, L, O), in place. The first non-empty
// chunk is copied; after that m' = max(M, m), O = O * e^(M - m') + o * e^(m - m'), and L alike.
void Fold(RowState* run, float* run_o, const RowState& c, const float* o, int hd) {
  if (c.m == -INFINITY) return;
  if (run->m == -INFINITY) {
    *run = c;
    std::copy(o, o + hd, run_o);
    return;
  }
  const float m = std::max(run->m, c.m);
  const float ea = cpu::scalar::GgmlExp(run->m - m), eb = cpu::scalar::GgmlExp(c.m - m);
  run->l = run->l * static_cast<double>(ea) + c.l * static_cast<double>(eb);
  run->m = m;
  for (int d = 0; d < hd; ++d) {
    const float x = run_o[d] * ea;
    const float y = o[d] * eb;
    run_o[d] = x + y;
  }
}

// Output row = O / L. With a sink logit (AttentionParams::sinks; -inf: none) the softmax's
// denominator also holds e^sink, in the same max-shifted state: m' = max(M, sink),
// out = O e^(M - m') / (L e^(M - m') + e^(sink - m')).
void WriteOutput(const RowState& st, const float* o, int hd, float sink, float* out) {
  if (sink == -INFINITY) {
    const float inv = st.l > 0.0 ? static_cast<float>(1.0 / st.l) : 0.0f;
    for (int d = 0; d < hd; ++d) out[d] = o[d] * inv;
    return;
  }
  const float m = std::max(st.m, sink);
  const float e_run = st.m == -INFINITY ? 0.0f : cpu::scalar::GgmlExp(st.m - m);
  const double l =
      st.l * static_cast<double>(e_run) + static_cast<double>(cpu::scalar::GgmlExp(sink - m));
  const float inv = static_cast<float>(1.0 / l);
  for (int d = 0; d < hd; ++d) out[d] = (o[d] * e_run) * inv;
}

// The sink logit of query head `head`, or -inf where the layer has none.
inline float SinkOf(const AttentionParams& p, int head) {
  return p.sinks != nullptr ? p.sinks[head] : -INFINITY;
}

float* OutputRow(const AttentionParams& p, const AttentionSequence& sq, int kv_head, int qi,
                 int hh) {
  const int group = p.n_heads / p.n_kv_heads;
  return sq.out + static_cast<int64_t>(qi) * p.n_heads * VDim(p) +
         static_cast<int64_t>(kv_head * group + hh) * VDim(p);
}

inline int ChunkBegin(const WorkItem& it, int c) { return std::max(it.k0, c * kChunk); }
inline int ChunkEnd(const WorkItem& it, int c) { return std::min(it.k1, (c + 1) * kChunk); }

void GrowScratch(const AttentionParams& p, const WorkItem& it, AttentionScratch& sc) {
  const int n_pairs = (it.q1 - it.q0) * (p.n_heads / p.n_kv_heads);
  Grow(sc.kvbuf, static_cast<int64_t>(kKeyBlock) * std::max(p.head_dim, VDim(p)));
  Grow(sc.ktbuf, static_cast<int64_t>(kKeyBlock) * p.head_dim);
  Grow(sc.scores, static_cast<int64_t>(n_pairs) * kChunk);
  Grow(sc.chunk_o, static_cast<int64_t>(n_pairs) * VDim(p));
  Grow(sc.run_o, static_cast<int64_t>(n_pairs) * VDim(p));
  if (sc.chunk_state.size() < static_cast<size_t>(n_pairs)) {
    sc.chunk_state.resize(n_pairs);
    sc.run_state.resize(n_pairs);
  }
}

// Shared buffers of split items: per (tile chunk, pair) its state and P·V.
struct SplitStates {
  RowState* state;
  float* o;  // [.., v_dim]
};

// Runs the item's chunks; an unsplit item folds them and writes the output, a split one stores
// each chunk's state at states.
void RunItem(const AttentionParams& p, const KvLayerView& kv, const AttentionSequence& sq,
             const WorkItem& it, const cpu::AttentionKernels& kern, SplitStates split) {
  thread_local AttentionScratch sc;
  GrowScratch(p, it, sc);
  const int vd = VDim(p);
  const int group = p.n_heads / p.n_kv_heads;
  const int n_pairs = (it.q1 - it.q0) * group;
  PrepareQueries(p, kv, sq, it, sc);
  for (int i = 0; i < n_pairs; ++i) sc.run_state[i] = {-INFINITY, 0.0};
  for (int c = it.c0; c < it.c1; ++c) {
    RunChunk(p, kv, sq, it, kern, ChunkBegin(it, c), ChunkEnd(it, c), sc);
    for (int i = 0; i < n_pairs; ++i) {
      const float* o = sc.chunk_o.data() + static_cast<int64_t>(i) * vd;
      if (it.states >= 0) {
        const int64_t at = it.states + static_cast<int64_t>(c - it.c0) * n_pairs + i;
        split.state[at] = sc.chunk_state[i];
        std::copy(o, o + vd, split.o + at * vd);
      } else {
        Fold(&sc.run_state[i], sc.run_o.data() + static_cast<int64_t>(i) * vd, sc.chunk_state[i], o,
             vd);
      }
    }
  }
  if (it.states >= 0) return;
  for (int qi = it.q0; qi < it.q1; ++qi) {
    for (int hh = 0; hh < group; ++hh) {
      const int i = (qi - it.q0) * group + hh;
      WriteOutput(sc.run_state[i], sc.run_o.data() + static_cast<int64_t>(i) * vd, vd,
                  SinkOf(p, it.kv_head * group + hh), OutputRow(p, sq, it.kv_head, qi, hh));
    }
  }
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
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = static_cast<int64_t>(slots[i]) * kv.row_elems;
    StoreRow(kv.dtype, kv.k, row, k_rows + i * kv.row_elems, kv.row_elems);
    if (kv.v != nullptr) StoreRow(kv.dtype, kv.v, row, v_rows + i * kv.row_elems, kv.row_elems);
  }
}

const char* KvDtypeName(KvDtype dtype) {
  switch (dtype) {
    case KvDtype::kF16:
      return "f16";
    case KvDtype::kBF16:
      return "bf16";
    case KvDtype::kFp8E5M2:
      return "fp8_e5m2";
  }
  return "?";
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
  assert(params.v_head_dim <= params.head_dim || kv.v != nullptr);
  const int group = params.n_heads / params.n_kv_heads;
  const int hd = VDim(params);  // the width of the states folded here
  const int n_threads = pool != nullptr ? pool->size() : 1;
  // Queries per work item: each item converts its keys' K and V rows to float once, so without
  // grouped heads (a vision encoder's) a tile takes more queries. Results do not depend on it.
  const int q_tile = std::max(kQueryTile, kPairsPerTile / group);

  // Count tiles to decide whether to split chunk ranges (few queries, long context: decode).
  int64_t base_items = 0;
  for (const auto& s : seqs) {
    base_items += static_cast<int64_t>(params.n_kv_heads) * ((s.n_q + q_tile - 1) / q_tile);
  }
  const int64_t want = 2LL * n_threads;

  thread_local std::vector<WorkItem> items;
  thread_local std::vector<int64_t> split_tiles;  // index of the first item of each split tile
  thread_local std::vector<RowState> shared_state;
  thread_local std::vector<float> shared_o;
  items.clear();
  split_tiles.clear();
  int64_t n_states = 0;
  for (int si = 0; si < static_cast<int>(seqs.size()); ++si) {
    const AttentionSequence& s = seqs[si];
    for (int q0 = 0; q0 < s.n_q; q0 += q_tile) {
      const int q1 = std::min(s.n_q, q0 + q_tile);
      int64_t pmin = s.q_pos[q0], pmax = LastKey(s, q0);
      for (int i = q0; i < q1; ++i) {
        assert(s.q_pos[i] >= 0 && LastKey(s, i) >= s.q_pos[i] && LastKey(s, i) < s.n_kv);
        pmin = std::min(pmin, s.q_pos[i]);
        pmax = std::max(pmax, LastKey(s, i));
      }
      int k0 = 0;
      if (params.sliding_window > 0) {
        k0 = static_cast<int>(std::max<int64_t>(0, pmin - params.sliding_window + 1));
      }
      const int k1 = static_cast<int>(std::min<int64_t>(s.n_kv, pmax + 1));
      const int c0 = k0 / kChunk, c1 = k1 > k0 ? (k1 - 1) / kChunk + 1 : c0;
      const int n_chunks = c1 - c0;
      int64_t splits = 1;
      if (base_items < want && n_chunks > 1) {
        splits = std::min<int64_t>((want + base_items - 1) / base_items, n_chunks);
      }
      const int64_t pairs = static_cast<int64_t>(q1 - q0) * group;
      for (int h = 0; h < params.n_kv_heads; ++h) {
        if (splits == 1) {
          items.push_back(WorkItem{si, h, q0, q1, k0, k1, c0, c1, -1});
          continue;
        }
        split_tiles.push_back(static_cast<int64_t>(items.size()));
        const int64_t per = (n_chunks + splits - 1) / splits;
        for (int64_t sp = 0; sp < splits; ++sp) {
          const int a = static_cast<int>(std::min<int64_t>(c1, c0 + sp * per));
          const int b = static_cast<int>(std::min<int64_t>(c1, c0 + (sp + 1) * per));
          if (a >= b) continue;
          items.push_back(WorkItem{si, h, q0, q1, k0, k1, a, b, n_states + (a - c0) * pairs});
        }
        n_states += n_chunks * pairs;
      }
    }
  }
  // Each grown on its own: layers of one model may differ in head size (gemma4's sliding and
  // global layers), so enough states need not mean enough state outputs.
  if (shared_state.size() < static_cast<size_t>(n_states)) shared_state.resize(n_states);
  if (shared_o.size() < static_cast<size_t>(n_states * hd)) shared_o.resize(n_states * hd);

  const cpu::AttentionKernels kern = SelectKernels();
  const WorkItem* item_data = items.data();
  // (The buffers are thread_local: workers must reach them through these pointers.)
  const SplitStates split{shared_state.data(), shared_o.data()};
  const int64_t* tile_data = split_tiles.data();
  const int64_t n_items = static_cast<int64_t>(items.size());
  ForEachItem(pool, n_items, [&](int64_t i) {
    RunItem(params, kv, seqs[item_data[i].seq], item_data[i], kern, split);
  });
  if (split_tiles.empty()) return;

  // Split tiles: fold the stored chunk states in chunk order, as an unsplit item does.
  ForEachItem(pool, static_cast<int64_t>(split_tiles.size()), [&](int64_t t) {
    const WorkItem& first = item_data[tile_data[t]];
    const AttentionSequence& sq = seqs[first.seq];
    const int n_pairs = (first.q1 - first.q0) * group;
    // The tile's items are consecutive and cover its chunks in order from first.c0.
    int c1 = first.c1;
    for (int64_t j = tile_data[t] + 1;
         j < n_items && item_data[j].states >= 0 && item_data[j].seq == first.seq &&
         item_data[j].kv_head == first.kv_head && item_data[j].q0 == first.q0;
         ++j) {
      c1 = item_data[j].c1;
    }
    thread_local std::vector<float> run_o;
    if (run_o.size() < static_cast<size_t>(hd)) run_o.resize(hd);
    for (int i = 0; i < n_pairs; ++i) {
      RowState run{-INFINITY, 0.0};
      for (int c = first.c0; c < c1; ++c) {
        const int64_t at = first.states + static_cast<int64_t>(c - first.c0) * n_pairs + i;
        Fold(&run, run_o.data(), split.state[at], split.o + at * hd, hd);
      }
      const int qi = first.q0 + i / group, hh = i % group;
      WriteOutput(run, run_o.data(), hd, SinkOf(params, first.kv_head * group + hh),
                  OutputRow(params, sq, first.kv_head, qi, hh));
    }
  });
}

}  // namespace radixlm::kernels
