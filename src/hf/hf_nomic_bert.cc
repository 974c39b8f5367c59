#include "hf/hf_nomic_bert.h"

#include <algorithm>
#include <filesystem>
#include <regex>

#include "hf/hf_bert.h"
#include "hf/json_file.h"

namespace radixlm::hf {
namespace {

namespace fs = std::filesystem;
using gguf::Value;

// `key` must be absent or equal to `want` (the converter's assertions); Unimplemented naming
// the field and its value otherwise.
Status Expect(const nlohmann::json& j, const char* key, const nlohmann::json& want,
              const std::string& path, const char* why) {
  const auto it = j.find(key);
  if (it == j.end() || *it == want) return Status::Ok();
  return Unimplemented(path + ": NomicBertModel with " + key + " " + it->dump() + " (" + why +
                       "; radixlm's nomic-bert reads " + want.dump() + ")");
}

}  // namespace

StatusOr<HfArchitecture> ReadNomicBertConfig(const nlohmann::json& config,
                                             const std::string& path) {
  if (config.contains("moe_every_n_layers") && !config["moe_every_n_layers"].is_null() &&
      config["moe_every_n_layers"] != 0) {
    return Unimplemented(path +
                         ": NomicBertModel with moe_every_n_layers (nomic-bert-moe, "
                         "nomic-embed-text-v2-moe) is not built in radixlm");
  }
  RADIXLM_RETURN_IF_ERROR(
      Expect(config, "activation_function", "swiglu", path, "the FFN's activation"));
  RADIXLM_RETURN_IF_ERROR(Expect(config, "causal", false, path, "causal attention"));
  RADIXLM_RETURN_IF_ERROR(Expect(config, "prenorm", false, path, "norms before the blocks"));
  for (const char* bias : {"qkv_proj_bias", "mlp_fc1_bias", "mlp_fc2_bias"}) {
    RADIXLM_RETURN_IF_ERROR(Expect(config, bias, false, path, "bias tensors"));
  }
  RADIXLM_RETURN_IF_ERROR(
      Expect(config, "rotary_emb_fraction", 1.0, path, "rotary embeddings on part of a head"));
  RADIXLM_RETURN_IF_ERROR(
      Expect(config, "rotary_emb_interleaved", false, path, "interleaved rotary pairs"));
  RADIXLM_RETURN_IF_ERROR(
      Expect(config, "rotary_emb_scale_base", nullptr, path, "XPos-scaled rotary embeddings"));
  RADIXLM_RETURN_IF_ERROR(
      Expect(config, "rotary_scaling_factor", nullptr, path, "scaled rotary embeddings"));

  HfArchitecture out;
  out.hf_name = "NomicBertModel";
  out.arch = "nomic-bert";
  out.model_type = config.value("model_type", std::string());
  out.torch_dtype = config.value("torch_dtype", config.value("dtype", std::string()));
  RADIXLM_ASSIGN_OR_RETURN(const int64_t layers, PositiveIntField(config, "n_layer", path));
  RADIXLM_ASSIGN_OR_RETURN(const int64_t hidden, PositiveIntField(config, "n_embd", path));
  RADIXLM_ASSIGN_OR_RETURN(const int64_t ffn, PositiveIntField(config, "n_inner", path));
  RADIXLM_ASSIGN_OR_RETURN(out.n_heads, PositiveIntField(config, "n_head", path));
  out.n_kv_heads = out.n_heads;
  RADIXLM_ASSIGN_OR_RETURN(const int64_t n_positions,
                           PositiveIntField(config, "n_positions", path));
  RADIXLM_ASSIGN_OR_RETURN(const int64_t trained,
                           PositiveIntField(config, "max_trained_positions", path, 2048));
  const int64_t context =
      n_positions == 8192 && trained == 2048 ? 2048 : std::min(n_positions, trained);
  RADIXLM_ASSIGN_OR_RETURN(const int64_t types,
                           PositiveIntField(config, "type_vocab_size", path, 2));
  RADIXLM_ASSIGN_OR_RETURN(out.vocab_size, PositiveIntField(config, "vocab_size", path));
  auto number = [&](const char* key, double def) {
    return config.contains(key) && config[key].is_number() ? config[key].get<double>() : def;
  };
  const double eps = number("layer_norm_epsilon", 1e-12);
  const double rope_base = number("rotary_emb_base", 10000.0);
  RADIXLM_ASSIGN_OR_RETURN(const uint32_t pooling,
                           SentenceTransformersPooling(fs::path(path).parent_path().string()));
  auto& md = out.metadata;
  const std::string p = "nomic-bert.";
  md.emplace_back("general.architecture", Value::Str(out.arch));
  md.emplace_back(p + "block_count", Value::U32(static_cast<uint32_t>(layers)));
  md.emplace_back(p + "context_length", Value::U32(static_cast<uint32_t>(context)));
  md.emplace_back(p + "embedding_length", Value::U32(static_cast<uint32_t>(hidden)));
  md.emplace_back(p + "feed_forward_length", Value::U32(static_cast<uint32_t>(ffn)));
  md.emplace_back(p + "attention.head_count", Value::U32(static_cast<uint32_t>(out.n_heads)));
  md.emplace_back(p + "attention.layer_norm_epsilon", Value::F32(static_cast<float>(eps)));
  md.emplace_back(p + "rope.freq_base", Value::F32(static_cast<float>(rope_base)));
  md.emplace_back(p + "attention.causal", Value::Bool(false));
  if (pooling > 0) md.emplace_back(p + "pooling_type", Value::U32(pooling));
  md.emplace_back("tokenizer.ggml.token_type_count", Value::U32(static_cast<uint32_t>(types)));
  return out;
}

StatusOr<std::string> NomicBertTensorName(const std::string& hf_name) {
  const std::string name = hf_name.starts_with("bert.") ? hf_name.substr(5) : hf_name;
  if (name.find("rotary_emb.inv_freq") != std::string::npos) return std::string();
  static const std::regex kTop(
      R"((embeddings\.word_embeddings|embeddings\.token_type_embeddings|emb_ln)\.(weight|bias))");
  static const std::regex kLayer(R"(encoder\.layers\.(\d+)\.(.+)\.(weight|bias))");
  struct Pair {
    const char* hf;
    const char* gguf;
  };
  static constexpr Pair kTops[] = {{"embeddings.word_embeddings", "token_embd"},
                                   {"embeddings.token_type_embeddings", "token_types"},
                                   {"emb_ln", "token_embd_norm"}};
  static constexpr Pair kLayers[] = {
      {"attn.Wqkv", "attn_qkv"},     {"attn.out_proj", "attn_output"},
      {"norm1", "attn_output_norm"}, {"mlp.fc11", "ffn_up"},
      {"mlp.fc12", "ffn_gate"},      {"mlp.fc2", "ffn_down"},
      {"norm2", "layer_output_norm"}};
  std::smatch m;
  if (std::regex_match(name, m, kTop)) {
    for (const Pair& p : kTops) {
      if (m[1].str() == p.hf) return std::string(p.gguf) + "." + m[2].str();
    }
  }
  if (std::regex_match(name, m, kLayer)) {
    for (const Pair& p : kLayers) {
      if (m[2].str() == p.hf) return "blk." + m[1].str() + "." + p.gguf + "." + m[3].str();
    }
  }
  return NotFound("tensor '" + hf_name + "' has no GGUF name for NomicBertModel");
}

}  // namespace radixlm::hf
