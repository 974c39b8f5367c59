// The gated DeltaNet block of a hybrid model's linear layers (internal to the forward pass;
// llama.cpp's qwen35 build_layer_attn_linear), recurrent form.
//
// For each token, in its sequence's order (C, V, H, S as in layer_tensor.h):
//   xn = attn_norm(x);  mixed = xn · attn_qkvᵀ [C];  z = xn · attn_gateᵀ [V]
//   beta = sigmoid(xn · ssm_betaᵀ) [H];  g = softplus(xn · ssm_alphaᵀ + ssm_dt) * ssm_a [H]
//   (qwen3next: both rows of ssm_ba, grouped by key head)
//   conv = SiLU(causal depthwise convolution of mixed over the last conv_kernel tokens)
//   q, k = conv's Q and K heads, each divided by sqrt(sum of squares + rms_norm_eps); v
//   per value head h (Q/K head h % K heads; h / (H / K heads) with ssm_grouped_heads):  M = exp(g)
//   M;  M += (beta (v - M k)) kᵀ;
//                                             o = M q / sqrt(S)
//   x += ssm_out(RMSNorm(o per head) * ssm_norm * SiLU(z))
// (M's step is the kernel backend's gated_delta_step, kernels/gated_delta.h; M is stored
// key-major.) The convolution's window and M carry over between steps in the sequence's state slot
// (and are copied after each token into the sequence's checkpoint slots, where it names them).
#pragma once

#include <cstdint>
#include <span>

#include "model/forward_scratch.h"
#include "model/recurrent_state.h"
#include "model/transformer_layer.h"

namespace radixlm::model {

// x += the block's output for all rows (defer_residual / pending as RunAttentionBlock's);
// reads and advances each sequence's state in `state` (cleared by the caller for new ones).
void RunGatedDeltaNetBlock(const LayerContext& ctx, int64_t n_tokens,
                           std::span<const LinearSequence> seqs, RecurrentState& state,
                           ForwardScratch& scratch, const PendingResidual& pending = {},
                           bool defer_residual = false);

}  // namespace radixlm::model
