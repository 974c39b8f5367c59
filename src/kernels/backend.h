// The kernel backend seam: every operation a model's forward pass runs, as one table chosen
// once when the model loads. model/ calls only this table (with the plain data types of
// matmul.h and attention.h), so another backend — a CUDA one later — plugs in by providing a
// table with the same contracts, without touching model/.
//
// The CPU table (CpuBackend) is fixed for the process: its entries dispatch on the ISA chosen
// at start-up (dot.h's ActiveIsa: scalar, AVX2, AVX-512, AVX-512 + AMX; RADIXLM_ISA caps it).
// Contracts of each entry are those of the function it names (matmul.h, ops.h, attention.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "kernels/attention.h"
#include "kernels/gated_delta.h"
#include "kernels/matmul.h"
#include "kernels/packed_weights.h"
#include "util/thread_pool.h"

namespace radixlm::kernels {

struct KernelBackend {
  const char* name;  // "cpu-scalar", "cpu-avx2", "cpu-avx512", "cpu-amx"

  // Prepares a weight matrix once at load for this backend's matmul: the CPU backend repacks
  // quantized weights for the int8 GEMM where the CPU runs it (packed_weights.h), setting
  // w->packed. Returns the storage w->packed points into (null when w stays as it is); the
  // caller keeps it alive as long as w is used.
  std::unique_ptr<PackedWeights> (*prepare_weights)(WeightMatrix* w, ThreadPool* pool);

  // MatMulMulti (matmul.h): outputs[k].y = x · outputs[k].wᵀ.
  void (*matmul)(std::span<const MatMulOutput> outputs, const float* x, int64_t n_tokens,
                 ThreadPool* pool, const RowPrologue* prologue);
  // GroupedMatMul (matmul.h): weights each applied to its own rows of one input (experts).
  void (*grouped_matmul)(std::span<const GroupedMatMulItem> items, const float* x, int64_t n_tokens,
                         ThreadPool* pool, const RowPrologue* prologue);
  // GetRows (matmul.h): embedding lookup.
  void (*embed)(const WeightMatrix& w, const int32_t* ids, int64_t n, float* out);

  // Row-wise and element-wise ops (ops.h); single-threaded over the rows they are given.
  void (*rms_norm)(const float* x, const float* weight, int64_t n_rows, int64_t dim, float eps,
                   float* out);
  void (*add)(const float* a, const float* b, float* out, int64_t n);
  void (*scale)(const float* x, float s, float* out, int64_t n);
  void (*geglu)(const float* gate, const float* up, float* out, int64_t n);
  void (*swiglu)(const float* gate, const float* up, float* out, int64_t n);
  void (*swiglu_oai)(const float* gate, const float* up, float* out, int64_t n);
  // ApplyRopeTables (rope.h): rotates rows [row_begin, row_end) with precomputed cos/sin.
  void (*rope)(float* x, int64_t row_begin, int64_t row_end, int64_t n_heads, int64_t head_dim,
               bool neox, const float* cos, const float* sin);

  // GatedDeltaStep (gated_delta.h): one DeltaNet head's state update and output for a token.
  void (*gated_delta_step)(float* m, const float* q, const float* k, const float* v, float decay,
                           float beta, int64_t s, float* out);
  // GatedDeltaChunk (gated_delta.h): the same for up to kGatedDeltaChunk tokens at once.
  void (*gated_delta_chunk)(float* m, const GatedDeltaTokens& x, int64_t n, int64_t s,
                            float* scratch);

  // StoreKvRows and AttentionForBatch (attention.h).
  void (*store_kv)(const KvLayerView& kv, const int32_t* slots, int64_t n, const float* k_rows,
                   const float* v_rows);
  void (*attention)(const AttentionParams& params, const KvLayerView& kv,
                    std::span<const AttentionSequence> seqs, ThreadPool* pool);
};

// The CPU backend for this process's ISA level.
const KernelBackend& CpuBackend();

}  // namespace radixlm::kernels
