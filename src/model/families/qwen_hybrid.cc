#include "model/families/qwen_hybrid.h"

#include "model/tensor_names.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace qwen_hybrid {
namespace {

// attention.recurrent_layers (one bool per layer), else every layer but each
// full_attention_interval-th.
StatusOr<std::vector<uint8_t>> ReadLinearLayers(const ArchMetadata& m, int64_t n_layers) {
  std::vector<uint8_t> out;
  const std::string key = m.Key("attention.recurrent_layers");
  if (const gguf::Value* value = m.file().Find(key); value != nullptr) {
    if (!value->is_array() || static_cast<int64_t>(value->AsArray().items.size()) < n_layers) {
      return InvalidArgument("model metadata: '" + key +
                             "' must be an array of one bool per layer");
    }
    for (int64_t i = 0; i < n_layers; ++i) {
      const gguf::Value& item = value->AsArray().items[i];
      if (!item.is_bool() && !item.is_integer()) {
        return InvalidArgument("model metadata: '" + key + "' must hold bools");
      }
      out.push_back((item.is_bool() ? item.AsBool() : item.AsInt() != 0) ? 1 : 0);
    }
  } else {
    RADIXLM_ASSIGN_OR_RETURN(const int64_t interval, m.PositiveOr("full_attention_interval", 4));
    for (int64_t i = 0; i < n_layers; ++i) out.push_back((i + 1) % interval != 0 ? 1 : 0);
  }
  return out;
}

// rope.dimension_sections: for text every section sees the token's position except the fourth,
// which sees 0; only sections where no rotated pair falls in the fourth are supported (every
// Qwen 3.5 checkpoint's). Mirrors ggml's interleaved M-RoPE assignment of pairs to sections.
Status CheckRopeSections(const ArchMetadata& m, int64_t rope_dims) {
  const std::string key = m.Key("rope.dimension_sections");
  const gguf::Value* value = m.file().Find(key);
  if (value == nullptr) return Status::Ok();  // plain NeoX RoPE
  if (!value->is_array() || value->AsArray().items.size() < 3) {
    return InvalidArgument("model metadata: '" + key + "' must be an array of 4 integers");
  }
  int64_t s[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < 4 && i < value->AsArray().items.size(); ++i) {
    const gguf::Value& item = value->AsArray().items[i];
    if (!item.is_integer() || item.AsInt() < 0) {
      return InvalidArgument("model metadata: '" + key + "' must hold integers >= 0");
    }
    s[i] = item.AsInt();
  }
  const int64_t total = s[0] + s[1] + s[2] + s[3];
  if (total <= 0) return InvalidArgument("model metadata: '" + key + "' sums to 0");
  for (int64_t pair = 0; pair < rope_dims / 2; ++pair) {
    const int64_t sector = pair % total;
    const bool positional = (sector % 3 == 0 && sector < 3 * s[0]) ||
                            (sector % 3 == 1 && sector < 3 * s[1]) ||
                            (sector % 3 == 2 && sector < 3 * s[2]);
    if (!positional) {
      return Unimplemented("model metadata: '" + key + "' puts rotated pair " +
                           std::to_string(pair) +
                           " in the fourth section, which text positions do not drive");
    }
  }
  return Status::Ok();
}

Status ReadSsmShapes(const ArchMetadata& m, ModelConfig* c) {
  RADIXLM_ASSIGN_OR_RETURN(c->ssm_conv_kernel, m.Positive("ssm.conv_kernel"));
  if (c->ssm_conv_kernel > kMaxConvKernel) {
    return Unimplemented("model metadata: '" + m.Key("ssm.conv_kernel") + "' is " +
                         std::to_string(c->ssm_conv_kernel) + "; at most " +
                         std::to_string(kMaxConvKernel) + " taps are supported");
  }
  RADIXLM_ASSIGN_OR_RETURN(c->ssm_state_size, m.Positive("ssm.state_size"));
  RADIXLM_ASSIGN_OR_RETURN(c->ssm_n_k_heads, m.Positive("ssm.group_count"));
  RADIXLM_ASSIGN_OR_RETURN(c->ssm_n_v_heads, m.Positive("ssm.time_step_rank"));
  RADIXLM_ASSIGN_OR_RETURN(c->ssm_inner_size, m.Positive("ssm.inner_size"));
  if (c->ssm_inner_size != c->ssm_n_v_heads * c->ssm_state_size) {
    return Unimplemented("model metadata: '" + m.Key("ssm.inner_size") + "' (" +
                         std::to_string(c->ssm_inner_size) + ") must be '" +
                         m.Key("ssm.time_step_rank") + "' * '" + m.Key("ssm.state_size") +
                         "' (value heads as wide as key heads)");
  }
  if (c->ssm_n_v_heads % c->ssm_n_k_heads != 0) {
    return InvalidArgument("model metadata: '" + m.Key("ssm.time_step_rank") +
                           "' must be a multiple of '" + m.Key("ssm.group_count") + "'");
  }
  return Status::Ok();
}

// The routed experts (expert_feed_forward_length wide, else llama.cpp's fallback
// feed_forward_length / expert_used_count) and the shared expert
// (expert_shared_feed_forward_length, else feed_forward_length).
Status ReadQwenExperts(const ArchMetadata& m, ModelConfig* c) {
  RADIXLM_ASSIGN_OR_RETURN(const int64_t used, m.Positive("expert_used_count"));
  RADIXLM_ASSIGN_OR_RETURN(const int64_t expert_ffn,
                           m.PositiveOr("expert_feed_forward_length", c->ffn_size / used));
  RADIXLM_RETURN_IF_ERROR(ReadExperts(m, expert_ffn, /*required=*/true, c));
  RADIXLM_ASSIGN_OR_RETURN(c->shared_expert_ffn_size,
                           m.PositiveOr("expert_shared_feed_forward_length", c->ffn_size));
  return Status::Ok();
}

void SetFfnTensors(const ArchMetadata& m, const ModelConfig& c, int64_t layer,
                   LayerTensorNeeds& n) {
  if (c.n_experts == 0) {
    n[LayerTensor::kFfnGate] = n[LayerTensor::kFfnUp] = n[LayerTensor::kFfnDown] =
        TensorNeed::kRequired;
    return;
  }
  for (LayerTensor t :
       {LayerTensor::kFfnGateInp, LayerTensor::kFfnDownExps, LayerTensor::kFfnGateShexp,
        LayerTensor::kFfnUpShexp, LayerTensor::kFfnDownShexp, LayerTensor::kFfnGateInpShexp}) {
    n[t] = TensorNeed::kRequired;
  }
  // Gate and up apart, or fused per expert (llama.cpp reads either).
  if (m.file().FindTensor(LayerTensorName(layer, LayerTensor::kFfnGateUpExps)) != nullptr) {
    n[LayerTensor::kFfnGateUpExps] = TensorNeed::kRequired;
  } else {
    n[LayerTensor::kFfnGateExps] = n[LayerTensor::kFfnUpExps] = TensorNeed::kRequired;
  }
}

// The first NextN layer (block n_layers; llama.cpp's load_block_mtp): a full-attention layer
// with the family's FFN, and the NextN tensors.
void SetNextnTensors(const ArchMetadata& m, ModelConfig* c) {
  LayerTensorNeeds n;
  n[LayerTensor::kAttnNorm] = n[LayerTensor::kPostAttnNorm] = TensorNeed::kRequired;
  SetFfnTensors(m, *c, c->n_layers, n);
  for (LayerTensor t :
       {LayerTensor::kAttnQ, LayerTensor::kAttnK, LayerTensor::kAttnV, LayerTensor::kAttnOutput,
        LayerTensor::kAttnQNorm, LayerTensor::kAttnKNorm, LayerTensor::kNextnEhProj,
        LayerTensor::kNextnEnorm, LayerTensor::kNextnHnorm}) {
    n[t] = TensorNeed::kRequired;
  }
  for (LayerTensor t : {LayerTensor::kNextnSharedHeadNorm, LayerTensor::kNextnEmbedTokens,
                        LayerTensor::kNextnSharedHeadHead}) {
    n[t] = TensorNeed::kOptional;
  }
  c->nextn_tensors = n;
  c->has_nextn_layer = true;
}

}  // namespace
}  // namespace qwen_hybrid

Status ConfigureQwenHybrid(const ArchMetadata& m, const QwenHybridLayout& layout, ModelConfig* c) {
  using namespace qwen_hybrid;
  RADIXLM_ASSIGN_OR_RETURN(const int64_t experts, m.file().GetIntOr(m.Key("expert_count"), 0));
  if (experts > 0 && !layout.experts) {
    return Unimplemented(m.arch() + " with experts ('" + m.Key("expert_count") +
                         "') is not supported; the dense models are (qwen35moe is the MoE one)");
  }
  c->rope_layout = RopeLayout::kNeox;
  if (layout.rope_sections) RADIXLM_RETURN_IF_ERROR(CheckRopeSections(m, c->rope_dims));
  c->qk_norm = true;
  c->attn_output_gate = true;
  c->post_attn_norm_is_ffn_norm = true;
  c->ssm_grouped_heads = layout.grouped_heads;
  RADIXLM_RETURN_IF_ERROR(ReadSsmShapes(m, c));
  RADIXLM_ASSIGN_OR_RETURN(c->linear_layers, ReadLinearLayers(m, c->n_layers));
  if (layout.experts) RADIXLM_RETURN_IF_ERROR(ReadQwenExperts(m, c));
  if (layout.fused_beta_alpha) {
    // (Older qwen3next conversions project Q, K, V and z in one ssm_in grouped by key head.)
    constexpr std::string_view kLegacy[] = {"ssm_in.weight"};
    RADIXLM_RETURN_IF_ERROR(RefuseLayerTensors(m, c->n_layers, kLegacy));
  }

  // blk.0's attn_qkv (which set the generic flag) is a linear layer's input projection; the
  // full-attention layers have Q, K and V apart.
  c->fused_qkv = false;
  c->layer_tensors.clear();
  for (int64_t i = 0; i < c->n_layers; ++i) {
    LayerTensorNeeds n;
    n[LayerTensor::kAttnNorm] = n[LayerTensor::kPostAttnNorm] = TensorNeed::kRequired;
    SetFfnTensors(m, *c, i, n);
    if (c->IsLinearLayer(i)) {
      for (LayerTensor t :
           {LayerTensor::kAttnQkv, LayerTensor::kAttnGate, LayerTensor::kSsmConv1d,
            LayerTensor::kSsmDt, LayerTensor::kSsmA, LayerTensor::kSsmNorm, LayerTensor::kSsmOut}) {
        n[t] = TensorNeed::kRequired;
      }
      if (layout.fused_beta_alpha) {
        n[LayerTensor::kSsmBetaAlpha] = TensorNeed::kRequired;
      } else {
        n[LayerTensor::kSsmBeta] = n[LayerTensor::kSsmAlpha] = TensorNeed::kRequired;
      }
    } else {
      // (llama.cpp also reads a fused attn_qkv here; the converter writes Q, K and V apart.)
      const std::string fused = LayerTensorName(i, LayerTensor::kAttnQkv);
      if (m.file().FindTensor(fused) != nullptr) {
        return Unimplemented("tensor '" + fused + "' (" + m.arch() +
                             " full attention with fused Q/K/V) is not supported");
      }
      for (LayerTensor t :
           {LayerTensor::kAttnQ, LayerTensor::kAttnK, LayerTensor::kAttnV, LayerTensor::kAttnOutput,
            LayerTensor::kAttnQNorm, LayerTensor::kAttnKNorm}) {
        n[t] = TensorNeed::kRequired;
      }
    }
    c->layer_tensors.push_back(n);
  }
  if (c->nextn_layers > 0) SetNextnTensors(m, c);
  return Status::Ok();
}

}  // namespace radixlm::model
