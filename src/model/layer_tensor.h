// The per-layer tensors a decoder layer can have, and whether a layer needs each one.
//
// A model family decides which tensors each of its layers has (ModelConfig::layer_tensors);
// the names and shapes are shared by every family (tensor_names.h), as llama.cpp's are.
#pragma once

#include <array>
#include <cstdint>

namespace radixlm::model {

// Shapes in ggml order ([cols, rows], and [cols, rows, n] for n stacked matrices: one per
// expert); LayerTensorShape (tensor_names.h) gives them per config
// and layer (head_dim, n_kv_heads and ffn are the layer's: ModelConfig::LayerAttention).
enum class LayerTensor {
  kAttnNorm,      // attn_norm.weight            [hidden]
  kAttnQ,         // attn_q.weight               [hidden, n_heads * head_dim]
  kAttnK,         // attn_k.weight               [hidden, n_kv_heads * head_dim]
  kAttnV,         // attn_v.weight               [hidden, n_kv_heads * head_dim]
  kAttnOutput,    // attn_output.weight          [n_heads * head_dim, hidden]
  kAttnQBias,     // attn_q.bias                 [n_heads * head_dim]
  kAttnKBias,     // attn_k.bias                 [n_kv_heads * head_dim]
  kAttnVBias,     // attn_v.bias                 [n_kv_heads * head_dim]
  kAttnQNorm,     // attn_q_norm.weight          [head_dim], or [n_heads * head_dim] (whole row)
  kAttnKNorm,     // attn_k_norm.weight          [head_dim], or [n_kv_heads * head_dim]
  kPostAttnNorm,  // post_attention_norm.weight  [hidden]
  kFfnNorm,       // ffn_norm.weight             [hidden]
  kFfnGate,       // ffn_gate.weight             [hidden, ffn]
  kFfnUp,         // ffn_up.weight               [hidden, ffn], or [hidden, 2 * ffn] fused
                  //                             with the gate (its first ffn rows; phi3)
  kFfnDown,       // ffn_down.weight             [ffn, hidden]
  kPostFfnNorm,   // post_ffw_norm.weight        [hidden]
  kAttnQkv,       // attn_qkv.weight             [hidden, q_size + 2 * kv_size]: Q, K, V rows
  kAttnQkvBias,   // attn_qkv.bias               [q_size + 2 * kv_size]
  // Per-layer inputs (gemma4): gelu(x · inp_gateᵀ) * the layer's input, projected back,
  // normed, added to x at the layer's end; then x * layer_output_scale.
  kPerLayerInpGate,   // inp_gate.weight            [hidden, per_layer_input]
  kPerLayerProj,      // proj.weight                [per_layer_input, hidden]
  kPerLayerPostNorm,  // post_norm.weight           [hidden]
  kLayerOutScale,     // layer_output_scale.weight  [1]
  // gpt-oss: the attention output's bias, a learned sink logit per query head (kernels/
  // attention.h), and the biases of the router and of every expert's matrices.
  kAttnOutputBias,   // attn_output.bias            [hidden]
  kAttnSinks,        // attn_sinks.weight           [n_heads]
  kFfnGateInpBias,   // ffn_gate_inp.bias           [n_experts]
  kFfnGateExpsBias,  // ffn_gate_exps.bias          [expert_ffn, n_experts]
  kFfnUpExpsBias,    // ffn_up_exps.bias            [expert_ffn, n_experts]
  kFfnDownExpsBias,  // ffn_down_exps.bias          [hidden, n_experts]
  // Mixture of experts (ModelConfig::n_experts > 0), in place of ffn_{gate,up,down}:
  kFfnGateInp,   // ffn_gate_inp.weight         [hidden, n_experts]: the router
  kFfnGateExps,  // ffn_gate_exps.weight        [hidden, expert_ffn, n_experts]
  kFfnUpExps,    // ffn_up_exps.weight          [hidden, expert_ffn, n_experts]
  kFfnDownExps,  // ffn_down_exps.weight        [expert_ffn, hidden, n_experts]
  // Gated DeltaNet (a hybrid model's linear layers; ModelConfig::linear_layers; C = conv
  // channels, V = ssm_inner_size, H = ssm_n_v_heads, S = ssm_state_size), with attn_qkv
  // [hidden, C] as their input projection:
  kAttnGate,   // attn_gate.weight            [hidden, V]: z, the output gate
  kSsmConv1d,  // ssm_conv1d.weight           [conv_kernel, C]: per channel, its taps
  kSsmDt,      // ssm_dt.bias                 [H]
  kSsmA,       // ssm_a                       [H]: -exp(A_log)
  kSsmBeta,    // ssm_beta.weight             [hidden, H]
  kSsmAlpha,   // ssm_alpha.weight            [hidden, H]
  kSsmNorm,    // ssm_norm.weight             [S]
  kSsmOut,     // ssm_out.weight              [V, hidden]
  // Multi-head latent attention (ModelConfig::mla_kv_rank > 0; R = mla_kv_rank, QR =
  // mla_q_rank, K = mla_key_dim, N = K - rope_dims, V = mla_value_dim, H = n_heads), with
  // attn_q [hidden, H * K] where there is no QR:
  kAttnQA,       // attn_q_a.weight             [hidden, QR]
  kAttnQANorm,   // attn_q_a_norm.weight        [QR]
  kAttnQB,       // attn_q_b.weight             [QR, H * K]
  kAttnKvAMqa,   // attn_kv_a_mqa.weight        [hidden, R + rope_dims]
  kAttnKvANorm,  // attn_kv_a_norm.weight       [R]
  kAttnKB,       // attn_k_b.weight             [N, R, H]: per head, nope -> latent
  kAttnVB,       // attn_v_b.weight             [R, V, H]: per head, latent -> value
  // DeepSeekMoE: the shared expert (S = ModelConfig::shared_expert_ffn_size) and the bias of
  // the experts' selection scores.
  kFfnGateShexp,  // ffn_gate_shexp.weight      [hidden, S]
  kFfnUpShexp,    // ffn_up_shexp.weight        [hidden, S]
  kFfnDownShexp,  // ffn_down_shexp.weight      [S, hidden]
  kFfnExpProbsB,  // exp_probs_b.bias           [n_experts]
  // Gemma 4's mixture of experts (ModelConfig::moe_dense_branch): the router reads the
  // residual's RMSNorm times its own scale, the experts their own pre-norm, and the experts'
  // sum and the dense FFN beside them have a post-norm each; each expert's output is scaled.
  kFfnGateInpScale,   // ffn_gate_inp.scale          [hidden]
  kFfnPreNorm2,       // pre_ffw_norm_2.weight       [hidden]: the experts' input norm
  kFfnPostNorm1,      // post_ffw_norm_1.weight      [hidden]: the dense FFN's output norm
  kFfnPostNorm2,      // post_ffw_norm_2.weight      [hidden]: the experts' output norm
  kFfnDownExpsScale,  // ffn_down_exps.scale         [n_experts]
  // Per expert its gate's expert_ffn rows then its up's, in place of ffn_{gate,up}_exps:
  kFfnGateUpExps,  // ffn_gate_up_exps.weight     [hidden, 2 * expert_ffn, n_experts]
  // Qwen3-Next / Qwen 3.5 MoE: the shared expert's output is scaled by sigmoid(xn · this).
  kFfnGateInpShexp,  // ffn_gate_inp_shexp.weight [hidden]
  // Qwen3-Next's linear layers: ssm_beta and ssm_alpha in one matrix, grouped by key head
  // (per key head, its H / K heads' beta rows then their alpha rows).
  kSsmBetaAlpha,  // ssm_ba.weight               [hidden, 2 * H]
  // A multi-token-prediction (NextN) layer's own tensors (model/nextn_model.h): the layer's
  // input is eh_proj · [enorm(embedding) | hnorm(hidden)]; its output goes through
  // shared_head_norm (else output_norm) to shared_head_head (else the model's LM head).
  kNextnEhProj,          // nextn.eh_proj.weight          [2 * hidden, hidden]
  kNextnEnorm,           // nextn.enorm.weight            [hidden]
  kNextnHnorm,           // nextn.hnorm.weight            [hidden]
  kNextnSharedHeadNorm,  // nextn.shared_head_norm.weight [hidden]
  kNextnEmbedTokens,     // nextn.embed_tokens.weight     [hidden, vocab]: read by row
  kNextnSharedHeadHead,  // nextn.shared_head_head.weight [hidden, vocab]
  kCount,
};
inline constexpr int kNumLayerTensors = static_cast<int>(LayerTensor::kCount);

enum class TensorNeed : uint8_t {
  kAbsent,    // not read even if the file has it
  kRequired,  // a file without it fails to load, naming it
  kOptional,  // read when the file has it (e.g. a bias some checkpoints of a family carry)
};

// One layer's needs, indexed by LayerTensor.
struct LayerTensorNeeds {
  std::array<TensorNeed, kNumLayerTensors> need{};  // all kAbsent

  TensorNeed& operator[](LayerTensor t) { return need[static_cast<int>(t)]; }
  TensorNeed operator[](LayerTensor t) const { return need[static_cast<int>(t)]; }
};

}  // namespace radixlm::model
