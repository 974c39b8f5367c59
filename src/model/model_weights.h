// ModelWeights: views of a model's tensors inside a mapped GGUF file.
//
// Matrices (possibly quantized) are WeightMatrix views into the mapping: no copies. Small 1-D
// tensors (norm weights, biases, rope factors) are used as float; when the file stores them in
// F32 they are views too, otherwise (F16/BF16) they are converted once into owned storage.
// The GgufFile must outlive the ModelWeights. Immutable after Load; safe to share across
// threads.
#pragma once

#include <memory>
#include <vector>

#include "gguf/gguf_file.h"
#include "kernels/backend.h"
#include "kernels/matmul.h"
#include "model/model_config.h"
#include "util/status.h"

namespace radixlm::model {

struct LayerWeights {
  const float* attn_norm = nullptr;       // [hidden]
  kernels::WeightMatrix wq;               // rows n_heads*head_dim, cols hidden
  kernels::WeightMatrix wk;               // rows n_kv_heads*head_dim, cols hidden
  kernels::WeightMatrix wv;               // rows n_kv_heads*head_dim, cols hidden
  kernels::WeightMatrix wo;               // rows hidden, cols n_heads*head_dim
  const float* bq = nullptr;              // [n_heads*head_dim] or null
  const float* bk = nullptr;              // [n_kv_heads*head_dim] or null
  const float* bv = nullptr;              // [n_kv_heads*head_dim] or null
  const float* q_norm = nullptr;          // [head_dim] or null
  const float* k_norm = nullptr;          // [head_dim] or null
  const float* post_attn_norm = nullptr;  // [hidden] or null
  const float* ffn_norm = nullptr;        // [hidden]
  kernels::WeightMatrix gate;             // rows ffn, cols hidden
  kernels::WeightMatrix up;               // rows ffn, cols hidden
  kernels::WeightMatrix down;             // rows hidden, cols ffn
  const float* post_ffn_norm = nullptr;   // [hidden] or null
};

struct ModelWeights {
  kernels::WeightMatrix token_embd;  // rows vocab, cols hidden
  kernels::WeightMatrix output;      // rows vocab, cols hidden (token_embd when tied)
  bool tied_output = false;
  const float* output_norm = nullptr;  // [hidden]
  const float* rope_freqs = nullptr;   // [head_dim/2] or null (llama-3 frequency factors)
  std::vector<LayerWeights> layers;    // [n_layers]

  // Finds and checks every tensor `config` needs (presence, shape, type supported by the
  // kernels). Errors name the tensor: "missing tensor 'blk.3.attn_q.weight'".
  // Each matrix goes through backend.prepare_weights once (pool: threads for that; may be
  // null).
  static StatusOr<std::unique_ptr<ModelWeights>> Load(
      const gguf::GgufFile& file, const ModelConfig& config,
      const kernels::KernelBackend& backend = kernels::CpuBackend(), ThreadPool* pool = nullptr);

 private:
  void PrepareMatrices(const kernels::KernelBackend& backend, ThreadPool* pool);

  std::vector<std::unique_ptr<float[]>> owned_;                    // converted 1-D tensors
  std::vector<std::unique_ptr<kernels::PackedWeights>> prepared_;  // backend-prepared copies
  friend class WeightLoader;
};

}  // namespace radixlm::model
