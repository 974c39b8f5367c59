// The mixture-of-experts FFN (internal to the forward pass; ModelConfig::n_experts > 0), as
// llama.cpp's build_moe_ffn computes it with softmax gating.
//
// For rows [0, n_rows) of scratch.xn: the router's logits (xn · ffn_gate_inpᵀ) and their
// softmax; each row's n_experts_used most probable experts (ties: the lower index) weighted by
// their probabilities (divided by their sum with expert_weights_norm, clamped below as llama.cpp
// does, then times expert_weights_scale). Then, over chunks of rows (MoeScratch::kTokenChunk),
// the rows routed to each expert are gathered into a segment of their own and every segment
// goes through its expert's gated FFN in two grouped GEMMs (kernels::GroupedMatMul: gate and up
// of every expert touched, then down), each one parallel region split across the experts and
// their output rows. A step reads the weights of the experts its rows route to and no others
// (one row: its n_experts_used experts). A row's output is the sum of weight * expert output
// over its experts, the most probable first (llama.cpp's order).
//
// Batch invariance: a row's experts and weights depend on that row alone, every GEMM result
// element is the same whatever the rows beside it in the GEMM (kernels/matmul.h), and a row's
// sum runs over its own experts in a fixed order, so a row's output is bit-identical whether it
// is computed alone or in any batch.
#pragma once

#include <cstdint>

#include "kernels/matmul.h"
#include "model/forward_scratch.h"
#include "model/transformer_layer.h"

namespace radixlm::model {

// The most expert groups (ModelConfig::n_expert_groups) routing handles (DeepSeek V3: 8).
inline constexpr int64_t kMaxExpertGroups = 256;

// scratch.proj rows [0, n_rows) = the experts' mixture of scratch.xn's rows. `input` (may be
// null) makes rows of xn final (the FFN block's residual add and norm; matmul.h's RowPrologue):
// it runs once per row, in the router's GEMM, before anything reads xn. The router reads
// router_input ([n_rows, hidden]: Gemma 4's, ModelConfig::moe_dense_branch) where given, else
// xn; it may be scratch.proj, which the router's GEMM reads whole before the mixture is written
// there. Where the layer has down_exps_scale, each expert's output is scaled by its entry
// (folded into the token's weight for that expert).
void RunMoeFfn(const LayerContext& ctx, int64_t n_rows, const kernels::RowPrologue* input,
               ForwardScratch& scratch, const float* router_input = nullptr);

}  // namespace radixlm::model
