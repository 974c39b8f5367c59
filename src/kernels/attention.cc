#include "kernels/attention.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <vector>

#include "kernels/cpu/attention_impl.h"
#include "kernels/dot.h"
#include "kernels/fp16.h"

namespace radixlm::kernels {
namespace cpu::scalar {

void AttendBlock(const float* q, const float* k, const float* v, int n, int lo, int hi,
                 int head_dim, float scale, float softcap, float* m, float* l, float* acc) {
  if (lo >= hi) return;
  float s[kAttendBlockMax];
  float block_max = -INFINITY;
  for (int j = lo; j < hi; ++j) {
    const float* kj = k + static_cast<int64_t>(j) * head_dim;
    float dot = 0.0f;
    for (int d = 0; d < head_dim; ++d) dot += q[d] * kj[d];
    float score = dot * scale;
    if (softcap > 0.0f) score = softcap * std::tanh(score / softcap);
    s[j - lo] = score;
    block_max = std::max(block_max, score);
  }
  const float new_m = std::max(*m, block_max);
  const float corr = std::exp(*m - new_m);
  float psum = 0.0f;
  for (int j = 0; j < hi - lo; ++j) {
    s[j] = std::exp(s[j] - new_m);
    psum += s[j];
  }
  *l = *l * corr + psum;
  *m = new_m;
  for (int d = 0; d < head_dim; ++d) acc[d] *= corr;
  for (int j = lo; j < hi; ++j) {
    const float* vj = v + static_cast<int64_t>(j) * head_dim;
    const float p = s[j - lo];
    for (int d = 0; d < head_dim; ++d) acc[d] += p * vj[d];
  }
}

}  // namespace cpu::scalar

namespace {

constexpr int kQueryTile = 8;                    // queries per work item
constexpr int kKeyBlock = cpu::kAttendBlockMax;  // keys converted to float at a time
constexpr int kMinKeysPerSplit = 256;            // don't split key ranges finer than this

cpu::AttendBlockFn SelectAttendBlock() {
#if defined(RADIXLM_KERNELS_X86)
  if (static_cast<int>(ActiveIsa()) >= static_cast<int>(Isa::kAvx2)) return cpu::avx2::AttendBlock;
#endif
  return cpu::scalar::AttendBlock;
}

// One unit of parallel work: a tile of queries of one sequence x one kv head x a key range.
struct WorkItem {
  int seq;
  int kv_head;
  int q0, q1;       // query rows [q0, q1)
  int k0, k1;       // key positions [k0, k1)
  int64_t partial;  // -1: write the output directly; else offset of this split's partials
};

inline void ConvertRow(KvDtype dtype, const uint16_t* src, float* dst, int n) {
  if (dtype == KvDtype::kF16) {
    F16ToF32Row(src, dst, n);
  } else {
    Bf16ToF32Row(src, dst, n);
  }
}

// Per-thread buffers (grown on demand).
struct AttentionScratch {
  std::vector<float> kbuf, vbuf, acc, m, l;
};

void RunItem(const AttentionParams& p, const KvLayerView& kv, const AttentionSequence& sq,
             const WorkItem& it, cpu::AttendBlockFn attend, float* partials) {
  thread_local AttentionScratch sc;
  const int hd = p.head_dim;
  const int group = p.n_heads / p.n_kv_heads;
  const int n_pairs = (it.q1 - it.q0) * group;
  if (sc.kbuf.size() < static_cast<size_t>(kKeyBlock) * hd) {
    sc.kbuf.resize(static_cast<size_t>(kKeyBlock) * hd);
    sc.vbuf.resize(static_cast<size_t>(kKeyBlock) * hd);
  }
  if (sc.acc.size() < static_cast<size_t>(n_pairs) * hd)
    sc.acc.resize(static_cast<size_t>(n_pairs) * hd);
  if (sc.m.size() < static_cast<size_t>(n_pairs)) {
    sc.m.resize(n_pairs);
    sc.l.resize(n_pairs);
  }
  std::fill(sc.acc.begin(), sc.acc.begin() + static_cast<int64_t>(n_pairs) * hd, 0.0f);
  std::fill(sc.m.begin(), sc.m.begin() + n_pairs, -INFINITY);
  std::fill(sc.l.begin(), sc.l.begin() + n_pairs, 0.0f);

  const int64_t q_stride = static_cast<int64_t>(p.n_heads) * hd;
  const auto* kbase = static_cast<const uint16_t*>(kv.k);
  const auto* vbase = static_cast<const uint16_t*>(kv.v);
  const int64_t head_off = static_cast<int64_t>(it.kv_head) * hd;

  for (int kb = it.k0; kb < it.k1; kb += kKeyBlock) {
    const int ke = std::min(it.k1, kb + kKeyBlock);
    for (int j = kb; j < ke; ++j) {
      const int64_t row = static_cast<int64_t>(sq.kv_slots[j]) * kv.row_elems + head_off;
      ConvertRow(kv.dtype, kbase + row, sc.kbuf.data() + static_cast<int64_t>(j - kb) * hd, hd);
      ConvertRow(kv.dtype, vbase + row, sc.vbuf.data() + static_cast<int64_t>(j - kb) * hd, hd);
    }
    for (int qi = it.q0; qi < it.q1; ++qi) {
      const int64_t pos = sq.q_pos[qi];
      // Visible key positions for this query: [lo, hi] (inclusive), clipped to the block.
      int64_t lo = 0;
      if (p.sliding_window > 0) lo = std::max<int64_t>(0, pos - p.sliding_window + 1);
      const int blo = static_cast<int>(std::clamp<int64_t>(lo - kb, 0, ke - kb));
      const int bhi = static_cast<int>(std::clamp<int64_t>(pos + 1 - kb, 0, ke - kb));
      if (blo >= bhi) continue;
      for (int hh = 0; hh < group; ++hh) {
        const int pair = (qi - it.q0) * group + hh;
        const float* qv = sq.q + qi * q_stride + (it.kv_head * group + hh) * hd;
        attend(qv, sc.kbuf.data(), sc.vbuf.data(), ke - kb, blo, bhi, hd, p.scale, p.logit_softcap,
               &sc.m[pair], &sc.l[pair], sc.acc.data() + static_cast<int64_t>(pair) * hd);
      }
    }
  }

  for (int qi = it.q0; qi < it.q1; ++qi) {
    for (int hh = 0; hh < group; ++hh) {
      const int pair = (qi - it.q0) * group + hh;
      const float* acc = sc.acc.data() + static_cast<int64_t>(pair) * hd;
      if (it.partial < 0) {
        float* o = sq.out + qi * q_stride + (it.kv_head * group + hh) * hd;
        const float inv = sc.l[pair] > 0.0f ? 1.0f / sc.l[pair] : 0.0f;
        for (int d = 0; d < hd; ++d) o[d] = acc[d] * inv;
      } else {
        // Partial layout per pair: [m, l, acc[hd]].
        float* dst = partials + it.partial + static_cast<int64_t>(pair) * (hd + 2);
        dst[0] = sc.m[pair];
        dst[1] = sc.l[pair];
        std::copy(acc, acc + hd, dst + 2);
      }
    }
  }
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
  const int n_threads = pool != nullptr ? pool->size() : 1;

  // Count base items to decide how finely to split key ranges.
  int64_t base_items = 0;
  for (const auto& s : seqs) {
    base_items += static_cast<int64_t>(params.n_kv_heads) * ((s.n_q + kQueryTile - 1) / kQueryTile);
  }
  const int64_t want = 2LL * n_threads;

  thread_local std::vector<WorkItem> items;
  thread_local std::vector<float> partials;
  thread_local std::vector<int64_t> split_count;  // per base item, in order
  items.clear();
  split_count.clear();
  int64_t partial_floats = 0;
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
      for (int h = 0; h < params.n_kv_heads; ++h) {
        split_count.push_back(splits);
        const int64_t per = (span + splits - 1) / splits;
        for (int64_t sp = 0; sp < splits; ++sp) {
          const int a = static_cast<int>(k0 + sp * per);
          const int b = static_cast<int>(std::min<int64_t>(k1, k0 + (sp + 1) * per));
          int64_t off = -1;
          if (splits > 1) {
            off = partial_floats;
            partial_floats += static_cast<int64_t>(q1 - q0) * group * (params.head_dim + 2);
          }
          items.push_back(WorkItem{si, h, q0, q1, a, std::max(a, b), off});
        }
      }
    }
  }
  if (partials.size() < static_cast<size_t>(partial_floats)) partials.resize(partial_floats);

  const cpu::AttendBlockFn attend = SelectAttendBlock();
  const int64_t n_items = static_cast<int64_t>(items.size());
  std::atomic<int64_t> next{0};
  const WorkItem* item_data = items.data();
  float* partial_data = partials.data();
  auto worker = [&](int64_t, int64_t, int) {
    // Dynamic scheduling: causal tiles differ in cost, so threads pull items one at a time.
    for (int64_t i = next.fetch_add(1, std::memory_order_relaxed); i < n_items;
         i = next.fetch_add(1, std::memory_order_relaxed)) {
      const WorkItem& it = item_data[i];
      RunItem(params, kv, seqs[it.seq], it, attend, partial_data);
    }
  };
  ParallelFor(pool, std::min<int64_t>(n_items, n_threads), 1, worker);

  if (partial_floats == 0) return;
  // Merge split partials: out = sum_s exp(m_s - M) acc_s / sum_s exp(m_s - M) l_s.
  const int hd = params.head_dim;
  int64_t idx = 0;
  for (int64_t b = 0; b < static_cast<int64_t>(split_count.size()); ++b) {
    const int64_t splits = split_count[b];
    const WorkItem& first = items[idx];
    if (splits > 1) {
      const AttentionSequence& s = seqs[first.seq];
      const int64_t q_stride = static_cast<int64_t>(params.n_heads) * hd;
      for (int qi = first.q0; qi < first.q1; ++qi) {
        for (int hh = 0; hh < group; ++hh) {
          const int64_t pair = static_cast<int64_t>(qi - first.q0) * group + hh;
          float mx = -INFINITY;
          for (int64_t sp = 0; sp < splits; ++sp) {
            mx = std::max(mx, partials[items[idx + sp].partial + pair * (hd + 2)]);
          }
          float* o = s.out + qi * q_stride + (first.kv_head * group + hh) * hd;
          std::fill(o, o + hd, 0.0f);
          float denom = 0.0f;
          for (int64_t sp = 0; sp < splits; ++sp) {
            const float* src = partials.data() + items[idx + sp].partial + pair * (hd + 2);
            if (src[1] <= 0.0f) continue;
            const float w = std::exp(src[0] - mx);
            denom += w * src[1];
            for (int d = 0; d < hd; ++d) o[d] += w * src[2 + d];
          }
          const float inv = denom > 0.0f ? 1.0f / denom : 0.0f;
          for (int d = 0; d < hd; ++d) o[d] *= inv;
        }
      }
    }
    idx += splits;
  }
}

}  // namespace radixlm::kernels
