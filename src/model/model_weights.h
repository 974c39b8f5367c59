// ModelWeights: views of a model's tensors inside a mapped GGUF file.
//
// Matrices (possibly quantized) are WeightMatrix views into the mapping: no copies. Small 1-D
// tensors (norm weights, biases, rope factors) are used as float; when the file stores them in
// F32 they are views too, otherwise (F16/BF16) they are converted once into owned storage.
// Where the backend repacks a matrix (prepare_weights), the packed copy is what the forward
// pass reads, and the matrix's pages of the mapping are released from the resident set once it
// is packed (GgufFile::ReleasePages), so the process holds one copy of those weights; the view
// stays valid (a read faults the pages back in: token_embd's rows, read one per token, share
// their bytes with a tied output head). Matrices left unpacked keep their pages.
// The GgufFile must outlive the ModelWeights. Immutable after Load; safe to share across
// threads.
#pragma once

#include <memory>
#include <vector>

#include "gguf/gguf_file.h"
#include "kernels/backend.h"
#include "kernels/matmul.h"
#include "model/load_progress.h"
#include "model/model_config.h"
#include "util/status.h"

namespace radixlm::model {

// One layer's tensors; those the layer does not have (ModelConfig::layer_tensors) are null
// (vectors) or empty (matrices: data null).
class WeightLoader;

struct LayerWeights {
  const float* attn_norm = nullptr;       // [hidden] or null
  kernels::WeightMatrix wq;               // rows n_heads*head_dim, cols hidden
  kernels::WeightMatrix wk;               // rows n_kv_heads*head_dim, cols hidden
  kernels::WeightMatrix wv;               // rows n_kv_heads*head_dim, cols hidden
  kernels::WeightMatrix wo;               // rows hidden, cols n_heads*head_dim
  const float* bq = nullptr;              // [n_heads*head_dim] or null
  const float* bk = nullptr;              // [n_kv_heads*head_dim] or null
  const float* bv = nullptr;              // [n_kv_heads*head_dim] or null
  const float* q_norm = nullptr;          // [head_dim] (per head), [n_heads*head_dim] or null
  const float* k_norm = nullptr;          // [head_dim] (per head), [n_kv_heads*head_dim] or null
  const float* post_attn_norm = nullptr;  // [hidden] or null
  const float* ffn_norm = nullptr;        // [hidden] or null
  kernels::WeightMatrix gate;             // rows ffn, cols hidden
  kernels::WeightMatrix up;               // rows ffn, cols hidden
  kernels::WeightMatrix down;             // rows hidden, cols ffn
  const float* post_ffn_norm = nullptr;   // [hidden] or null
  // A fused attn_qkv.weight as loaded; wq, wk and wv are views of its row ranges, and this is
  // left empty once they are taken (a fused ffn_up.weight is split the same way into gate, up).
  kernels::WeightMatrix wqkv;
  const float* bqkv = nullptr;  // a fused attn_qkv.bias as loaded; bq, bk, bv point into it
  // Per-layer inputs (gemma4; P = ModelConfig::per_layer_input_size), or empty / null.
  kernels::WeightMatrix per_layer_inp_gate;    // rows P, cols hidden
  kernels::WeightMatrix per_layer_proj;        // rows hidden, cols P
  const float* per_layer_post_norm = nullptr;  // [hidden]
  const float* out_scale = nullptr;            // [1]: the layer's output x is multiplied by it
  // gpt-oss, or null: attn_output's bias, the sink logit of each query head, and the biases of
  // the router and of each expert's gate, up and down rows (expert e's at e * rows).
  const float* bo = nullptr;           // [hidden]
  const float* attn_sinks = nullptr;   // [n_heads]
  const float* gate_inp_b = nullptr;   // [n_experts]
  const float* gate_exps_b = nullptr;  // [n_experts, expert_ffn]
  const float* up_exps_b = nullptr;    // [n_experts, expert_ffn]
  const float* down_exps_b = nullptr;  // [n_experts, hidden]
  // Mixture of experts (in place of gate, up, down): the router, and per expert the views of
  // its matrix in the stacked ffn_{gate,up,down}_exps tensors (each prepared on its own, so a
  // step reads only the experts its tokens route to).
  kernels::WeightMatrix gate_inp;                // rows n_experts, cols hidden
  std::vector<kernels::WeightMatrix> gate_exps;  // [n_experts]: rows expert_ffn, cols hidden
  std::vector<kernels::WeightMatrix> up_exps;    // [n_experts]: rows expert_ffn, cols hidden
  std::vector<kernels::WeightMatrix> down_exps;  // [n_experts]: rows hidden, cols expert_ffn
  // Gated DeltaNet (a hybrid model's linear layers; C, V, H, S as in layer_tensor.h), with
  // wqkv (rows C, cols hidden) kept whole as their input projection.
  kernels::WeightMatrix attn_gate;    // rows V, cols hidden
  const float* ssm_conv1d = nullptr;  // [C, conv_kernel]: channel c's taps, oldest first
  const float* ssm_dt = nullptr;      // [H]
  const float* ssm_a = nullptr;       // [H]
  kernels::WeightMatrix ssm_beta;     // rows H, cols hidden
  kernels::WeightMatrix ssm_alpha;    // rows H, cols hidden
  // Or both in one (qwen3next's ssm_ba: rows 2 * H grouped by key head, layer_tensor.h).
  kernels::WeightMatrix ssm_beta_alpha;  // rows 2 * H, cols hidden
  const float* ssm_norm = nullptr;       // [S]
  kernels::WeightMatrix ssm_out;         // rows hidden, cols V
  // Multi-head latent attention (ModelConfig::IsMla; R, QR, K, N, V, H as in layer_tensor.h),
  // with wq (rows H * K) where there is no QR and wo (cols H * V); else empty / null.
  kernels::WeightMatrix wq_a;               // rows QR, cols hidden
  const float* q_a_norm = nullptr;          // [QR]
  kernels::WeightMatrix wq_b;               // rows H * K, cols QR
  kernels::WeightMatrix wkv_a;              // rows R + rope_dims, cols hidden
  const float* kv_a_norm = nullptr;         // [R]
  std::vector<kernels::WeightMatrix> wk_b;  // [H]: rows R, cols N (views of attn_k_b)
  std::vector<kernels::WeightMatrix> wv_b;  // [H]: rows V, cols R (views of attn_v_b)
  // DeepSeekMoE's shared expert (rows / cols S = shared_expert_ffn_size) and selection bias.
  kernels::WeightMatrix gate_shexp;    // rows S, cols hidden
  kernels::WeightMatrix up_shexp;      // rows S, cols hidden
  kernels::WeightMatrix down_shexp;    // rows hidden, cols S
  const float* exp_probs_b = nullptr;  // [n_experts]
  // The shared expert's sigmoid gate (qwen3next, qwen35moe), or null: its output is scaled by
  // sigmoid(xn · gate_inp_shexp) per token.
  const float* gate_inp_shexp = nullptr;  // [hidden]
  // Gemma 4's mixture of experts (ModelConfig::moe_dense_branch), or null / empty: the
  // router's input scale, the experts' input norm, the post-norms of the dense FFN (gate, up,
  // down above) and of the experts' sum, each expert's output scale; and a fused
  // ffn_gate_up_exps as loaded (per expert; gate_exps and up_exps are views of its halves).
  const float* gate_inp_scale = nullptr;            // [hidden]
  const float* ffn_pre_norm_2 = nullptr;            // [hidden]
  const float* ffn_post_norm_1 = nullptr;           // [hidden]
  const float* ffn_post_norm_2 = nullptr;           // [hidden]
  const float* down_exps_scale = nullptr;           // [n_experts]
  std::vector<kernels::WeightMatrix> gate_up_exps;  // [n_experts]: rows 2 * expert_ffn
  // A NextN (multi-token-prediction) layer's own tensors (model/nextn_model.h), or empty /
  // null (embed_tokens and shared_head_head are optional there too).
  kernels::WeightMatrix nextn_eh_proj;            // rows hidden, cols 2 * hidden
  const float* nextn_enorm = nullptr;             // [hidden]
  const float* nextn_hnorm = nullptr;             // [hidden]
  const float* nextn_shared_head_norm = nullptr;  // [hidden]
  kernels::WeightMatrix nextn_embed_tokens;       // rows vocab, cols hidden (read by row)
  kernels::WeightMatrix nextn_shared_head_head;   // rows vocab, cols hidden
};

struct ModelWeights {
  kernels::WeightMatrix token_embd;  // rows vocab, cols hidden
  kernels::WeightMatrix output;      // rows vocab, cols hidden (token_embd when tied)
  bool tied_output = false;
  // token_embd's pages were released (the tied output head packed from it): the embedding's
  // rows are read from the file (GgufFile::ReadBytes), so they do not fault the mapping's pages
  // back in and the process keeps one copy of the table.
  bool embed_reads_file = false;
  const float* output_norm = nullptr;         // [hidden]
  const float* rope_freqs = nullptr;          // [rope_dims/2] or null (llama-3 frequency factors)
  const float* rope_factors_long = nullptr;   // [rope_dims/2] or null (LongRoPE, phi3)
  const float* rope_factors_short = nullptr;  // [rope_dims/2] or null
  // Per-layer inputs (gemma4; P = ModelConfig::per_layer_input_size), or empty / null.
  kernels::WeightMatrix per_layer_token_embd;  // rows vocab, cols P * n_layers (read by row)
  kernels::WeightMatrix per_layer_model_proj;  // rows P * n_layers, cols hidden
  const float* per_layer_proj_norm = nullptr;  // [P]
  std::vector<LayerWeights> layers;            // [n_layers]

  // Finds and checks every tensor `config` needs (config.layer_tensors; presence, shape, type
  // supported by the kernels). Errors name the tensor: "missing tensor 'blk.3.attn_q.weight'".
  // Each matrix goes through backend.prepare_weights once (pool: threads for that; may be
  // null); on_progress (may be null) hears after each one (unthrottled: see
  // LoadProgressThrottle) and once more with done set.
  static StatusOr<std::unique_ptr<ModelWeights>> Load(
      const gguf::GgufFile& file, const ModelConfig& config,
      const kernels::KernelBackend& backend = kernels::CpuBackend(), ThreadPool* pool = nullptr,
      const LoadProgressFn& on_progress = nullptr);
  // Only the layers, config's layer i being the file's block first_block + i (a model's NextN
  // layers after its decoder's); the model-wide tensors stay empty.
  static StatusOr<std::unique_ptr<ModelWeights>> LoadBlocks(
      const gguf::GgufFile& file, const ModelConfig& config, int64_t first_block,
      const kernels::KernelBackend& backend = kernels::CpuBackend(), ThreadPool* pool = nullptr);

  // Bytes the forward pass keeps resident for the weights: the backend-prepared (packed)
  // copies, the matrices it reads unpacked from the mapping, and the 1-D tensors (converted or
  // mapped). The embedding table, read one row per token, counts only as the output head when
  // that is tied to it and unpacked.
  int64_t resident_bytes() const { return resident_bytes_; }
  // Bytes of the mapping released after packing (GgufFile::ReleasePages); 0 for a file not
  // mapped (GgufFile::FromBuffer).
  int64_t released_bytes() const { return released_bytes_; }

 private:
  Status LoadLayers(const gguf::GgufFile& file, const ModelConfig& config, int64_t first_block,
                    WeightLoader& loader);
  void PrepareMatrices(const gguf::GgufFile& file, const kernels::KernelBackend& backend,
                       ThreadPool* pool, const LoadProgressFn& on_progress);

  std::vector<std::unique_ptr<float[]>> owned_;                    // converted 1-D tensors
  std::vector<std::unique_ptr<kernels::PackedWeights>> prepared_;  // backend-prepared copies
  int64_t resident_bytes_ = 0;
  int64_t released_bytes_ = 0;
  friend class WeightLoader;
};

}  // namespace radixlm::model
