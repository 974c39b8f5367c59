#include "kernels/matmul.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/dot.h"
#include "kernels/packed_weights.h"
#include "kernels/quant.h"

namespace radixlm::kernels {
namespace {

// Rows per inner block: these weight rows stay in L1 while a tile of tokens streams past.
constexpr int64_t kRowBlock = 16;
// Rows per scheduling grain of the parallel split (keeps blocks whole across threads).
constexpr int64_t kRowGrain = 16;
// Decode: how far ahead (bytes of weight rows) to prefetch; ~25% faster on the output head.
constexpr size_t kPrefetchBytes = 2560;

// Per-calling-thread scratch for quantized activations; grows, never shrinks.
struct Scratch {
  std::vector<uint8_t> q8_0;
  std::vector<uint8_t> q8_0_split;  // groups of 8 Q8_0 rows split for VecDot8Fn (+ alignment)
  std::vector<float> q8_0_scales;
  std::vector<uint8_t> q8_k;
};
thread_local Scratch t_scratch;

struct QuantizedInput {
  const uint8_t* data = nullptr;
  size_t row_stride = 0;  // bytes between tokens
  // Q8_0 with >= 8 tokens: the first n_tokens / 8 * 8 tokens split for VecDot8Fn (SplitQ8_0x8):
  // quants of token t at split_qs + t * split_stride (32-byte aligned), the float scales of
  // token group g = t / 8 at split_scales + g * 8 * (cols / 32).
  const int8_t* split_qs = nullptr;
  size_t split_stride = 0;
  const float* split_scales = nullptr;
};

// Quantizes x: [n_tokens, cols] into `act` format (or returns x itself for F32).
// prologue (MatMulMulti's) runs on each range of tokens before they are quantized.
QuantizedInput PrepareInput(GgmlType act, const float* x, int64_t n_tokens, int64_t cols,
                            ThreadPool* pool, const RowPrologue* prologue) {
  if (act == GgmlType::kF32) {
    RunRowPrologue(prologue, n_tokens, pool);
    return {reinterpret_cast<const uint8_t*>(x), static_cast<size_t>(cols) * sizeof(float)};
  }
  const size_t stride = RowBytes(act, cols);
  std::vector<uint8_t>& buf = act == GgmlType::kQ8_0 ? t_scratch.q8_0 : t_scratch.q8_k;
  if (buf.size() < stride * static_cast<size_t>(n_tokens)) {
    buf.resize(stride * static_cast<size_t>(n_tokens));
  }
  uint8_t* dst = buf.data();
  auto quantize = [&](int64_t t0, int64_t t1, int) {
    if (prologue != nullptr) (*prologue)(t0, t1);
    for (int64_t t = t0; t < t1; ++t) {
      if (act == GgmlType::kQ8_0) {
        QuantizeRowQ8_0(x + t * cols, reinterpret_cast<BlockQ8_0*>(dst + t * stride), cols);
      } else {
        QuantizeRowQ8K(x + t * cols, reinterpret_cast<BlockQ8K*>(dst + t * stride), cols);
      }
    }
  };
  // Quantizing one token costs about as much as a thread wakeup; parallelize only big batches.
  if (n_tokens >= 16) {
    ParallelFor(pool, n_tokens, 1, quantize);
  } else {
    quantize(0, n_tokens, 0);
  }
  QuantizedInput in{dst, stride};
  if (act == GgmlType::kQ8_0 && n_tokens >= 8) {
    const int64_t nb = cols / kQK8_0;
    const int64_t groups = n_tokens / 8;
    const size_t split_stride = static_cast<size_t>(cols);  // 32 bytes per block
    std::vector<uint8_t>& qs = t_scratch.q8_0_split;
    if (qs.size() < split_stride * 8 * groups + 32) qs.resize(split_stride * 8 * groups + 32);
    std::vector<float>& sc = t_scratch.q8_0_scales;
    if (sc.size() < static_cast<size_t>(8 * nb * groups)) sc.resize(8 * nb * groups);
    auto* base = reinterpret_cast<int8_t*>((reinterpret_cast<uintptr_t>(qs.data()) + 31) &
                                           ~static_cast<uintptr_t>(31));
    for (int64_t g = 0; g < groups; ++g) {
      SplitQ8_0x8(cols, dst + 8 * g * stride, stride, base + 8 * g * split_stride, split_stride,
                  sc.data() + g * 8 * nb);
    }
    in.split_qs = base;
    in.split_stride = split_stride;
    in.split_scales = sc.data();
  }
  return in;
}

// The multi-row kernels of one weight type (dot.h); any may be null.
struct RowKernels {
  VecDotFn dot;
  VecDot4Fn dot4;
  VecDot8Fn dot8;        // Q8_0 activations, split
  VecDot8Q8KFn dot8q8k;  // Q8_K activations, in place
};

// Tokens [t, t + kTile) of rows [rb, re) through `kernel` (one weight row against kTile
// activation rows in place), stored into y.
template <int kTile, typename Kernel>
void TileRows(const WeightMatrix& w, Kernel kernel, const QuantizedInput& in, int64_t t, float* y,
              int64_t rb, int64_t re) {
  const auto* wdata = static_cast<const uint8_t*>(w.data);
  const uint8_t* xt = in.data + t * in.row_stride;
  float tile[kTile][kRowBlock];  // [token][row]: contiguous stores into y
  for (int64_t r = rb; r < re; ++r) {
    float out[kTile];
    kernel(w.cols, wdata + r * w.row_bytes, xt, in.row_stride, out);
    for (int j = 0; j < kTile; ++j) tile[j][r - rb] = out[j];
  }
  for (int j = 0; j < kTile; ++j) {
    std::memcpy(y + (t + j) * w.rows + rb, tile[j], (re - rb) * sizeof(float));
  }
}

// y[t, r] for r in [r0, r1), all tokens.
void ComputeRows(const WeightMatrix& w, const RowKernels& k, const QuantizedInput& in,
                 int64_t n_tokens, float* y, int64_t r0, int64_t r1) {
  const VecDotFn dot = k.dot;
  const VecDot8Fn dot8 = k.dot8;
  const auto* wdata = static_cast<const uint8_t*>(w.data);
  if (n_tokens == 1) {
    // Decode streams each weight row exactly once: prefetch a few rows ahead so the next
    // rows' cache lines are in flight while this one is being dotted.
    const int64_t ahead_rows = std::max<int64_t>(
        1, static_cast<int64_t>(kPrefetchBytes / std::max<size_t>(1, w.row_bytes)));
    for (int64_t r = r0; r < r1; ++r) {
      if (r + ahead_rows < r1) {
        const uint8_t* ahead = wdata + (r + ahead_rows) * w.row_bytes;
        for (size_t off = 0; off < w.row_bytes; off += 64) __builtin_prefetch(ahead + off, 0, 3);
      }
      y[r] = dot(w.cols, wdata + r * w.row_bytes, in.data);
    }
    return;
  }
  for (int64_t rb = r0; rb < r1; rb += kRowBlock) {
    const int64_t re = std::min(r1, rb + kRowBlock);
    int64_t t = 0;
    if (dot8 != nullptr && in.split_qs != nullptr) {
      const int64_t nb = w.cols / kQK8_0;
      for (; t + 8 <= n_tokens; t += 8) {
        const int8_t* xt = in.split_qs + t * in.split_stride;
        const float* st = in.split_scales + t * nb;  // this group of 8 tokens
        float tile[8][kRowBlock];                    // [token][row]: contiguous stores into y
        for (int64_t r = rb; r < re; ++r) {
          float out[8];
          dot8(w.cols, wdata + r * w.row_bytes, xt, in.split_stride, st, out);
          for (int j = 0; j < 8; ++j) tile[j][r - rb] = out[j];
        }
        for (int j = 0; j < 8; ++j) {
          std::memcpy(y + (t + j) * w.rows + rb, tile[j], (re - rb) * sizeof(float));
        }
      }
    }
    if (k.dot8q8k != nullptr) {
      for (; t + 8 <= n_tokens; t += 8) TileRows<8>(w, k.dot8q8k, in, t, y, rb, re);
    }
    if (k.dot4 != nullptr) {
      for (; t + 4 <= n_tokens; t += 4) TileRows<4>(w, k.dot4, in, t, y, rb, re);
    }
    for (; t < n_tokens; ++t) {
      const uint8_t* xt = in.data + t * in.row_stride;
      float* yt = y + t * w.rows;
      for (int64_t r = rb; r < re; ++r) yt[r] = dot(w.cols, wdata + r * w.row_bytes, xt);
    }
  }
}

// Row groups (16 rows) per scheduling grain of the packed GEMM.
constexpr int64_t kGroupGrain = 2;

int ActSlot(const PackedWeights& p) {
  switch (p.act_block) {
    case 32:
      return 0;
    case 256:
      return 1;
    case kActBf16:
      return 3;
    default:
      return 2;
  }
}

// MatMulMulti for outputs that all have packed weights (the input quantized once per
// activation format in use).
void PackedMatMulMulti(std::span<const MatMulOutput> outputs, const float* x, int64_t n_tokens,
                       ThreadPool* pool, const RowPrologue* prologue) {
  const int n_out = static_cast<int>(outputs.size());
  const int64_t cols = outputs[0].w->cols;
  PackedActivations acts[4];  // act_block 32, 256, 0 (float weights), kActBf16
  bool have[4] = {false, false, false, false};
  int64_t group_offset[kMaxMatMulOutputs + 1];
  group_offset[0] = 0;
  for (int k = 0; k < n_out; ++k) {
    const PackedWeights& p = *outputs[k].w->packed;
    const int slot = ActSlot(p);
    if (!have[slot]) {
      acts[slot] = QuantizePackedActivations(x, n_tokens, cols, p.act_block, pool, prologue);
      prologue = nullptr;  // the rows are final after the first pass
      have[slot] = true;
    }
    group_offset[k + 1] =
        group_offset[k] + (p.groups + kGroupGrain - 1) / kGroupGrain * kGroupGrain;
  }
  ParallelFor(pool, group_offset[n_out], kGroupGrain, [&](int64_t begin, int64_t end, int) {
    for (int k = 0; k < n_out; ++k) {
      const PackedWeights& p = *outputs[k].w->packed;
      const int64_t g0 = std::max(begin, group_offset[k]) - group_offset[k];
      const int64_t g1 = std::min({end - group_offset[k], p.groups});
      if (g0 < g1) {
        PackedGemmGroups(p, acts[ActSlot(p)], n_tokens, g0, g1, outputs[k].y, p.rows);
      }
    }
  });
}

}  // namespace

WeightMatrix MakeWeightMatrix(GgmlType type, const void* data, int64_t rows, int64_t cols) {
  return WeightMatrix{type, data, rows, cols, RowBytes(type, cols)};
}

void MatMul(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y, ThreadPool* pool) {
  const MatMulOutput out{&w, y};
  MatMulMulti(std::span<const MatMulOutput>(&out, 1), x, n_tokens, pool);
}

void MatMulMulti(std::span<const MatMulOutput> outputs, const float* x, int64_t n_tokens,
                 ThreadPool* pool, const RowPrologue* prologue) {
  if (n_tokens <= 0) return;
  if (outputs.empty()) {
    RunRowPrologue(prologue, n_tokens, pool);
    return;
  }
  constexpr int kMaxOutputs = kMaxMatMulOutputs;
  if (outputs.size() > kMaxOutputs) {  // contract violation; stay correct in release builds
    assert(false && "MatMulMulti: too many outputs");
    for (size_t b = 0; b < outputs.size(); b += kMaxOutputs) {
      MatMulMulti(outputs.subspan(b, std::min<size_t>(kMaxOutputs, outputs.size() - b)), x,
                  n_tokens, pool, b == 0 ? prologue : nullptr);
    }
    return;
  }
  const int64_t cols = outputs[0].w->cols;

  // Packed weights go through the int8 GEMM; a mixed call is split in two.
  size_t n_packed = 0;
  for (const MatMulOutput& o : outputs) n_packed += o.w->packed != nullptr;
  if (n_packed == outputs.size()) {
    PackedMatMulMulti(outputs, x, n_tokens, pool, prologue);
    return;
  }
  if (n_packed > 0) {
    MatMulOutput packed[kMaxOutputs], plain[kMaxOutputs];
    size_t np = 0, nq = 0;
    for (const MatMulOutput& o : outputs) (o.w->packed ? packed[np++] : plain[nq++]) = o;
    PackedMatMulMulti(std::span<const MatMulOutput>(packed, np), x, n_tokens, pool, prologue);
    MatMulMulti(std::span<const MatMulOutput>(plain, nq), x, n_tokens, pool);
    return;
  }

  // Quantize the input once per activation format in use.
  QuantizedInput inputs[3];  // F32, Q8_0, Q8_K
  bool have[3] = {false, false, false};
  QuantizedInput per_output[kMaxOutputs];
  RowKernels kernels[kMaxOutputs];
  int64_t row_offset[kMaxOutputs + 1];
  row_offset[0] = 0;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const WeightMatrix& w = *outputs[k].w;
    assert(w.cols == cols);
    assert(w.row_bytes == RowBytes(w.type, w.cols));
    const GgmlType act = ActivationType(w.type);
    const int slot = act == GgmlType::kF32 ? 0 : act == GgmlType::kQ8_0 ? 1 : 2;
    if (!have[slot]) {
      inputs[slot] = PrepareInput(act, x, n_tokens, cols, pool, prologue);
      prologue = nullptr;  // the rows are final after the first pass
      have[slot] = true;
    }
    per_output[k] = inputs[slot];
    kernels[k] = {GetVecDotFn(w.type), GetVecDot4Fn(w.type), GetVecDot8Fn(w.type),
                  GetVecDot8Q8KFn(w.type)};
    assert(kernels[k].dot != nullptr);
    // Each output's rows are rounded up to whole grains so a grain never spans two outputs.
    row_offset[k + 1] = row_offset[k] + (w.rows + kRowGrain - 1) / kRowGrain * kRowGrain;
  }
  const int n_out = static_cast<int>(outputs.size());

  ParallelFor(pool, row_offset[n_out], kRowGrain, [&](int64_t begin, int64_t end, int) {
    for (int k = 0; k < n_out; ++k) {
      const int64_t b = std::max(begin, row_offset[k]);
      const int64_t e = std::min(end, row_offset[k + 1]);
      if (b >= e) continue;
      const WeightMatrix& w = *outputs[k].w;
      const int64_t r0 = b - row_offset[k];
      const int64_t r1 = std::min(w.rows, e - row_offset[k]);
      if (r0 < r1) ComputeRows(w, kernels[k], per_output[k], n_tokens, outputs[k].y, r0, r1);
    }
  });
}

// Items start at whole tiles of the packed activations (SlicePackedActivations).
static_assert(kGroupedRowAlign % kActTile == 0);

void GroupedMatMul(std::span<const GroupedMatMulItem> items, const float* x, int64_t n_tokens,
                   ThreadPool* pool, const RowPrologue* prologue) {
  if (n_tokens <= 0) return;
  // The packed path needs every weight packed for one activation format.
  int act_block = -1;
  bool packed = !items.empty();
  int64_t cols = 0;
  for (const GroupedMatMulItem& item : items) {
    for (const WeightMatrix* w : item.w) {
      if (w == nullptr) continue;
      cols = w->cols;
      if (w->packed == nullptr || (act_block >= 0 && w->packed->act_block != act_block)) {
        packed = false;
      } else {
        act_block = w->packed->act_block;
      }
    }
  }
  if (!packed || act_block < 0) {
    RunRowPrologue(prologue, n_tokens, pool);
    for (const GroupedMatMulItem& item : items) {
      MatMulOutput outs[2];
      size_t n_out = 0;
      for (int j = 0; j < 2; ++j) {
        if (item.w[j] != nullptr) outs[n_out++] = {item.w[j], item.y[j]};
      }
      MatMulMulti(std::span<const MatMulOutput>(outs, n_out), x + item.first * cols, item.rows,
                  pool);
    }
    return;
  }
  // int8 formats: only the items' rows are prologued and quantized (padding keeps finite
  // quants); float and bf16: every row, as the kernels read x itself.
  thread_local std::vector<RowRange> live;
  live.clear();
  if (act_block != 0 && act_block != kActBf16) {
    for (const GroupedMatMulItem& item : items) {
      if (item.rows > 0) live.push_back({item.first, item.rows});
    }
  }
  const PackedActivations acts =
      QuantizePackedActivations(x, n_tokens, cols, act_block, pool, prologue, live);
  // One scheduling range over every (item, weight)'s row groups, each rounded up to whole
  // grains so that a grain never spans two weights.
  struct Unit {
    const PackedWeights* w;
    float* y;
    int64_t first, rows, offset;
  };
  thread_local std::vector<Unit> units;
  units.clear();
  int64_t total = 0;
  for (const GroupedMatMulItem& item : items) {
    assert(item.first % kGroupedRowAlign == 0 && item.first + item.rows <= n_tokens);
    for (int j = 0; j < 2; ++j) {
      if (item.w[j] == nullptr || item.rows == 0) continue;
      const PackedWeights* p = item.w[j]->packed;
      units.push_back({p, item.y[j], item.first, item.rows, total});
      total += (p->groups + kGroupGrain - 1) / kGroupGrain * kGroupGrain;
    }
  }
  const std::vector<Unit>& all = units;
  ParallelFor(pool, total, kGroupGrain, [&](int64_t begin, int64_t end, int) {
    // The first unit whose range ends after `begin` (units are in offset order).
    auto it = std::upper_bound(all.begin(), all.end(), begin,
                               [](int64_t v, const Unit& u) { return v < u.offset; });
    if (it != all.begin()) --it;
    for (; it != all.end() && it->offset < end; ++it) {
      const Unit& u = *it;
      const int64_t g0 = std::max(begin, u.offset) - u.offset;
      const int64_t g1 = std::min(end - u.offset, u.w->groups);
      if (g0 < g1) {
        PackedGemmGroups(*u.w, SlicePackedActivations(acts, u.first), u.rows, g0, g1, u.y,
                         u.w->rows);
      }
    }
  });
}

void RunRowPrologue(const RowPrologue* prologue, int64_t n, ThreadPool* pool) {
  if (prologue == nullptr) return;
  if (n >= 16) {
    ParallelFor(pool, n, 1, [&](int64_t b, int64_t e, int) { (*prologue)(b, e); });
  } else {
    (*prologue)(0, n);
  }
}

void GetRows(const WeightMatrix& w, const int32_t* ids, int64_t n, float* out) {
  const auto* wdata = static_cast<const uint8_t*>(w.data);
  for (int64_t i = 0; i < n; ++i) {
    assert(ids[i] >= 0 && ids[i] < w.rows);
    DequantizeRow(w.type, wdata + static_cast<int64_t>(ids[i]) * w.row_bytes, out + i * w.cols,
                  w.cols);
  }
}

}  // namespace radixlm::kernels
