// gpt-oss (gpt-oss-20b, gpt-oss-120b; llama.cpp's src/models/openai-moe.cpp, arch "gpt-oss"):
//   * attention with biases on Q, K, V (where the file has them) and on the output, and a
//     learned sink logit per query head (attn_sinks.weight) in every softmax;
//   * sliding-window (attention.sliding_window, 128) and full layers alternating, the first
//     sliding (attention.sliding_window_pattern, default 2), both with NeoX RoPE and the file's
//     scaling (YaRN: factor 32 over 4096 positions) on every layer, the sliding layers' base
//     rope.freq_base_swa where given;
//   * post_attention_norm.weight as the FFN's input norm (no ffn_norm);
//   * a mixture of experts in every layer: the router's logits plus its bias choose the top
//     expert_used_count experts, weighted by the softmax of their logits alone; each expert's
//     gate and up have biases, the activation is the clamped SwiGLU (swiglu_oai: alpha 1.702,
//     limit 7, up + 1), and down has a bias.
// Expert weights are MXFP4 in the published files (any supported type reads).
#include "model/families/family.h"
#include "model/tensor_names.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace gpt_oss_family {
namespace {

Status Configure(const ArchMetadata& m, ModelConfig* c) {
  c->rope_layout = RopeLayout::kNeox;
  RADIXLM_ASSIGN_OR_RETURN(c->sliding_window, m.Positive("attention.sliding_window"));
  const std::string pattern_key = m.Key("attention.sliding_window_pattern");
  if (const gguf::Value* v = m.file().Find(pattern_key); v != nullptr && v->is_array()) {
    return Unimplemented("gpt-oss: a per-layer '" + pattern_key +
                         "' array is not supported (an integer period is)");
  }
  RADIXLM_ASSIGN_OR_RETURN(const int64_t pattern, m.file().GetIntOr(pattern_key, 2));
  if (pattern < 0) {
    return InvalidArgument("model metadata: '" + pattern_key + "' is negative");
  }
  // (0: every layer slides, as in llama.cpp.)
  c->sliding_window_pattern = pattern;
  RADIXLM_ASSIGN_OR_RETURN(c->rope_base_local,
                           m.PositiveFloatOr("rope.freq_base_swa", c->rope_base));
  c->rope_freq_scale_local = c->rope_freq_scale;
  c->rope_yarn_sliding = true;

  RADIXLM_ASSIGN_OR_RETURN(const int64_t expert_ffn, m.Positive("expert_feed_forward_length"));
  RADIXLM_RETURN_IF_ERROR(ReadExperts(m, expert_ffn, /*required=*/true, c));
  c->expert_weights_norm = false;
  c->expert_softmax_after_topk = true;
  c->ffn_activation = FfnActivation::kSwigluOai;
  c->post_attn_norm_is_ffn_norm = true;

  c->layer_tensors.clear();
  for (int64_t i = 0; i < c->n_layers; ++i) {
    LayerTensorNeeds n = StandardLayerTensors(*c);
    n[LayerTensor::kFfnNorm] = TensorNeed::kAbsent;
    for (LayerTensor t :
         {LayerTensor::kPostAttnNorm, LayerTensor::kAttnOutputBias, LayerTensor::kAttnSinks,
          LayerTensor::kFfnGateInpBias, LayerTensor::kFfnGateExpsBias, LayerTensor::kFfnUpExpsBias,
          LayerTensor::kFfnDownExpsBias}) {
      n[t] = TensorNeed::kRequired;
    }
    c->layer_tensors.push_back(n);
  }
  return Status::Ok();
}

constexpr std::string_view kArchitectures[] = {"gpt-oss"};

}  // namespace
}  // namespace gpt_oss_family

const ModelFamily& GptOssFamily() {
  static const ModelFamily family{.name = "gpt-oss",
                                  .architectures = gpt_oss_family::kArchitectures,
                                  .configure = &gpt_oss_family::Configure};
  return family;
}

}  // namespace radixlm::model
