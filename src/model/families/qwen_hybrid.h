// What the Qwen hybrid families share (qwen35, qwen35moe, qwen3next; llama.cpp's
// src/models/qwen35.cpp, qwen35moe.cpp, qwen3next.cpp): gated DeltaNet linear layers between
// gated full-attention layers, each layer's FFN input normed by post_attention_norm.
//
// The three differ in:
// - RoPE: qwen35 / qwen35moe read rope.dimension_sections (interleaved M-RoPE, NeoX pairs for
//   text); qwen3next has plain NeoX RoPE on the first rope.dimension_count values of each head.
// - The linear layers' beta / alpha projections: ssm_beta and ssm_alpha apart (qwen35*), or one
//   ssm_ba grouped by key head (qwen3next).
// - Which Q/K head a value head reads: tiled (h % K heads: qwen35*, whose converter reorders
//   the value heads) or grouped (h / (V heads / K heads): qwen3next).
// - The FFN: dense SwiGLU (qwen35), or softmax-routed experts (top expert_used_count,
//   renormalized) plus a shared expert whose output is scaled by sigmoid(xn ·
//   ffn_gate_inp_shexp) (qwen35moe, qwen3next).
// The full-attention layers are the same in all three: attn_q holds per head head_dim query
// values then head_dim gate values, Q and K are RMS-normed per head, the output is multiplied
// by sigmoid(gate) before attn_output.
#pragma once

#include "model/families/family.h"

namespace radixlm::model {

struct QwenHybridLayout {
  bool rope_sections = true;      // read (and check) rope.dimension_sections
  bool fused_beta_alpha = false;  // ssm_ba in place of ssm_beta / ssm_alpha
  bool grouped_heads = false;     // ModelConfig::ssm_grouped_heads
  bool experts = false;           // the MoE FFN with its gated shared expert
};

// Sets the hybrid's flags, the ssm.* shapes, the layer pattern (attention.recurrent_layers,
// else every full_attention_interval-th layer full) and every layer's tensors on `c`.
// InvalidArgument / Unimplemented naming the key or tensor otherwise.
Status ConfigureQwenHybrid(const ArchMetadata& m, const QwenHybridLayout& layout, ModelConfig* c);

}  // namespace radixlm::model
