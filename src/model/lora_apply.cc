#include "model/lora_apply.h"

#include <algorithm>

#include "gguf/ggml_types.h"
#include "kernels/dot.h"
#include "kernels/quant.h"
#include "util/check.h"

namespace radixlm::model {

namespace {

constexpr int64_t kLoraOutChunk = 256;  // B rows per work item

struct LoraSegment {
  const LoraMatrix* m = nullptr;
  int64_t begin = 0;  // rows [begin, end)
  int64_t end = 0;
  int64_t first_item = 0;  // of this stage's flattened work items
};

// Runs fn(item) for item in [0, n_items), across the pool when the work is worth it. Does not
// allocate (the job holds a pointer to fn).
template <typename Fn>
void LoraParallelItems(ThreadPool* pool, int64_t n_items, int64_t work, const Fn& fn) {
  constexpr int64_t kMinParallelWork = 1 << 15;
  if (pool == nullptr || pool->size() == 1 || n_items < 2 || work < kMinParallelWork) {
    for (int64_t i = 0; i < n_items; ++i) fn(i);
    return;
  }
  const Fn* f = &fn;
  pool->ParallelFor(n_items, 1, [f](int64_t begin, int64_t end, int) {
    for (int64_t i = begin; i < end; ++i) (*f)(i);
  });
}

// The segment holding work item `item` (segments' first_item increasing).
const LoraSegment& FindLoraSegment(const std::vector<LoraSegment>& segments, int64_t item) {
  auto it = std::upper_bound(segments.begin(), segments.end(), item,
                             [](int64_t i, const LoraSegment& s) { return i < s.first_item; });
  return *(it - 1);
}

}  // namespace

bool AnyLora(const LoraRows& rows) {
  for (const LoraAdapter* a : rows.adapter) {
    if (a != nullptr) return true;
  }
  return false;
}

void ApplyLora(const LoraRows& rows, int64_t layer, LoraTarget target, const float* x,
               int64_t x_stride, float* y, int64_t y_stride, int64_t n, ThreadPool* pool) {
  if (rows.adapter.empty()) return;
  // Only the scheduler thread runs a forward pass; the list is reused across calls.
  // (The pool's workers read it through this reference: a thread_local named in the lambdas
  // would be each worker's own, empty, instance.)
  thread_local std::vector<LoraSegment> step_segments;
  std::vector<LoraSegment>& segments = step_segments;
  segments.clear();
  int64_t max_rank = 0;
  for (int64_t r = 0; r < n;) {
    const LoraAdapter* adapter = rows.adapter[r];
    int64_t e = r + 1;
    while (e < n && rows.adapter[e] == adapter) ++e;
    const LoraMatrix* m = adapter != nullptr ? adapter->Get(layer, target) : nullptr;
    if (m != nullptr) {
      RADIXLM_CHECK(adapter->resident()) << "a LoRA adapter not made resident before the pass";
      segments.push_back({m, r, e, 0});
      max_rank = std::max(max_rank, m->rank);
    }
    r = e;
  }
  if (segments.empty()) return;
  std::vector<float>& t = *rows.scratch;  // [n, max_rank]: A x of each row
  if (static_cast<int64_t>(t.size()) < n * max_rank) t.resize(n * max_rank);

  // Stage 1: t[r] = A x[r], one work item per row of A per segment.
  int64_t items = 0;
  int64_t work = 0;
  for (LoraSegment& s : segments) {
    s.first_item = items;
    items += s.m->rank;
    work += s.m->rank * s.m->in * (s.end - s.begin);
  }
  auto stage_a = [&](int64_t item) {
    const LoraSegment& s = FindLoraSegment(segments, item);
    const LoraMatrix& m = *s.m;
    const int64_t j = item - s.first_item;
    const kernels::VecDotFn dot = kernels::GetVecDotFn(m.type);
    const auto* a_row = static_cast<const uint8_t*>(m.a) + j * kernels::RowBytes(m.type, m.in);
    for (int64_t r = s.begin; r < s.end; ++r) {
      t[r * max_rank + j] = dot(m.in, a_row, x + r * x_stride);
    }
  };
  LoraParallelItems(pool, items, work, stage_a);

  // Stage 2: y[r] += scale * B t[r], one work item per kLoraOutChunk rows of B per segment:
  // acc = sum over j in order of t[r][j] * Bt[j] (contiguous rows of the transposed B), then
  // y += scale * acc. Each row's sums are its own, in a fixed order (batch invariance).
  items = 0;
  work = 0;
  for (LoraSegment& s : segments) {
    s.first_item = items;
    items += (s.m->out + kLoraOutChunk - 1) / kLoraOutChunk;
    work += s.m->rank * s.m->out * (s.end - s.begin);
  }
  auto stage_b = [&](int64_t item) {
    const LoraSegment& s = FindLoraSegment(segments, item);
    const LoraMatrix& m = *s.m;
    const int64_t o0 = (item - s.first_item) * kLoraOutChunk;
    const int64_t len = std::min(m.out, o0 + kLoraOutChunk) - o0;
    float acc[kLoraOutChunk];
    for (int64_t r = s.begin; r < s.end; ++r) {
      const float* tr = t.data() + r * max_rank;
      for (int64_t o = 0; o < len; ++o) acc[o] = 0.0f;
      for (int64_t j = 0; j < m.rank; ++j) {
        const float* bj = m.bt + j * m.out + o0;
        const float tj = tr[j];
        for (int64_t o = 0; o < len; ++o) acc[o] += tj * bj[o];
      }
      float* yr = y + r * y_stride + o0;
      for (int64_t o = 0; o < len; ++o) yr[o] += m.scale * acc[o];
    }
  };
  LoraParallelItems(pool, items, work, stage_b);
}

}  // namespace radixlm::model
