#include "model/families/family.h"

#include <algorithm>
#include <vector>

namespace radixlm::model {

// The registry: one line per family (each defined in its own file in this folder).
const ModelFamily& DeepSeek2Family();
const ModelFamily& Gemma2Family();
const ModelFamily& Gemma3Family();
const ModelFamily& Gemma4Family();
const ModelFamily& Glm4Family();
const ModelFamily& GptOssFamily();
const ModelFamily& GraniteFamily();
const ModelFamily& LlamaFamily();
const ModelFamily& Mistral3Family();
const ModelFamily& Olmo2Family();
const ModelFamily& Phi3Family();
const ModelFamily& Qwen2Family();
const ModelFamily& Qwen2VlFamily();
const ModelFamily& Qwen3Family();
const ModelFamily& Qwen3VlFamily();
const ModelFamily& Qwen3VlMoeFamily();
const ModelFamily& Qwen35Family();
const ModelFamily& Qwen35MoeFamily();
const ModelFamily& Qwen3MoeFamily();
const ModelFamily& Qwen3NextFamily();
const ModelFamily& SmolLm3Family();

namespace {

std::span<const ModelFamily* const> Families() {
  static const ModelFamily* const families[] = {
      &DeepSeek2Family(), &Gemma2Family(),  &Gemma3Family(),    &Gemma4Family(),
      &Glm4Family(),      &GptOssFamily(),  &GraniteFamily(),   &LlamaFamily(),
      &Mistral3Family(),  &Olmo2Family(),   &Phi3Family(),      &Qwen2Family(),
      &Qwen2VlFamily(),   &Qwen3Family(),     &Qwen3VlFamily(),   &Qwen3VlMoeFamily(), &Qwen35Family(),  &Qwen35MoeFamily(), &Qwen3MoeFamily(),
      &Qwen3NextFamily(), &SmolLm3Family(),
  };
  return families;
}

}  // namespace

std::string ArchMetadata::Key(std::string_view suffix) const {
  std::string key = arch_;
  key += '.';
  key += suffix;
  return key;
}

StatusOr<int64_t> ArchMetadata::Positive(std::string_view suffix) const {
  const std::string key = Key(suffix);
  auto value = file_.GetInt(key);
  if (!value.ok()) {
    return InvalidArgument("model metadata: " + value.status().message() + " (key '" + key + "')");
  }
  if (*value <= 0) {
    return InvalidArgument("model metadata: '" + key + "' must be positive, got " +
                           std::to_string(*value));
  }
  return *value;
}

StatusOr<int64_t> ArchMetadata::PositiveOr(std::string_view suffix, int64_t def) const {
  if (!Has(suffix)) return def;
  return Positive(suffix);
}

StatusOr<float> ArchMetadata::PositiveFloatOr(std::string_view suffix, float def) const {
  if (!Has(suffix)) return def;
  return PositiveFloat(suffix);
}

StatusOr<float> ArchMetadata::PositiveFloat(std::string_view suffix) const {
  const std::string key = Key(suffix);
  auto value = file_.GetFloat(key);
  if (!value.ok()) {
    return InvalidArgument("model metadata: " + value.status().message() + " (key '" + key + "')");
  }
  if (!(*value > 0.0)) {
    return InvalidArgument("model metadata: '" + key + "' must be positive");
  }
  return static_cast<float>(*value);
}

Status RefuseLayerTensors(const ArchMetadata& metadata, int64_t n_layers,
                          std::span<const std::string_view> suffixes) {
  for (int64_t layer = 0; layer < n_layers; ++layer) {
    for (std::string_view suffix : suffixes) {
      std::string name = "blk." + std::to_string(layer) + ".";
      name += suffix;
      if (metadata.file().FindTensor(name) != nullptr) {
        return Unimplemented("tensor '" + name + "' (" + metadata.arch() + ") is not supported");
      }
    }
  }
  return Status::Ok();
}

StatusOr<std::array<int64_t, 4>> ReadRopeSections(const ArchMetadata& m) {
  const std::string key = m.Key("rope.dimension_sections");
  const gguf::Value* value = m.file().Find(key);
  if (value == nullptr) return InvalidArgument("model metadata: '" + key + "' is missing");
  if (!value->is_array() || value->AsArray().items.size() < 3 ||
      value->AsArray().items.size() > 4) {
    return InvalidArgument("model metadata: '" + key + "' must be an array of 4 integers");
  }
  std::array<int64_t, 4> s = {0, 0, 0, 0};
  for (size_t i = 0; i < value->AsArray().items.size(); ++i) {
    const gguf::Value& item = value->AsArray().items[i];
    if (!item.is_integer() || item.AsInt() < 0) {
      return InvalidArgument("model metadata: '" + key + "' must hold integers >= 0");
    }
    s[i] = item.AsInt();
  }
  if (s[0] + s[1] + s[2] <= 0) {
    return InvalidArgument("model metadata: '" + key + "' has no t, h or w section");
  }
  return s;
}

Status ReadExperts(const ArchMetadata& metadata, int64_t expert_ffn_size, bool required,
                   ModelConfig* c) {
  if (!required && !metadata.Has("expert_count")) return Status::Ok();
  RADIXLM_ASSIGN_OR_RETURN(c->n_experts, metadata.Positive("expert_count"));
  RADIXLM_ASSIGN_OR_RETURN(c->n_experts_used, metadata.Positive("expert_used_count"));
  if (c->n_experts_used > c->n_experts) {
    return InvalidArgument("model metadata: '" + metadata.Key("expert_used_count") + "' (" +
                           std::to_string(c->n_experts_used) + ") exceeds '" +
                           metadata.Key("expert_count") + "' (" + std::to_string(c->n_experts) +
                           ")");
  }
  c->expert_ffn_size = expert_ffn_size;
  c->expert_weights_norm = true;
  return Status::Ok();
}

const ModelFamily* FindModelFamily(std::string_view architecture) {
  for (const ModelFamily* family : Families()) {
    for (std::string_view name : family->architectures) {
      if (name == architecture) return family;
    }
  }
  return nullptr;
}

std::string SupportedArchitectures() {
  std::vector<std::string_view> names;
  for (const ModelFamily* family : Families()) {
    names.insert(names.end(), family->architectures.begin(), family->architectures.end());
  }
  std::sort(names.begin(), names.end());
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace radixlm::model
