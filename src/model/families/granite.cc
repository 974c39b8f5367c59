// granite (IBM Granite 3.x dense; llama.cpp's src/models/granite.cpp): llama's block with four
// multipliers from the metadata: embeddings * embedding_scale, each block's output *
// residual_scale before its residual add, attention.scale as the Q·K scale, and logits divided
// by logit_scale. rope.scaling.finetuned = false turns RoPE off on every layer.
#include "model/families/family.h"
#include "model/tensor_names.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace granite_family {
namespace {

// Granite checkpoints may carry biases on the attention output and the FFN.
constexpr std::string_view kUnsupportedBiases[] = {"attn_output.bias", "ffn_gate.bias",
                                                   "ffn_up.bias", "ffn_down.bias"};

Status Configure(const ArchMetadata& metadata, ModelConfig* c) {
  c->rope_layout = RopeLayout::kNormal;
  c->has_rope_freq_factors = metadata.file().FindTensor(kRopeFreqsName) != nullptr;

  RADIXLM_ASSIGN_OR_RETURN(const float logit_scale, metadata.PositiveFloat("logit_scale"));
  c->output_scale = 1.0f / logit_scale;
  RADIXLM_ASSIGN_OR_RETURN(c->residual_scale, metadata.PositiveFloatOr("residual_scale", 1.0f));
  RADIXLM_ASSIGN_OR_RETURN(c->embedding_scale, metadata.PositiveFloatOr("embedding_scale", 1.0f));
  c->scale_embeddings = c->embedding_scale != 1.0f;
  RADIXLM_ASSIGN_OR_RETURN(c->attention_scale,
                           metadata.PositiveFloatOr("attention.scale", c->attention_scale));
  RADIXLM_ASSIGN_OR_RETURN(bool rope_finetuned,
                           metadata.file().GetBoolOr(metadata.Key("rope.scaling.finetuned"), true));
  if (!rope_finetuned) c->no_rope_layer_interval = 1;

  return RefuseLayerTensors(metadata, c->n_layers, kUnsupportedBiases);
}

constexpr std::string_view kArchitectures[] = {"granite"};

}  // namespace
}  // namespace granite_family

const ModelFamily& GraniteFamily() {
  static const ModelFamily family{.name = "granite",
                                  .architectures = granite_family::kArchitectures,
                                  .configure = &granite_family::Configure};
  return family;
}

}  // namespace radixlm::model
