// One decoder layer over a flattened ragged batch (internal to the forward pass).
//
// The attention block and the FFN block are separate calls so the model can drop rows whose
// output nobody needs before the last layer's FFN. Both read and update the residual stream
// scratch.x in place. All token rows go through each matmul together; attention runs per
// sequence (AttentionForBatch) over the slots in the plan.
#pragma once

#include <cstdint>

#include "kernels/backend.h"
#include "model/batch_plan.h"
#include "model/forward_scratch.h"
#include "model/lora_apply.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "model/rotary.h"
#include "util/thread_pool.h"

namespace radixlm::model {

struct LayerContext {
  const kernels::KernelBackend* backend = nullptr;  // every kernel the layer runs
  const ModelConfig* config = nullptr;
  int64_t layer = 0;
  const LayerWeights* weights = nullptr;
  const RotaryEmbedding* rope = nullptr;  // null: the layer has no RoPE
  const float* rope_cos = nullptr;        // [n_tokens, head_dim/2]
  const float* rope_sin = nullptr;
  kernels::AttentionParams attention;  // the layer's head_dim and n_kv_heads too
  // false: the layer computes no K/V and attends over kv as an earlier layer wrote it
  // (ModelConfig::n_kv_layers).
  bool own_kv = true;
  kernels::KvLayerView kv;
  const int32_t* new_slots = nullptr;  // [plan.n_tokens]: rows of kv this step writes
  std::span<const kernels::AttentionSequence> attn_seqs;  // into scratch.q / scratch.attn
  ThreadPool* pool = nullptr;
  // Gated DeltaNet layers: a sequence's new tokens in the chunked form
  // (ModelOptions::linear_attn_prefill).
  bool chunked_linear_prefill = false;
  // Each row's LoRA adapter (the FFN of the last layer: the compacted rows'); empty: none.
  LoraRows lora;
};

// The attention parameters config gives layer `la` (heads, head size, scale, sliding window,
// logit soft-cap, query scaling; no sinks).
kernels::AttentionParams LayerAttentionParams(const ModelConfig& c, const LayerAttentionConfig& la);

// scratch.attn_seqs, and scratch.swa_attn_seqs where the plan has sliding-window slots: one
// sequence per plan.attention entry, pointing into scratch.q / scratch.attn with rows of qs
// floats.
void PrepareAttentionSequences(const BatchPlan& plan, int64_t qs, ForwardScratch& scratch);

// A block's last step, x += [post_norm](proj), left for whoever reads x next to do row by row
// in its own parallel region (fewer fork/joins per step; the same operations per row).
struct PendingResidual {
  bool pending = false;
  const float* post_norm = nullptr;  // null: x += proj
};

// Applies `pending` (if any) to rows [begin, end) of scratch.x from scratch.proj.
void ApplyPendingResidual(const kernels::KernelBackend& k, const ModelConfig& c,
                          const PendingResidual& pending, ForwardScratch& scratch, int64_t begin,
                          int64_t end);

// x += [post_attn_norm](Attention([temperature]([RoPE]([QKNorm](QKV([attn_norm](x)))))))
// [* residual_scale] for
// all plan.n_tokens rows (the brackets: where the layer has that tensor, or config says so);
// writes this step's K/V into ctx.kv at ctx.new_slots first, then runs ctx.attn_seqs (which
// point into scratch.q / scratch.attn). `pending` (the previous layer's FFN residual) is applied
// first; with defer_residual the block leaves its own residual in scratch.proj for the caller
// to pass on as {true, post_attn_norm}.
void RunAttentionBlock(const LayerContext& ctx, const BatchPlan& plan, ForwardScratch& scratch,
                       const PendingResidual& pending = {}, bool defer_residual = false);

// x += [post_ffn_norm](down(act(gate(xn)) * up(xn))) [* residual_scale], xn = [ffn_norm](x),
// for the first n_rows rows of x; `pending` and defer_residual as above.
void RunFfnBlock(const LayerContext& ctx, int64_t n_rows, ForwardScratch& scratch,
                 const PendingResidual& pending = {}, bool defer_residual = false);

// The end of a gemma4 layer, for the first n_rows rows of x (after the FFN's residual add):
// with per-layer inputs, x += post_norm(proj(gelu(inp_gate(x)) * per_layer_input)), with
// per_layer_input: [n_rows, per_layer_input_size] (this layer's); then x *= out_scale where
// the layer has one.
void RunLayerOutputBlock(const LayerContext& ctx, int64_t n_rows, ForwardScratch& scratch,
                         const float* per_layer_input);

// Runs fn(begin, end) over [0, n_rows), split across the pool when the work is worth it.
// Does not allocate (the pool job holds only a pointer to fn).
template <typename Fn>
void ParallelRows(ThreadPool* pool, int64_t n_rows, int64_t work_per_row, const Fn& fn) {
  constexpr int64_t kMinParallelWork = 1 << 15;
  if (pool == nullptr || pool->size() == 1 || n_rows < 2 ||
      n_rows * work_per_row < kMinParallelWork) {
    if (n_rows > 0) fn(int64_t{0}, n_rows);
    return;
  }
  const Fn* f = &fn;
  pool->ParallelFor(n_rows, 1, [f](int64_t begin, int64_t end, int) { (*f)(begin, end); });
}

}  // namespace radixlm::model
