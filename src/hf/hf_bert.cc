#include "hf/hf_bert.h"

#include <filesystem>
#include <fstream>
#include <regex>

#include "hf/json_file.h"

namespace radixlm::hf {
namespace {

namespace fs = std::filesystem;
using gguf::Value;

}  // namespace

StatusOr<uint32_t> SentenceTransformersPooling(const std::string& dir_name) {
  const fs::path dir(dir_name);
  const fs::path modules = dir / "modules.json";
  std::error_code ec;
  if (!fs::is_regular_file(modules, ec)) return 0u;
  std::ifstream in(modules);
  const nlohmann::json list = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!list.is_array()) return InvalidArgument(modules.string() + ": not a JSON list of modules");
  for (const nlohmann::json& m : list) {
    const std::string type = m.is_object() ? m.value("type", std::string()) : "";
    if (!type.ends_with("Pooling")) continue;
    const fs::path config = dir / m.value("path", std::string()) / "config.json";
    RADIXLM_ASSIGN_OR_RETURN(const nlohmann::json p, ReadJsonObject(config.string()));
    if (p.value("pooling_mode_mean_tokens", false)) return 1u;
    if (p.value("pooling_mode_cls_token", false)) return 2u;
    if (p.value("pooling_mode_lasttoken", false)) return 3u;
    const std::string mode = p.value("pooling_mode", std::string());
    if (mode == "mean") return 1u;
    if (mode == "cls") return 2u;
    if (mode == "lasttoken") return 3u;
    return Unimplemented(config.string() + ": only mean, cls and lasttoken pooling are supported");
  }
  return 0u;
}

StatusOr<HfArchitecture> ReadBertConfig(const nlohmann::json& config, const std::string& path) {
  HfArchitecture out;
  out.hf_name = "BertModel";
  const std::string hf_name = config["architectures"][0].get<std::string>();
  const bool roberta = hf_name.starts_with("XLMRoberta");
  if (roberta) out.hf_name = hf_name;
  out.arch = "bert";
  out.model_type = config.value("model_type", std::string());
  out.torch_dtype = config.value("torch_dtype", config.value("dtype", std::string()));
  const std::string pos = config.value("position_embedding_type", std::string("absolute"));
  if (pos != "absolute") {
    return Unimplemented(path + ": position_embedding_type '" + pos +
                         "' (radixlm's bert reads absolute position embeddings)");
  }
  RADIXLM_ASSIGN_OR_RETURN(const int64_t layers,
                           PositiveIntField(config, "num_hidden_layers", path));
  RADIXLM_ASSIGN_OR_RETURN(const int64_t hidden, PositiveIntField(config, "hidden_size", path));
  RADIXLM_ASSIGN_OR_RETURN(const int64_t ffn, PositiveIntField(config, "intermediate_size", path));
  RADIXLM_ASSIGN_OR_RETURN(out.n_heads, PositiveIntField(config, "num_attention_heads", path));
  out.n_kv_heads = out.n_heads;
  RADIXLM_ASSIGN_OR_RETURN(int64_t context,
                           PositiveIntField(config, "max_position_embeddings", path));
  RADIXLM_ASSIGN_OR_RETURN(const int64_t types,
                           PositiveIntField(config, "type_vocab_size", path, roberta ? 1 : 2));
  if (roberta && config.contains("pad_token_id") && config["pad_token_id"].is_number_integer()) {
    // RoBERTa numbers positions from padding_idx + 1: the converter drops the rows before.
    out.position_row_offset = config["pad_token_id"].get<int64_t>() + 1;
    if (out.position_row_offset < 0 || out.position_row_offset >= context) {
      return InvalidArgument(
          path + ": pad_token_id " + std::to_string(out.position_row_offset - 1) +
          " leaves no position of max_position_embeddings " + std::to_string(context));
    }
    context -= out.position_row_offset;
  }
  RADIXLM_ASSIGN_OR_RETURN(out.vocab_size, PositiveIntField(config, "vocab_size", path));
  const double eps = config.contains("layer_norm_eps") && config["layer_norm_eps"].is_number()
                         ? config["layer_norm_eps"].get<double>()
                         : 1e-12;
  RADIXLM_ASSIGN_OR_RETURN(const uint32_t pooling,
                           SentenceTransformersPooling(fs::path(path).parent_path().string()));
  auto& md = out.metadata;
  md.emplace_back("general.architecture", Value::Str("bert"));
  md.emplace_back("bert.block_count", Value::U32(static_cast<uint32_t>(layers)));
  md.emplace_back("bert.context_length", Value::U32(static_cast<uint32_t>(context)));
  md.emplace_back("bert.embedding_length", Value::U32(static_cast<uint32_t>(hidden)));
  md.emplace_back("bert.feed_forward_length", Value::U32(static_cast<uint32_t>(ffn)));
  md.emplace_back("bert.attention.head_count", Value::U32(static_cast<uint32_t>(out.n_heads)));
  md.emplace_back("bert.attention.layer_norm_epsilon", Value::F32(static_cast<float>(eps)));
  md.emplace_back("bert.attention.causal", Value::Bool(false));
  if (pooling > 0) md.emplace_back("bert.pooling_type", Value::U32(pooling));
  md.emplace_back("tokenizer.ggml.token_type_count", Value::U32(static_cast<uint32_t>(types)));
  return out;
}

StatusOr<std::string> BertTensorName(const std::string& hf_name) {
  std::string name = hf_name.starts_with("bert.")      ? hf_name.substr(5)
                     : hf_name.starts_with("roberta.") ? hf_name.substr(8)
                                                       : hf_name;
  if (name.ends_with(".gamma")) name = name.substr(0, name.size() - 6) + ".weight";
  if (name.ends_with(".beta")) name = name.substr(0, name.size() - 5) + ".bias";
  if (name == "embeddings.position_ids" || name.starts_with("pooler.") ||
      name.starts_with("cls.") || name.starts_with("lm_head.") || name.starts_with("classifier.")) {
    return std::string();
  }
  static const std::regex kEmbed(R"(embeddings\.(\w+)\.(weight|bias))");
  static const std::regex kLayer(R"(encoder\.layer\.(\d+)\.(.+)\.(weight|bias))");
  struct Pair {
    const char* hf;
    const char* gguf;
  };
  static constexpr Pair kEmbeddings[] = {{"word_embeddings", "token_embd"},
                                         {"position_embeddings", "position_embd"},
                                         {"token_type_embeddings", "token_types"},
                                         {"LayerNorm", "token_embd_norm"}};
  static constexpr Pair kLayers[] = {{"attention.self.query", "attn_q"},
                                     {"attention.self.key", "attn_k"},
                                     {"attention.self.value", "attn_v"},
                                     {"attention.output.dense", "attn_output"},
                                     {"attention.output.LayerNorm", "attn_output_norm"},
                                     {"intermediate.dense", "ffn_up"},
                                     {"output.dense", "ffn_down"},
                                     {"output.LayerNorm", "layer_output_norm"}};
  std::smatch m;
  if (std::regex_match(name, m, kEmbed)) {
    for (const Pair& p : kEmbeddings) {
      if (m[1].str() == p.hf) return std::string(p.gguf) + "." + m[2].str();
    }
  }
  if (std::regex_match(name, m, kLayer)) {
    for (const Pair& p : kLayers) {
      if (m[2].str() == p.hf) return "blk." + m[1].str() + "." + p.gguf + "." + m[3].str();
    }
  }
  return NotFound("tensor '" + hf_name + "' has no GGUF name for BertModel");
}

}  // namespace radixlm::hf
