// The multi-head latent attention block (internal to the forward pass; ModelConfig::IsMla,
// llama.cpp's deepseek2 graph with the absorption), H heads, R = mla_kv_rank, N nope and P =
// rope_dims values per head:
//   xn = attn_norm(x)
//   q = xn · attn_qᵀ, or attn_q_b(RMSNorm_{attn_q_a_norm}(xn · attn_q_aᵀ))   [n, H, N + P]
//   [latent | k_pe] = xn · attn_kv_a_mqaᵀ                                       [n, R + P]
//   cache row = [RMSNorm_{attn_kv_a_norm}(latent) | RoPE(k_pe)]               [n, R + P]
//   Q head h = [attn_k_b[h] · q_nope[h] | RoPE(q_pe[h])] [* temperature(pos)]  [n, H, R + P]
//   o[h] = attn_v_b[h] · Attention(Q, rows, V = the rows' first R values)[h]  [n, H, V]
//   x += attn_output(o)
// with RoPE on pairs of consecutive values (the tables of ctx.rope), Llama 4's attention
// temperature where the model has one (ModelConfig::attn_temperature_scale), the scores scaled by
// ctx.attention.scale, this step's rows stored into the latent cache (ctx.kv: no V plane)
// before attention reads them with the prefix. Every token's result depends on its own row
// and its sequence's cache rows only (the per-head projections are grouped GEMMs over blocks
// of tokens), so batches and chunking change nothing.
#pragma once

#include "model/batch_plan.h"
#include "model/forward_scratch.h"
#include "model/transformer_layer.h"

namespace radixlm::model {

void RunMlaAttentionBlock(const LayerContext& ctx, const BatchPlan& plan, ForwardScratch& scratch,
                          const PendingResidual& pending = {}, bool defer_residual = false);

}  // namespace radixlm::model
