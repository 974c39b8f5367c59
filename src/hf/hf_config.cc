#include "hf/hf_config.h"

#include <cmath>
#include <string_view>

#include "hf/hf_bert.h"
#include "hf/hf_nomic_bert.h"

namespace radixlm::hf {
namespace {

using gguf::Value;

struct ArchEntry {
  std::string_view hf_name;
  std::string_view arch;
  bool permute_qk;
  bool gemma;
};
constexpr ArchEntry kArchitectures[] = {
    {"LlamaForCausalLM", "llama", true, false},   {"MistralForCausalLM", "llama", true, false},
    {"Qwen2ForCausalLM", "qwen2", false, false},  {"Qwen3ForCausalLM", "qwen3", false, false},
    {"Gemma3ForCausalLM", "gemma3", false, true},
};

class ConfigReader {
 public:
  ConfigReader(const nlohmann::json& j, const std::string& path) : j_(j), path_(path) {}

  // A positive integer field; InvalidArgument naming the field when absent or wrong.
  StatusOr<int64_t> Positive(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end()) return InvalidArgument(path_ + ": missing field \"" + key + "\"");
    if (!it->is_number_integer() || it->get<int64_t>() <= 0) {
      return InvalidArgument(path_ + ": field \"" + key + "\" must be a positive integer");
    }
    return it->get<int64_t>();
  }
  StatusOr<int64_t> PositiveOr(const char* key, int64_t def) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return def;
    return Positive(key);
  }
  StatusOr<double> NumberOr(const char* key, double def) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return def;
    if (!it->is_number())
      return InvalidArgument(path_ + ": field \"" + key + "\" must be a number");
    return it->get<double>();
  }
  bool BoolOr(const char* key, bool def) const {
    const auto it = j_.find(key);
    return it != j_.end() && it->is_boolean() ? it->get<bool>() : def;
  }
  std::string StringOr(const char* key, std::string def) const {
    const auto it = j_.find(key);
    return it != j_.end() && it->is_string() ? it->get<std::string>() : def;
  }
  const nlohmann::json* Object(const char* key) const {
    const auto it = j_.find(key);
    return it != j_.end() && it->is_object() ? &*it : nullptr;
  }

 private:
  const nlohmann::json& j_;
  const std::string& path_;
};

}  // namespace

std::string SupportedHfArchitectures() {
  std::string out;
  for (const ArchEntry& e : kArchitectures) {
    if (!out.empty()) out += ", ";
    out += e.hf_name;
  }
  return out +
         ", BertModel, XLMRobertaModel, XLMRobertaForMaskedLM and NomicBertModel (encoders: "
         "--is-embedding)";
}

StatusOr<HfArchitecture> ReadHfConfig(const nlohmann::json& config, const std::string& path) {
  const auto archs = config.find("architectures");
  if (archs == config.end() || !archs->is_array() || archs->empty() || !(*archs)[0].is_string()) {
    return InvalidArgument(path +
                           ": missing field \"architectures\" (a list naming the model "
                           "class, e.g. [\"LlamaForCausalLM\"])");
  }
  const std::string hf_name = (*archs)[0].get<std::string>();
  if (hf_name == "BertModel" || hf_name == "XLMRobertaModel" ||
      hf_name == "XLMRobertaForMaskedLM") {
    return ReadBertConfig(config, path);  // an encoder: hf_bert.h
  }
  if (hf_name == "NomicBertModel") return ReadNomicBertConfig(config, path);  // hf_nomic_bert.h
  const ArchEntry* entry = nullptr;
  for (const ArchEntry& e : kArchitectures) {
    if (e.hf_name == hf_name) entry = &e;
  }
  if (entry == nullptr) {
    return Unimplemented(path + ": architecture '" + hf_name +
                         "' is not supported in Hugging Face folders; supported: " +
                         SupportedHfArchitectures() + " (or convert it to GGUF)");
  }
  const ConfigReader c(config, path);
  HfArchitecture out;
  out.hf_name = hf_name;
  out.arch = std::string(entry->arch);
  out.model_type = c.StringOr("model_type", "");
  out.permute_qk = entry->permute_qk;
  out.norm_plus_one = entry->gemma;
  out.gemma_naming = entry->gemma;
  out.torch_dtype = c.StringOr("torch_dtype", c.StringOr("dtype", ""));
  const std::string& a = out.arch;
  auto& md = out.metadata;
  md.emplace_back("general.architecture", Value::Str(a));

  RADIXLM_ASSIGN_OR_RETURN(const int64_t layers, c.Positive("num_hidden_layers"));
  RADIXLM_ASSIGN_OR_RETURN(const int64_t hidden, c.Positive("hidden_size"));
  RADIXLM_ASSIGN_OR_RETURN(const int64_t ffn, c.Positive("intermediate_size"));
  RADIXLM_ASSIGN_OR_RETURN(out.n_heads, c.Positive("num_attention_heads"));
  RADIXLM_ASSIGN_OR_RETURN(out.n_kv_heads, c.PositiveOr("num_key_value_heads", out.n_heads));
  RADIXLM_ASSIGN_OR_RETURN(out.vocab_size, c.PositiveOr("vocab_size", 0));
  RADIXLM_ASSIGN_OR_RETURN(const int64_t context,
                           c.PositiveOr("max_position_embeddings", entry->gemma ? 131072 : 4096));
  RADIXLM_ASSIGN_OR_RETURN(const double eps,
                           c.NumberOr("rms_norm_eps", entry->gemma ? 1e-6 : 1e-5));
  out.tie_word_embeddings = c.BoolOr("tie_word_embeddings", entry->gemma);
  md.emplace_back(a + ".block_count", Value::U32(static_cast<uint32_t>(layers)));
  md.emplace_back(a + ".context_length", Value::U32(static_cast<uint32_t>(context)));
  md.emplace_back(a + ".embedding_length", Value::U32(static_cast<uint32_t>(hidden)));
  md.emplace_back(a + ".feed_forward_length", Value::U32(static_cast<uint32_t>(ffn)));
  md.emplace_back(a + ".attention.head_count", Value::U32(static_cast<uint32_t>(out.n_heads)));
  md.emplace_back(a + ".attention.head_count_kv",
                  Value::U32(static_cast<uint32_t>(out.n_kv_heads)));
  md.emplace_back(a + ".attention.layer_norm_rms_epsilon", Value::F32(static_cast<float>(eps)));

  // rope_theta at the top level, or (newer configs) in rope_parameters.
  double theta = entry->gemma ? 1e6 : 10000.0;
  const nlohmann::json* rope_params = c.Object("rope_parameters");
  if (rope_params != nullptr && rope_params->contains("full_attention")) {
    rope_params = &(*rope_params)["full_attention"];
  }
  if (rope_params != nullptr && rope_params->contains("rope_theta") &&
      (*rope_params)["rope_theta"].is_number()) {
    theta = (*rope_params)["rope_theta"].get<double>();
  }
  RADIXLM_ASSIGN_OR_RETURN(theta, c.NumberOr("rope_theta", theta));
  md.emplace_back(a + ".rope.freq_base", Value::F32(static_cast<float>(theta)));

  RADIXLM_ASSIGN_OR_RETURN(const int64_t head_dim,
                           c.PositiveOr("head_dim", entry->gemma ? 256 : hidden / out.n_heads));
  if (head_dim != hidden / out.n_heads || entry->gemma) {
    md.emplace_back(a + ".attention.key_length", Value::U32(static_cast<uint32_t>(head_dim)));
    md.emplace_back(a + ".attention.value_length", Value::U32(static_cast<uint32_t>(head_dim)));
  }
  if (entry->permute_qk) {
    md.emplace_back(a + ".rope.dimension_count", Value::U32(static_cast<uint32_t>(head_dim)));
  }
  if (out.vocab_size > 0 && !entry->gemma) {
    md.emplace_back(a + ".vocab_size", Value::U32(static_cast<uint32_t>(out.vocab_size)));
  }

  // rope_scaling: linear and YaRN as the converter writes them; llama3's frequency factors and
  // other kinds are refused by name rather than run wrong.
  const nlohmann::json* scaling = c.Object("rope_scaling");
  if (scaling == nullptr && rope_params != nullptr && rope_params->contains("rope_type")) {
    scaling = rope_params;
  }
  if (scaling != nullptr) {
    std::string type = scaling->value("rope_type", scaling->value("type", std::string()));
    const double factor = scaling->contains("factor") && (*scaling)["factor"].is_number()
                              ? (*scaling)["factor"].get<double>()
                              : 0.0;
    if (type == "linear" && factor > 0) {
      md.emplace_back(a + ".rope.scaling.type", Value::Str("linear"));
      md.emplace_back(a + ".rope.scaling.factor", Value::F32(static_cast<float>(factor)));
    } else if (type == "yarn" && factor > 0) {
      md.emplace_back(a + ".rope.scaling.type", Value::Str("yarn"));
      md.emplace_back(a + ".rope.scaling.factor", Value::F32(static_cast<float>(factor)));
      if (scaling->contains("original_max_position_embeddings")) {
        md.emplace_back(a + ".rope.scaling.original_context_length",
                        Value::U32((*scaling)["original_max_position_embeddings"].get<uint32_t>()));
      }
      const std::pair<const char*, const char*> yarn_keys[] = {
          {"extrapolation_factor", "rope.scaling.yarn_ext_factor"},
          {"attention_factor", "rope.scaling.attn_factor"},
          {"attn_factor", "rope.scaling.attn_factor"},
          {"beta_fast", "rope.scaling.yarn_beta_fast"},
          {"beta_slow", "rope.scaling.yarn_beta_slow"}};
      for (const auto& [hf_key, gguf_key] : yarn_keys) {
        const std::string key = a + "." + gguf_key;
        bool written = false;
        for (const auto& kv : md) written = written || kv.first == key;
        if (!written && scaling->contains(hf_key) && (*scaling)[hf_key].is_number()) {
          md.emplace_back(key, Value::F32((*scaling)[hf_key].get<float>()));
        }
      }
    } else if (type == "llama3" && out.arch == "llama") {
      // The converter's generate_extra_tensors, in float32: wavelengths shorter than
      // original / high_freq_factor keep their frequency, longer than original /
      // low_freq_factor are divided by factor, and those between are interpolated.
      auto num = [&](const char* key, double def) {
        return scaling->contains(key) && (*scaling)[key].is_number() ? (*scaling)[key].get<double>()
                                                                     : def;
      };
      const float f = static_cast<float>(num("factor", 8.0));
      const float low = static_cast<float>(num("low_freq_factor", 1.0));
      const float high = static_cast<float>(num("high_freq_factor", 4.0));
      const float old_context = static_cast<float>(num("original_max_position_embeddings", 8192));
      const float low_wavelen = old_context / low;
      const float high_wavelen = old_context / high;
      for (int64_t i = 0; i < head_dim; i += 2) {
        const float exponent = static_cast<float>(i) / static_cast<float>(head_dim);
        const float freq = 1.0f / std::pow(static_cast<float>(theta), exponent);
        const float wavelen = static_cast<float>(2 * M_PI) / freq;
        if (wavelen < high_wavelen) {
          out.rope_freq_factors.push_back(1.0f);
        } else if (wavelen > low_wavelen) {
          out.rope_freq_factors.push_back(f);
        } else {
          const float smooth = (old_context / wavelen - low) / (high - low);
          out.rope_freq_factors.push_back(1.0f / ((1 - smooth) / f + smooth));
        }
      }
    } else if (!type.empty() && type != "default") {
      return Unimplemented(path + ": rope_scaling type '" + type +
                           "' is not supported in Hugging Face folders yet (convert it to GGUF)");
    }
  }

  if (entry->gemma) {
    RADIXLM_ASSIGN_OR_RETURN(const int64_t window, c.PositiveOr("sliding_window", 512));
    md.emplace_back(a + ".attention.sliding_window", Value::U32(static_cast<uint32_t>(window)));
    RADIXLM_ASSIGN_OR_RETURN(const double local_base, c.NumberOr("rope_local_base_freq", 10000.0));
    md.emplace_back(a + ".rope.freq_base_swa", Value::F32(static_cast<float>(local_base)));
    RADIXLM_ASSIGN_OR_RETURN(const double softcap, c.NumberOr("final_logit_softcapping", 0.0));
    if (softcap > 0) {
      md.emplace_back(a + ".final_logit_softcapping", Value::F32(static_cast<float>(softcap)));
    }
    RADIXLM_ASSIGN_OR_RETURN(const int64_t pattern, c.PositiveOr("sliding_window_pattern", 6));
    if (pattern != 6) {
      return Unimplemented(path + ": sliding_window_pattern " + std::to_string(pattern) +
                           " (radixlm's gemma3 runs five sliding layers per global one)");
    }
  }
  return out;
}

}  // namespace radixlm::hf
