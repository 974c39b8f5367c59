// qwen35 (Qwen 3.5 dense: 0.8B .. 27B; llama.cpp's src/models/qwen35.cpp): a hybrid of gated
// DeltaNet linear-attention layers and full-attention layers (every full_attention_interval-th,
// 4 by default, or as attention.recurrent_layers names them), each followed by a SwiGLU FFN
// whose input norm is post_attention_norm.weight. The full-attention layers project Q and an
// output gate together (attn_q: per head, head_dim query values then head_dim gate values),
// RMS-norm Q and K per head, rotate the first rope.dimension_count values of each head NeoX-style
// (the "interleaved multimodal" RoPE of rope.dimension_sections, which for text, whose positions
// are the same in every section, is that) and multiply the attention output by sigmoid(gate).
// The linear layers' shapes are the ssm.* keys (ModelConfig::linear_layers). MTP (NextN) layers
// after the decoder's (nextn_predict_layers) are not part of the forward pass; the first one
// drafts for --speculative-algorithm NEXTN (model/nextn_model.h). The MoE variant is
// qwen35moe.cc; what the Qwen hybrids share is qwen_hybrid.h.
#include "model/families/family.h"
#include "model/families/qwen_hybrid.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace qwen35_family {
namespace {

Status Configure(const ArchMetadata& m, ModelConfig* c) {
  return ConfigureQwenHybrid(m, QwenHybridLayout{}, c);
}

constexpr std::string_view kArchitectures[] = {"qwen35"};

}  // namespace
}  // namespace qwen35_family

const ModelFamily& Qwen35Family() {
  static const ModelFamily family{.name = "qwen35",
                                  .architectures = qwen35_family::kArchitectures,
                                  .configure = &qwen35_family::Configure};
  return family;
}

}  // namespace radixlm::model
