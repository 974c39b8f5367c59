// mistral3 (Ministral 3 / Mistral Small 3.x text models; llama.cpp's src/models/mistral3.cpp):
// llama's block (normal RoPE, llama-3 frequency factors when the file has them) with YaRN RoPE
// scaling read from its own beta / log-multiplier keys, and llama 4's attention temperature:
// after RoPE, Q at position p is multiplied by ln(floor(p / original_context) + 1) *
// attention.temperature_scale + 1.
#include "model/families/family.h"
#include "model/tensor_names.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace mistral3_family {
namespace {

// Biases llama.cpp reads when present; the shared blocks lack them.
constexpr std::string_view kUnsupportedBiases[] = {"attn_output.bias", "ffn_gate.bias",
                                                   "ffn_up.bias", "ffn_down.bias"};

Status Configure(const ArchMetadata& metadata, ModelConfig* c) {
  c->rope_layout = RopeLayout::kNormal;
  c->has_rope_freq_factors = metadata.file().FindTensor(kRopeFreqsName) != nullptr;
  RADIXLM_ASSIGN_OR_RETURN(c->rope_yarn_beta_fast,
                           metadata.PositiveFloatOr("rope.scaling.yarn_beta_fast", 32.0f));
  RADIXLM_ASSIGN_OR_RETURN(c->rope_yarn_beta_slow,
                           metadata.PositiveFloatOr("rope.scaling.yarn_beta_slow", 1.0f));
  RADIXLM_ASSIGN_OR_RETURN(
      const double log_mul,
      metadata.file().GetFloatOr(metadata.Key("rope.scaling.yarn_log_multiplier"), 0.0));
  c->rope_yarn_log_mul = static_cast<float>(log_mul);
  RADIXLM_ASSIGN_OR_RETURN(
      const double temperature,
      metadata.file().GetFloatOr(metadata.Key("attention.temperature_scale"), 0.0));
  if (temperature != 0.0) {
    c->attn_temperature_scale = static_cast<float>(temperature);
    RADIXLM_ASSIGN_OR_RETURN(
        c->attn_temperature_floor,
        metadata.PositiveOr("rope.scaling.original_context_length", c->context_length));
  }
  return RefuseLayerTensors(metadata, c->n_layers, kUnsupportedBiases);
}

constexpr std::string_view kArchitectures[] = {"mistral3"};

}  // namespace
}  // namespace mistral3_family

const ModelFamily& Mistral3Family() {
  static const ModelFamily family{.name = "mistral3",
                                  .architectures = mistral3_family::kArchitectures,
                                  .configure = &mistral3_family::Configure};
  return family;
}

}  // namespace radixlm::model
