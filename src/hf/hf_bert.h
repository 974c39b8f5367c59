// BertModel checkpoints (bge, MiniLM; config.json "architectures": ["BertModel"]) -> the GGUF
// metadata and tensor names llama.cpp's convert_hf_to_gguf.py writes for them (conversion/
// bert.py): general.architecture "bert", bert.{block_count, context_length, embedding_length,
// feed_forward_length, attention.head_count, attention.layer_norm_epsilon, attention.causal
// false}, tokenizer.ggml.token_type_count (type_vocab_size) and bert.pooling_type from a
// sentence-transformers Pooling module (modules.json, its config.json: mean, cls or last),
// absent without one. The tensors:
//   embeddings.{word, position, token_type}_embeddings -> token_embd, position_embd,
//   token_types; embeddings.LayerNorm -> token_embd_norm; encoder.layer.N.attention.self.
//   {query, key, value} -> blk.N.attn_{q, k, v}; attention.output.dense -> attn_output;
//   attention.output.LayerNorm -> attn_output_norm; intermediate.dense -> ffn_up;
//   output.dense -> ffn_down; output.LayerNorm -> layer_output_norm
// (a "bert." prefix dropped, .gamma / .beta read as .weight / .bias; the pooler, position_ids
// and the masked-LM head are dropped, as the converter drops them).
// XLMRobertaModel / XLMRobertaForMaskedLM (bge-m3, multilingual-e5; the converter's
// XLMRobertaModel class) are the same graph: a "roberta." prefix and the lm_head / classifier
// dropped, type_vocab_size 1 by default, and positions numbered from pad_token_id + 1, so the
// first pad_token_id + 1 rows of the position embeddings are skipped (position_row_offset) and
// the context is max_position_embeddings less them. Their Unigram tokenizer.json is
// hf_unigram.cc's.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "hf/hf_config.h"
#include "util/status.h"

namespace radixlm::hf {

// `path` is config.json's (its folder holds modules.json, if any); config["architectures"][0]
// is BertModel or an XLMRoberta* class.
StatusOr<HfArchitecture> ReadBertConfig(const nlohmann::json& config, const std::string& path);

// The GGUF name of a BertModel tensor; "" for those dropped; NotFound naming it otherwise.
StatusOr<std::string> BertTensorName(const std::string& hf_name);

// llama.cpp's LLAMA_POOLING_TYPE_* of the sentence-transformers Pooling module in `dir`
// (modules.json, the module's config.json: mean 1, cls 2, lasttoken 3), as the converter's
// _try_set_pooling_type reads it; 0 without one. Another mode is Unimplemented naming it.
StatusOr<uint32_t> SentenceTransformersPooling(const std::string& dir);

}  // namespace radixlm::hf
