// NomicBertModel checkpoints (nomic-embed-text-v1 / v1.5; config.json "architectures":
// ["NomicBertModel"], model_type "nomic_bert") -> the GGUF metadata and tensor names llama.cpp's
// convert_hf_to_gguf.py writes for them (conversion/bert.py, NomicBertModel): general.architecture
// "nomic-bert", nomic-bert.{block_count (n_layer), context_length, embedding_length (n_embd),
// feed_forward_length (n_inner), attention.head_count (n_head), attention.layer_norm_epsilon
// (layer_norm_epsilon), rope.freq_base (rotary_emb_base), attention.causal false,
// pooling_type (modules.json, as for BertModel)}, tokenizer.ggml.token_type_count. The context
// is 2048 for n_positions 8192 with max_trained_positions 2048 (the converter's rule for v1 and
// v1.5), otherwise the smaller of the two.
// The converter's checks are refusals by name here: activation_function other than swiglu,
// causal, prenorm, any of qkv_proj_bias / mlp_fc1_bias / mlp_fc2_bias, rotary_emb_fraction
// other than 1, interleaved rotary embeddings, rotary_emb_scale_base or rotary_scaling_factor
// set, and mixture-of-experts layers (moe_every_n_layers: nomic-bert-moe, not built).
// The tensors (a "bert." prefix dropped, as the converter's BertModel drops it):
//   embeddings.word_embeddings -> token_embd; embeddings.token_type_embeddings -> token_types;
//   emb_ln -> token_embd_norm; encoder.layers.N.attn.Wqkv -> blk.N.attn_qkv; attn.out_proj ->
//   attn_output; norm1 -> attn_output_norm; mlp.fc11 -> ffn_up; mlp.fc12 -> ffn_gate (SwiGLU:
//   fc2(fc11 x * silu(fc12 x))); mlp.fc2 -> ffn_down; norm2 -> layer_output_norm.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "hf/hf_config.h"
#include "util/status.h"

namespace radixlm::hf {

// `path` is config.json's (its folder holds modules.json, if any).
StatusOr<HfArchitecture> ReadNomicBertConfig(const nlohmann::json& config, const std::string& path);

// The GGUF name of a NomicBertModel tensor; "" for those dropped (rotary inv_freq buffers);
// NotFound naming it otherwise.
StatusOr<std::string> NomicBertTensorName(const std::string& hf_name);

}  // namespace radixlm::hf
