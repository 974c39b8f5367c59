// The full-attention block of a hybrid model (internal to the forward pass; llama.cpp's qwen35
// build_layer_attn):
//   xn = attn_norm(x);  [q | gate] per head = xn · attn_qᵀ;  k = xn · attn_kᵀ;  v = xn · attn_vᵀ
//   q, k = RoPE(RMSNorm per head(q, k)), the first rope_dims values of each head rotated
//          NeoX-style (pairs i, i + rope_dims / 2)
//   x += attn_output(Attention(q, k, v) * sigmoid(gate))
// with this step's K/V stored into the cache first, as RunAttentionBlock does.
#pragma once

#include <cstdint>

#include "model/batch_plan.h"
#include "model/forward_scratch.h"
#include "model/transformer_layer.h"

namespace radixlm::model {

// ctx.rope_cos / rope_sin: [n_tokens, head_dim / 2] tables whose first rope_dims / 2 columns
// are the rotated pairs' (RotaryEmbedding of the layer's head_dim and rope_dims).
void RunGatedAttentionBlock(const LayerContext& ctx, const BatchPlan& plan, ForwardScratch& scratch,
                            const PendingResidual& pending = {}, bool defer_residual = false);

}  // namespace radixlm::model
