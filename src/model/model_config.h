// ModelConfig: the hyper-parameters of a decoder-only transformer, read from GGUF metadata.
//
// One struct covers every supported model family; families differ in flags and constants (norm
// placement, biases, Q/K norms, activation, RoPE layout and the layers that skip it, sliding-
// window pattern, soft-caps, scales) that pick the shared blocks of the forward pass once at
// load, so the forward pass never branches on an architecture's name. The generic keys are
// read here; the family that general.architecture names (model/families/family.h) reads its
// own keys and sets its features and its per-layer tensors on top.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf_file.h"
#include "model/layer_tensor.h"
#include "util/status.h"

namespace radixlm::model {

// How RoPE pairs the values of a head (llama.cpp's LLAMA_ROPE_TYPE_NORM / _NEOX):
// kNormal rotates (x[2i], x[2i+1]); kNeox rotates (x[i], x[i + head_dim/2]).
enum class RopeLayout { kNormal, kNeox };

// The gate of a gated FFN: act(gate) * up; kSwigluOai (gpt-oss's experts) is
// min(gate, 7) * sigmoid(1.702 min(gate, 7)) * (clamp(up, -7, 7) + 1), llama.cpp's swiglu_oai.
enum class FfnActivation { kSilu, kGeluTanh, kSwigluOai };

// What differs between the attention of one layer and another (gemma3 interleaves sliding
// window layers with global ones, each with its own RoPE base; smollm3 skips RoPE on some;
// gemma4's kinds have their own head sizes and KV head counts, and its last layers read the K/V
// of an earlier one).
struct LayerAttentionConfig {
  int64_t head_dim = 0;
  int64_t n_kv_heads = 0;
  int64_t rope_dims = 0;   // values of each head RoPE rotates
  int64_t kv_layer = 0;    // the layer whose K/V it attends over (itself unless shared)
  int sliding_window = 0;  // 0: attends to the whole prefix; else to the last N positions
  bool use_rope = true;    // false: Q and K are not rotated (the rope fields are unused)
  float rope_base = 10000.0f;
  float rope_freq_scale = 1.0f;  // positions are multiplied by this (linear rope scaling)
  // Divide per-pair frequencies by rope_freqs.weight, or by LongRoPE's factors.
  bool use_rope_freq_factors = false;
  float rope_ext_factor = 0.0f;   // YaRN's extrapolation mix (1 with YaRN, else 0)
  float rope_attn_factor = 1.0f;  // cos and sin scaled by this (LongRoPE, YaRN)
};

// The most taps of a linear layer's causal convolution (real models have 4).
inline constexpr int64_t kMaxConvKernel = 16;

// Every member has a default initializer: tests build configs with designated initializers
// under -Wmissing-field-initializers.
struct ModelConfig {
  std::string arch = "";  // the family's name (model/families/): "gemma3", "llama", ...

  int64_t n_layers = 0;
  int64_t hidden_size = 0;  // embedding_length
  int64_t ffn_size = 0;     // feed_forward_length
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;    // key_length == value_length (checked)
  int64_t vocab_size = 0;  // rows of token_embd
  int64_t context_length = 0;
  float rms_norm_eps = 1e-6f;

  // RoPE.
  RopeLayout rope_layout = RopeLayout::kNormal;
  // Values of each head RoPE rotates (rope.dimension_count): the first rope_dims, the rest pass
  // through (partial rotary; with kNormal layout only). Per-pair factors have rope_dims / 2.
  int64_t rope_dims = 0;
  float rope_base = 10000.0f;          // rope.freq_base (global layers where some slide)
  float rope_base_local = 10000.0f;    // sliding-window layers
  float rope_freq_scale = 1.0f;        // 1 / rope.scaling.factor for "linear" scaling
  float rope_freq_scale_local = 1.0f;  // sliding-window layers (gemma3: never scaled)
  bool has_rope_freq_factors = false;  // a rope_freqs.weight tensor (llama-3 scaling) exists
  // LongRoPE (phi3): > 0 when the file has rope_factors_{long,short}.weight; the long factors
  // apply when the context the model runs with exceeds this (rope.scaling.
  // original_context_length), as llama.cpp picks them.
  int64_t rope_original_context = 0;
  float rope_attn_factor = 1.0f;  // cos and sin multiplied by this (rope.scaling.attn_factor)
  // YaRN (rope.scaling.type "yarn", on the global layers): rope_freq_scale is 1 / factor, and
  // the correction range comes from the original context and the betas (llama.cpp's
  // defaults; mistral3 reads its own), the magnitude from yarn_log_multiplier.
  bool rope_yarn = false;
  bool rope_yarn_sliding = false;          // the sliding layers' RoPE is YaRN's too (gpt-oss)
  int64_t rope_yarn_original_context = 0;  // rope.scaling.original_context_length
  float rope_yarn_beta_fast = 32.0f;
  float rope_yarn_beta_slow = 1.0f;
  float rope_yarn_log_mul = 0.0f;
  // DeepSeek V2's rule (llama.cpp's TAG_DEEPSEEK2_YARN_LOG_MUL_FIX): YaRN's mscale is
  // rope_yarn_log_mul too, so the rotation's magnitude cancels out and the model scales the
  // attention scores by the square of it instead (attention_scale).
  bool rope_yarn_mscale_all_dims = false;
  // > 0: layer i has no RoPE iff (i + 1) % no_rope_layer_interval == 0 (smollm3: every 4th).
  int64_t no_rope_layer_interval = 0;
  // M-RoPE (qwen2vl's rope.dimension_sections, model/rotary.h): pairs of each head by section
  // take a token's t, h or w position; all 0: plain RoPE. The positions come with the batch
  // (SequenceInput::rope_positions); text alone gives every section the same one.
  std::array<int64_t, 3> mrope_sections = {0, 0, 0};
  bool mrope() const { return mrope_sections[0] + mrope_sections[1] + mrope_sections[2] > 0; }
  // qwen3vl's interleaved M-RoPE (llama.cpp's LLAMA_ROPE_TYPE_IMROPE): the sections alternate
  // t, h, w pair by pair instead of lying one after the other, and pairs past 3 * a section's
  // size (sectors counted modulo the four sections' sum) take the fourth position, which
  // llama.cpp sets to 0 for text and images alike (model/rotary.h).
  bool mrope_interleaved = false;
  int64_t mrope_section_e = 0;  // the fourth section of rope.dimension_sections
  // qwen3vl's deepstack: an image's rows (EmbeddingSpan) carry hidden_size * (1 +
  // n_deepstack_layers) values; after layer k < n_deepstack_layers, slice k + 1 of its row is
  // added to each image token's hidden state (text rows: nothing, llama.cpp's zero padding).
  int64_t n_deepstack_layers = 0;
  int64_t EmbeddingRowSize() const { return hidden_size * (1 + n_deepstack_layers); }

  // Sliding window: layer i is a sliding-window layer iff sliding_window > 0 and
  // sliding_layers[i] when sliding_layers is not empty, else
  // (sliding_window_pattern == 0 || (i + 1) % sliding_window_pattern != 0).
  int64_t sliding_window = 0;
  int64_t sliding_window_pattern = 0;
  std::vector<uint8_t> sliding_layers = {};  // [n_layers] or empty (gemma4's per-layer array)

  // Per-layer shapes where layers differ (gemma4); 0 or empty: the uniform value.
  int64_t head_dim_swa = 0;   // sliding-window layers' head dimension (attention.key_length_swa)
  int64_t rope_dims_swa = 0;  // their rotated values (rope.dimension_count_swa)
  std::vector<int64_t> layer_n_kv_heads = {};  // [n_layers]: head_count_kv as an array
  std::vector<int64_t> layer_ffn_size = {};    // [n_layers]: feed_forward_length as an array
  // > 0: layers from this index on compute no K/V of their own and attend over those of layer
  // n_kv_layers - 1 (global) or n_kv_layers - 2 (sliding), as llama.cpp shares them (gemma4's
  // attention.shared_kv_layers).
  int64_t n_kv_layers = 0;

  // Norms (all RMSNorm with rms_norm_eps).
  bool pre_norms = true;         // attn_norm / ffn_norm on each block's input (olmo2: none)
  bool post_norms = false;       // post_attention_norm / post_ffw_norm on each block's output
  bool qk_norm = false;          // RMSNorm of Q and K before RoPE
  bool qk_norm_per_head = true;  // over each head (gemma3, qwen3) or each whole row (olmo2)
  bool v_norm = false;           // RMSNorm of each V head, without a weight (gemma4)

  // Attention.
  bool fused_qkv = false;        // one attn_qkv.weight (the file has it; llama.cpp's rule)
  bool qkv_bias = false;         // qwen2: attn_{q,k,v}.bias
  float attention_scale = 1.0f;  // multiplies q·k
  // Gemma's graph multiplies Q by attention_scale before Q·K (llama.cpp scales Qcur); the
  // others scale the scores. Same math, different rounding once Q is stored in half precision.
  bool scale_query = false;
  float attn_logit_softcap = 0.0f;  // > 0: scores become cap * tanh(score / cap) (gemma2)
  // > 0: Q of the token at position p is multiplied by
  // ln(floor((p + attn_temperature_offset) / attn_temperature_floor) + 1) * this + 1 after RoPE
  // (llama 4's attention temperature; mistral3).
  float attn_temperature_scale = 0.0f;
  int64_t attn_temperature_floor = 0;
  float attn_temperature_offset = 0.0f;

  FfnActivation ffn_activation = FfnActivation::kSilu;
  bool fused_gate_up = false;  // ffn_up.weight holds the gate's rows then the up's (phi3)

  // Mixture of experts (qwen3moe, Mixtral; llama.cpp's build_moe_ffn with softmax gating):
  // with n_experts > 0 every layer's FFN is n_experts gated FFNs of expert_ffn_size; a router
  // (ffn_gate_inp) gives each token a softmax over them, the token goes through the
  // n_experts_used most probable, and its output is their sum weighted by those probabilities
  // (divided by their sum with expert_weights_norm, then times expert_weights_scale).
  int64_t n_experts = 0;        // expert_count
  int64_t n_experts_used = 0;   // expert_used_count
  int64_t expert_ffn_size = 0;  // rows of each expert's gate and up
  bool expert_weights_norm = true;
  float expert_weights_scale = 1.0f;
  // gpt-oss (llama.cpp's SOFTMAX_WEIGHT gating): the experts are the top n_experts_used of the
  // router's logits (plus ffn_gate_inp.bias where the layer has it), their weights the softmax
  // over those chosen logits alone.
  bool expert_softmax_after_topk = false;
  // DeepSeekMoE (deepseek2): kSigmoid scores each expert sigmoid(logit) instead of the softmax;
  // a layer's exp_probs_b.bias, where it has one, is added to the scores to choose the experts
  // (the weights stay the unbiased scores). With n_expert_groups > 1 the experts form that many
  // equal groups, each scored by the sum of its two best (biased) scores, and a token chooses
  // only among the experts of its n_expert_groups_used best groups.
  enum class ExpertGating { kSoftmax, kSigmoid };
  ExpertGating expert_gating = ExpertGating::kSoftmax;
  int64_t n_expert_groups = 0;
  int64_t n_expert_groups_used = 0;
  // > 0: MoE layers also have a shared expert of this width (ffn_{gate,up,down}_shexp: all of
  // expert_shared_count shared experts in one), whose output is added to the routed experts'.
  int64_t shared_expert_ffn_size = 0;
  // Gemma 4 (26B-A4B; llama.cpp's gemma4 graph): a MoE layer (one with ffn_gate_inp) runs its
  // dense FFN (ffn_gate / up / down on ffn_norm(x)) beside the experts and adds the two, each
  // RMS-normed by its own post-norm (post_ffw_norm_1 / _2), before post_ffw_norm. The experts
  // read pre_ffw_norm_2(x); the router reads RMSNorm(x) (no weight) / sqrt(hidden) times
  // ffn_gate_inp.scale. Each expert's output is scaled by ffn_down_exps.scale where given.
  bool moe_dense_branch = false;

  // Multi-head latent attention (deepseek2; llama.cpp's MLA in its absorbed form). With
  // mla_kv_rank > 0, per layer and token xn · attn_kv_a_mqaᵀ gives a latent of mla_kv_rank
  // values (RMS-normed by attn_kv_a_norm) and rope_dims key values shared by every head
  // (roped, kNormal pairs); Q is n_heads heads of mla_key_dim values from attn_q, or from
  // attn_q_a, its RMSNorm attn_q_a_norm and attn_q_b (mla_q_rank > 0): per head the first
  // mla_key_dim - rope_dims values ("nope") then rope_dims roped ones. The cache holds one row
  // per token of head_dim = mla_kv_rank + rope_dims values, [latent | roped key], n_kv_heads 1,
  // and no V plane (V is the row's first mla_kv_rank values). Each head's nope part is absorbed
  // into the latent space by attn_k_b (per head [mla_kv_rank, nope]); the attention runs with
  // Q = [absorbed nope | roped part] over those rows, and each head's output latent goes back
  // through attn_v_b (per head [mla_value_dim, mla_kv_rank]) before attn_output.
  int64_t mla_kv_rank = 0;    // attention.kv_lora_rank
  int64_t mla_q_rank = 0;     // attention.q_lora_rank (0: plain attn_q)
  int64_t mla_key_dim = 0;    // attention.key_length_mla: nope + rope_dims
  int64_t mla_value_dim = 0;  // attention.value_length_mla

  // Embeddings, residual stream, logits.
  bool scale_embeddings = false;  // embeddings * embedding_scale (gemma: sqrt(hidden))
  float embedding_scale = 1.0f;
  float residual_scale = 1.0f;       // each block's output * this before the add (granite)
  float output_scale = 1.0f;         // logits * this (granite: 1 / logit_scale)
  float final_logit_softcap = 0.0f;  // > 0: logits become cap * tanh(logits / cap) (gemma2)
  // > 0: per-layer inputs of this width (gemma4): per token, per_layer_token_embd's row (all
  // layers' inputs) * sqrt(width), plus the RMS-normed projection of the scaled embedding
  // through per_layer_model_proj / sqrt(hidden), all over sqrt(2); layer i's slice enters the
  // layer's kPerLayer* tensors.
  int64_t per_layer_input_size = 0;

  // Hybrid linear attention (qwen35: llama.cpp's gated DeltaNet layers between full-attention
  // ones). With linear_layers non-empty, layer i is a linear layer iff linear_layers[i]: it
  // has no K/V, and per sequence it keeps a fixed-size state (recurrent_state.h) instead. Its
  // input projection attn_qkv gives conv_channels = 2 * ssm_n_k_heads * ssm_state_size +
  // ssm_inner_size values (Q, K, V) that go through a causal depthwise convolution of
  // ssm_conv_kernel taps and SiLU; Q and K are L2-normalised per head, and the delta rule updates
  // each of the ssm_n_v_heads heads' [ssm_state_size, ssm_state_size] state (V head h reads Q/K
  // head h % ssm_n_k_heads, or h / (ssm_n_v_heads / ssm_n_k_heads) with ssm_grouped_heads). Keys:
  // ssm.conv_kernel, ssm.state_size, ssm.group_count (K heads), ssm.time_step_rank (V heads),
  // ssm.inner_size (V heads * state size).
  std::vector<uint8_t> linear_layers = {};  // [n_layers] or empty
  int64_t ssm_conv_kernel = 0;              // <= kMaxConvKernel
  int64_t ssm_state_size = 0;
  int64_t ssm_n_k_heads = 0;
  int64_t ssm_n_v_heads = 0;
  int64_t ssm_inner_size = 0;
  // qwen3next: the converter keeps the checkpoint's value heads grouped by key head (llama.cpp
  // repeats each Q/K head for its group); qwen35 and qwen35moe files have them tiled.
  bool ssm_grouped_heads = false;
  // The full-attention layers' attn_q holds, per head, head_dim query values then head_dim gate
  // values; the attention output is multiplied by sigmoid(gate) before attn_output (qwen35).
  bool attn_output_gate = false;
  // post_attention_norm.weight is the FFN block's input norm (qwen35 has no ffn_norm): the
  // residual stream after attention is normed by it, not the attention's output.
  bool post_attn_norm_is_ffn_norm = false;

  // The tensors of each layer ([n_layers]): those the flags above imply (StandardLayerTensors
  // in tensor_names.h) unless the family says otherwise.
  std::vector<LayerTensorNeeds> layer_tensors = {};

  // Multi-token-prediction layers after the decoder's (<arch>.nextn_predict_layers; block_count
  // counts them, n_layers does not). The forward pass never runs them; a family that can run
  // its first one as a speculative draft (model/nextn_model.h) sets nextn_tensors to the
  // tensors of block n_layers (with has_nextn_layer), the others leave it false.
  int64_t nextn_layers = 0;
  bool has_nextn_layer = false;
  LayerTensorNeeds nextn_tensors = {};

  // Widths of Q and K/V rows where every layer has the same (else the global layers').
  int64_t q_size() const { return n_heads * head_dim; }
  int64_t kv_size() const { return n_kv_heads * head_dim; }
  // Parameters a token's forward pass reads (every weight but the unrouted experts'), and all
  // of them; the same for a dense model. Counted from the shapes, embedding and head included.
  int64_t ActiveParameters() const;
  int64_t TotalParameters() const;
  bool IsSlidingLayer(int64_t layer) const;
  bool IsMla() const { return mla_kv_rank > 0; }
  int64_t MlaNopeDim() const { return mla_key_dim - rope_dims; }
  // K/V planes of each layer's cache rows: 1 for a latent cache (MLA), else 2.
  int64_t KvPlanes() const { return IsMla() ? 1 : 2; }
  bool IsHybrid() const { return !linear_layers.empty(); }
  bool IsLinearLayer(int64_t layer) const { return IsHybrid() && linear_layers[layer] != 0; }
  // A linear layer's Q, K, V channels (attn_qkv's rows, the convolution's channels).
  int64_t LinearConvChannels() const { return 2 * ssm_n_k_heads * ssm_state_size + ssm_inner_size; }
  LayerAttentionConfig LayerAttention(int64_t layer) const;
  int64_t LayerQSize(int64_t layer) const;   // n_heads * the layer's head_dim
  int64_t LayerKvSize(int64_t layer) const;  // the layer's n_kv_heads * head_dim (0: linear)
  int64_t LayerFfnSize(int64_t layer) const;
  // The widest of any layer (scratch sizes).
  int64_t MaxQSize() const;
  int64_t MaxKvSize() const;
  int64_t MaxFfnSize() const;
  int64_t MaxHeadDim() const;

  // Reads and validates the config. An architecture no family handles gives Unimplemented
  // naming it and the supported ones; missing or inconsistent keys give InvalidArgument
  // naming the key.
  static StatusOr<ModelConfig> FromGguf(const gguf::GgufFile& file);

  std::string DebugString() const;
};

}  // namespace radixlm::model
