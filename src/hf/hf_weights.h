// The tensors of a Hugging Face checkpoint as a GGUF tensor table, named and laid out as
// llama.cpp's convert_hf_to_gguf.py writes them (hf_config.h says per architecture):
//   model.embed_tokens -> token_embd, lm_head -> output, model.norm -> output_norm,
//   model.layers.N.{input_layernorm, self_attn.{q,k,v,o}_proj, self_attn.{q,k}_norm,
//   post_attention_layernorm, pre/post_feedforward_layernorm, mlp.{gate,up,down}_proj}
//   -> blk.N.{attn_norm, attn_q/k/v/output, attn_q/k_norm, ffn_norm | post_attention_norm,
//   ffn_norm / post_ffw_norm, ffn_gate/up/down}.
// Matrices in F32 / F16 / BF16 stay where they are (pointers into the mapped safetensors),
// except Q/K of llama-style models, whose rows are permuted into a copy. Vectors (norms,
// biases) become F32 copies, gemma's norms + 1. With `quantization` ("q8_0", "q4_k", "q6_k")
// every matrix is quantized at load into owned memory, byte for byte as llama.cpp's tools
// quantize it (hf/reference_quant.h): Q8_0 as the converter's --outtype q8_0, Q4_K / Q6_K as
// llama-quantize without an importance matrix. A matrix whose rows do not fit the type's blocks
// falls back to Q8_0, then F16. The rows of a matrix are quantized on `pool` (nullptr: the
// calling thread); the bytes do not depend on its size.
// A tensor whose name is not mapped, of a non-float dtype, or of the wrong rank is an error
// naming it; so is a layer tensor of the family that is missing (checked by the model loader).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "hf/hf_config.h"
#include "hf/safetensors.h"
#include "util/status.h"
#include "util/thread_pool.h"

namespace radixlm::hf {

struct HfWeights {
  std::vector<gguf::TensorInfo> tensors;          // data into the checkpoint or `owned`
  std::vector<std::unique_ptr<uint8_t[]>> owned;  // the copies
  std::string summary;  // "BF16 (184 tensors; 2 permuted, 61 vectors as F32)"
  int64_t owned_bytes = 0;
};

// The GGUF name of an HF tensor; "" for tensors the converter drops (rotary inv_freq).
// NotFound naming it when the tensor has no mapping.
StatusOr<std::string> GgufTensorName(const std::string& hf_name, const HfArchitecture& arch);

// `embed_rows`: the rows of the embedding to keep (gemma drops rows past the tokenizer's
// vocabulary, as the converter does); 0 keeps them all.
StatusOr<HfWeights> MapWeights(const Checkpoint& ckpt, const HfArchitecture& arch,
                               const std::string& quantization, int64_t embed_rows,
                               ThreadPool* pool = nullptr);

}  // namespace radixlm::hf
