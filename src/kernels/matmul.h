// Matrix multiplication of float activations with a (possibly quantized) weight matrix.
//
// Conventions (ggml / PyTorch Linear): a weight matrix has `rows` output features, each row
// holding `cols` input features contiguously (a GGUF tensor of shape [cols, rows] in ggml
// order). MatMul computes y = x · Wᵀ:
//   x: [n_tokens, cols] float, row-major, contiguous
//   y: [n_tokens, rows] float, row-major, contiguous; y[t, r] = dot(W[r, :], x[t, :])
// Activations are quantized once per call to ActivationType(w.type) (dot.h), into a scratch
// buffer owned by the calling thread (grown on demand, never shrunk; no allocation once warm).
// Work is split over output rows across the pool (blocks of 16 rows). For several tokens, each
// block of weight rows stays in L1 while all tokens stream past: groups of 8 tokens go through
// the register-tiled 8-token kernels where the type has one (dot.h, VecDot8Fn, Q8_0 activations
// split once per call; the codebook types: VecDot8Q8KFn), then groups of 4 through the 4-row
// kernels (VecDot4Fn), the rest through the single-row kernel; all give bit-identical
// per-element results (batch invariance).
// pool may be null (serial).
// Thread-safety: concurrent calls from different threads are fine (separate scratch).
// x and y must not overlap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "gguf/ggml_types.h"
#include "util/thread_pool.h"

namespace radixlm::kernels {

using gguf::GgmlType;

struct PackedWeights;

struct WeightMatrix {
  GgmlType type = GgmlType::kF32;
  const void* data = nullptr;  // rows * row_bytes bytes, not owned (e.g. into a GGUF mapping)
  int64_t rows = 0;            // output features
  int64_t cols = 0;            // input features (multiple of the type's block size)
  size_t row_bytes = 0;        // RowBytes(type, cols); rows are packed back to back
  // The same weights repacked for the int8 GEMM (packed_weights.h), or null. Not owned; when
  // set, MatMul uses it for every number of tokens.
  const PackedWeights* packed = nullptr;
};

// Builds a WeightMatrix with row_bytes = RowBytes(type, cols).
WeightMatrix MakeWeightMatrix(GgmlType type, const void* data, int64_t rows, int64_t cols);

// y = x · Wᵀ. x: [n_tokens, w.cols], y: [n_tokens, w.rows]. Requires a weight type supported by
// dot.h and w.cols a multiple of its block size. n_tokens == 0 is a no-op.
void MatMul(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y, ThreadPool* pool);

// Several weight matrices applied to the same input in one parallel region (e.g. Q/K/V or
// gate/up): input is quantized once per activation format, and one ParallelFor covers all
// outputs (fewer wakeups per decode step). Every w must have the same cols; at most
// kMaxMatMulOutputs outputs per call (more asserts in debug builds; release splits the call).
inline constexpr int kMaxMatMulOutputs = 8;
struct MatMulOutput {
  const WeightMatrix* w;
  float* y;  // [n_tokens, w->rows]
};
//
// prologue (optional): work that makes rows of x final (a norm, a residual add, an activation
// of the previous op), run as prologue(begin, end) over [0, n_tokens) exactly once, each row
// before any matmul reads it, inside the parallel region that quantizes x where there is one
// (so a layer's element-wise ops cost no fork/join of their own).
using RowPrologue = std::function<void(int64_t begin, int64_t end)>;
// Runs prologue (if any) over all n rows on its own: in parallel for 16 rows or more (the
// threshold at which activations are quantized in parallel), else inline.
void RunRowPrologue(const RowPrologue* prologue, int64_t n, ThreadPool* pool);
void MatMulMulti(std::span<const MatMulOutput> outputs, const float* x, int64_t n_tokens,
                 ThreadPool* pool, const RowPrologue* prologue = nullptr);

// Weight matrices applied each to its own range of rows of one input, in one parallel region
// split across the items and their output rows (a mixture of experts: each expert's gate and
// up, or its down, to the rows routed to it). Item i: for each of its weights w[j] (w[1] may be
// null), y[j] = x[first, first + rows) · w[j]ᵀ, y[j]: [rows, w[j]->rows]. x: [n_tokens, cols],
// every item's rows inside it, `first` a multiple of kGroupedRowAlign; rows of x in no item
// (padding) may be read and their results are dropped, so they must be finite (the prologue
// may write them). Every weight must have `cols` columns. Where all weights are packed for the
// same activation format, x is quantized once for every item (int8 formats: only the items'
// rows, the prologue only over them; padding reads earlier finite quants); otherwise the items
// run one after another through MatMulMulti (the prologue first, over [0, n_tokens)). Per
// element, results are those of MatMulMulti (batch invariance).
inline constexpr int64_t kGroupedRowAlign = 16;
struct GroupedMatMulItem {
  const WeightMatrix* w[2] = {nullptr, nullptr};
  float* y[2] = {nullptr, nullptr};
  int64_t first = 0;
  int64_t rows = 0;
};
void GroupedMatMul(std::span<const GroupedMatMulItem> items, const float* x, int64_t n_tokens,
                   ThreadPool* pool, const RowPrologue* prologue = nullptr);

// Embedding lookup: out[i, :] = dequantized W[ids[i], :] for i in [0, n).
// out: [n, w.cols]. Every id must be in [0, w.rows) (checked with assert only).
void GetRows(const WeightMatrix& w, const int32_t* ids, int64_t n, float* out);

}  // namespace radixlm::kernels
