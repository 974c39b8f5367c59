// gemma4 (Gemma 4 dense text models: E2B, E4B, 31B; llama.cpp's src/models/gemma4.cpp): Gemma 3's
// block (NeoX RoPE, per-head Q/K norms, post-norms on both blocks, embeddings scaled by
// sqrt(hidden), GELU) with
//   * sliding-window and global layers named one by one (attention.sliding_window_pattern, an
//     array), each kind with its own head size (attention.key_length_swa / key_length), KV
//     head count (head_count_kv may be an array), RoPE base (rope.freq_base_swa / freq_base)
//     and rotated values; the global layers' "proportional" RoPE is rope_freqs.weight, whose
//     huge factors leave the unrotated pairs in place;
//   * V RMS-normed per head without a weight, no scaling of Q·K (the norms set the scale);
//   * the last attention.shared_kv_layers layers computing no K/V: they attend over those of
//     the last global (or sliding) layer before them;
//   * per-layer inputs (embedding_length_per_layer_input, E2B / E4B): per token and layer, a
//     row of per_layer_token_embd plus a projection of the embedding, mixed into the residual
//     stream at each layer's end (inp_gate, proj, post_norm), and a per-layer output scale;
//   * a wider FFN on some layers (feed_forward_length as an array) and final-logit
//     soft-capping.
// Layers without attn_v.weight use K's projection as V (the 31B model). The vision and audio
// towers live in a separate projector file, not read here.
// The mixture-of-experts model (26B-A4B: expert_count, expert_used_count,
// expert_feed_forward_length): a layer with ffn_gate_inp.weight runs its dense FFN beside
// expert_count experts (ModelConfig::moe_dense_branch: the router's own input scale, a pre-norm
// for the experts, a post-norm for each branch), routed by a softmax over all experts, the top
// expert_used_count renormalized, each expert's output times ffn_down_exps.scale; the experts'
// gate and up are separate or fused (ffn_gate_up_exps), GELU as the dense FFN.
#include <cmath>

#include "model/families/family.h"
#include "model/tensor_names.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace gemma4_family {
namespace {

// The MoE model's per-layer tensors (llama.cpp reads them where the router is present): a file
// with them but no expert_count is refused naming the first.
constexpr std::string_view kExpertTensors[] = {"ffn_gate_inp.weight", "ffn_gate_exps.weight",
                                               "ffn_up_exps.weight", "ffn_down_exps.weight",
                                               "ffn_gate_up_exps.weight"};
// Per-expert scales of the gate and up (llama.cpp's NVFP4 conversions): not read here.
constexpr std::string_view kUnreadExpertScales[] = {"ffn_gate_exps.scale", "ffn_up_exps.scale",
                                                    "ffn_gate_up_exps.scale"};

bool HasLayerTensor(const ArchMetadata& m, int64_t layer, LayerTensor t) {
  return m.file().FindTensor(LayerTensorName(layer, t)) != nullptr;
}

// The experts' counts and width; the layers that have a router are MoE layers.
Status ReadMoe(const ArchMetadata& m, ModelConfig* c) {
  RADIXLM_ASSIGN_OR_RETURN(const int64_t experts, m.file().GetIntOr(m.Key("expert_count"), 0));
  if (experts <= 0) return RefuseLayerTensors(m, c->n_layers, kExpertTensors);
  RADIXLM_ASSIGN_OR_RETURN(const int64_t expert_ffn, m.Positive("expert_feed_forward_length"));
  RADIXLM_RETURN_IF_ERROR(ReadExperts(m, expert_ffn, /*required=*/true, c));
  c->moe_dense_branch = true;
  return RefuseLayerTensors(m, c->n_layers, kUnreadExpertScales);
}

// A MoE layer's tensors beside the dense ones.
void AddMoeTensors(const ArchMetadata& m, int64_t layer, LayerTensorNeeds& n) {
  for (LayerTensor t :
       {LayerTensor::kFfnGate, LayerTensor::kFfnUp, LayerTensor::kFfnDown, LayerTensor::kFfnGateInp,
        LayerTensor::kFfnGateInpScale, LayerTensor::kFfnPreNorm2, LayerTensor::kFfnPostNorm1,
        LayerTensor::kFfnPostNorm2, LayerTensor::kFfnDownExps}) {
    n[t] = TensorNeed::kRequired;
  }
  n[LayerTensor::kFfnDownExpsScale] = TensorNeed::kOptional;
  if (HasLayerTensor(m, layer, LayerTensor::kFfnGateUpExps)) {
    n[LayerTensor::kFfnGateUpExps] = TensorNeed::kRequired;
    n[LayerTensor::kFfnGateExps] = n[LayerTensor::kFfnUpExps] = TensorNeed::kAbsent;
  } else {
    n[LayerTensor::kFfnGateExps] = n[LayerTensor::kFfnUpExps] = TensorNeed::kRequired;
  }
}

// attention.sliding_window_pattern: one bool (or integer) per layer, true for sliding.
StatusOr<std::vector<uint8_t>> ReadSlidingLayers(const ArchMetadata& m, int64_t n_layers) {
  const std::string key = m.Key("attention.sliding_window_pattern");
  const gguf::Value* value = m.file().Find(key);
  if (value == nullptr || !value->is_array()) {
    return InvalidArgument("model metadata: '" + key + "' must be an array of one bool per layer");
  }
  const gguf::Array& array = value->AsArray();
  if (static_cast<int64_t>(array.items.size()) < n_layers) {
    return InvalidArgument("model metadata: '" + key + "' has " +
                           std::to_string(array.items.size()) + " entries for " +
                           std::to_string(n_layers) + " layers");
  }
  std::vector<uint8_t> out;
  for (int64_t i = 0; i < n_layers; ++i) {
    const gguf::Value& item = array.items[i];
    if (item.is_bool()) {
      out.push_back(item.AsBool() ? 1 : 0);
    } else if (item.is_integer()) {
      out.push_back(item.AsInt() != 0 ? 1 : 0);
    } else {
      return InvalidArgument("model metadata: '" + key + "' must hold bools");
    }
  }
  return out;
}

Status Configure(const ArchMetadata& m, ModelConfig* c) {
  RADIXLM_RETURN_IF_ERROR(ReadMoe(m, c));

  c->rope_layout = RopeLayout::kNeox;
  RADIXLM_ASSIGN_OR_RETURN(c->sliding_window, m.Positive("attention.sliding_window"));
  RADIXLM_ASSIGN_OR_RETURN(c->sliding_layers, ReadSlidingLayers(m, c->n_layers));
  // The sliding layers' RoPE: base 10k unless the file says, never scaled (llama.cpp's).
  RADIXLM_ASSIGN_OR_RETURN(c->rope_base_local, m.PositiveFloatOr("rope.freq_base_swa", 10000.0f));
  c->rope_freq_scale_local = 1.0f;
  c->has_rope_freq_factors = m.file().FindTensor(kRopeFreqsName) != nullptr;

  // The sliding layers' head size and rotated values (the global ones' are the generic keys).
  RADIXLM_ASSIGN_OR_RETURN(c->head_dim_swa, m.Positive("attention.key_length_swa"));
  RADIXLM_ASSIGN_OR_RETURN(const int64_t value_swa,
                           m.PositiveOr("attention.value_length_swa", c->head_dim_swa));
  if (value_swa != c->head_dim_swa || c->head_dim_swa % 2 != 0) {
    return Unimplemented("model metadata: '" + m.Key("attention.key_length_swa") +
                         "' must be even and equal '" + m.Key("attention.value_length_swa") + "'");
  }
  RADIXLM_ASSIGN_OR_RETURN(c->rope_dims_swa,
                           m.PositiveOr("rope.dimension_count_swa", c->head_dim_swa));
  if (c->rope_dims_swa != c->head_dim_swa) {
    return Unimplemented("model metadata: '" + m.Key("rope.dimension_count_swa") + "' (" +
                         std::to_string(c->rope_dims_swa) + ") != the sliding layers' head size (" +
                         std::to_string(c->head_dim_swa) +
                         "): partial rotary embedding with NeoX RoPE is not supported");
  }

  // KV shared by the last layers: each reads the last layer of its kind before them.
  RADIXLM_ASSIGN_OR_RETURN(const int64_t shared,
                           m.file().GetIntOr(m.Key("attention.shared_kv_layers"), 0));
  if (shared < 0 || shared > c->n_layers - 2) {
    return InvalidArgument("model metadata: '" + m.Key("attention.shared_kv_layers") + "' (" +
                           std::to_string(shared) + ") must be in [0, block_count - 2]");
  }
  if (shared > 0) {
    c->n_kv_layers = c->n_layers - shared;
    if (c->IsSlidingLayer(c->n_kv_layers - 1) || !c->IsSlidingLayer(c->n_kv_layers - 2)) {
      return Unimplemented(
          "gemma4: the layers that share their K/V (the last before '" +
          m.Key("attention.shared_kv_layers") +
          "' takes over) must be a sliding layer then a global one, as in every Gemma 4 model");
    }
  }

  RADIXLM_ASSIGN_OR_RETURN(const int64_t per_layer,
                           m.file().GetIntOr(m.Key("embedding_length_per_layer_input"), 0));
  if (per_layer < 0) {
    return InvalidArgument("model metadata: '" + m.Key("embedding_length_per_layer_input") +
                           "' is negative");
  }
  c->per_layer_input_size = per_layer;
  RADIXLM_ASSIGN_OR_RETURN(c->final_logit_softcap,
                           m.PositiveFloatOr("final_logit_softcapping", 0.0f));

  c->qk_norm = true;
  c->v_norm = true;
  c->post_norms = true;
  c->scale_embeddings = true;
  c->embedding_scale = std::sqrt(static_cast<float>(c->hidden_size));
  c->attention_scale = 1.0f;  // Q and K are RMS-normed; Q·K is not scaled
  c->ffn_activation = FfnActivation::kGeluTanh;

  c->layer_tensors.clear();
  for (int64_t i = 0; i < c->n_layers; ++i) {
    LayerTensorNeeds n = StandardLayerTensors(*c);
    if (c->LayerAttention(i).kv_layer != i) {  // no K/V of its own: not read
      n[LayerTensor::kAttnK] = n[LayerTensor::kAttnV] = n[LayerTensor::kAttnKNorm] =
          TensorNeed::kAbsent;
    } else if (!c->fused_qkv) {
      n[LayerTensor::kAttnV] = TensorNeed::kOptional;  // absent: V is K's projection
    }
    if (c->per_layer_input_size > 0) {
      n[LayerTensor::kPerLayerInpGate] = n[LayerTensor::kPerLayerProj] =
          n[LayerTensor::kPerLayerPostNorm] = TensorNeed::kRequired;
    }
    n[LayerTensor::kLayerOutScale] = TensorNeed::kOptional;
    if (c->n_experts > 0) {
      // (StandardLayerTensors gives every layer experts in place of the dense FFN.)
      for (LayerTensor t : {LayerTensor::kFfnGateInp, LayerTensor::kFfnGateExps,
                            LayerTensor::kFfnUpExps, LayerTensor::kFfnDownExps}) {
        n[t] = TensorNeed::kAbsent;
      }
      n[LayerTensor::kFfnGate] = n[LayerTensor::kFfnUp] = n[LayerTensor::kFfnDown] =
          TensorNeed::kRequired;
      if (HasLayerTensor(m, i, LayerTensor::kFfnGateInp)) AddMoeTensors(m, i, n);
    }
    c->layer_tensors.push_back(n);
  }
  return Status::Ok();
}

constexpr std::string_view kArchitectures[] = {"gemma4"};

}  // namespace
}  // namespace gemma4_family

const ModelFamily& Gemma4Family() {
  static const ModelFamily family{.name = "gemma4",
                                  .architectures = gemma4_family::kArchitectures,
                                  .configure = &gemma4_family::Configure};
  return family;
}

}  // namespace radixlm::model
