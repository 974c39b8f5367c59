// deepseek2 (DeepSeek-V2, V2-Lite, V2.5, V3, R1; llama.cpp's src/models/deepseek2.cpp):
//   * multi-head latent attention (ModelConfig::mla_kv_rank): Q from attn_q, or from attn_q_a,
//     attn_q_a_norm and attn_q_b (attention.q_lora_rank); attn_kv_a_mqa gives the latent
//     (attention.kv_lora_rank, normed by attn_kv_a_norm) and a RoPE key part of
//     rope.dimension_count values shared by every head; the split attn_k_b / attn_v_b of
//     current llama.cpp files (a file with only the fused attn_kv_b is refused by name). The
//     cache holds the latent and the roped key part per token (attention.key_length values:
//     kv_lora_rank + rope dims, one KV head), attention runs in the absorbed form;
//   * RoPE on pairs of consecutive values (llama.cpp's NORM type), YaRN with DeepSeek's mscale
//     rule: the scores are scaled by mscale^2 / sqrt(key_length_mla), where mscale =
//     1 + 0.1 * mscale_all_dim * ln(factor) (rope.scaling.yarn_log_multiplier holds
//     0.1 * mscale_all_dim, as the converter writes it);
//   * DeepSeekMoE: the first leading_dense_block_count layers have a dense FFN, the others
//     expert_count routed experts (expert_used_count per token) plus the shared experts
//     (ffn_*_shexp); routing by softmax (V2) or sigmoid with the exp_probs_b selection bias and
//     expert groups (V3: expert_gating_func 2), the weights optionally normalized
//     (expert_weights_norm) and scaled (expert_weights_scale).
//   * mistral4 files (llama.cpp's deepseek2 graph under another name) with Llama 4's attention
//     temperature (attention.temperature_scale / temperature_length).
// Experts' gate and up apart or fused (ffn_gate_up_exps, as mistral4 conversions write them).
// Multi-token-prediction layers (nextn_predict_layers) are not run.
#include <cmath>

#include "model/families/family.h"
#include "model/moe_ffn.h"
#include "model/tensor_names.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace deepseek2_family {
namespace {

bool HasTensor(const ArchMetadata& m, const std::string& name) {
  return m.file().FindTensor(name) != nullptr;
}

Status ReadAttention(const ArchMetadata& m, ModelConfig* c) {
  if (!m.Has("attention.key_length_mla") || !HasTensor(m, "blk.0.attn_k_b.weight")) {
    if (HasTensor(m, "blk.0.attn_kv_b.weight")) {
      return Unimplemented(
          "tensor 'blk.0.attn_kv_b.weight' (deepseek2 with the fused attn_kv_b, without the "
          "split attn_k_b / attn_v_b of current llama.cpp conversions) is not supported");
    }
    return InvalidArgument("model metadata: deepseek2 needs '" + m.Key("attention.key_length_mla") +
                           "' and the tensors attn_k_b / attn_v_b (multi-head latent attention)");
  }
  RADIXLM_ASSIGN_OR_RETURN(c->mla_kv_rank, m.Positive("attention.kv_lora_rank"));
  RADIXLM_ASSIGN_OR_RETURN(c->mla_key_dim, m.Positive("attention.key_length_mla"));
  RADIXLM_ASSIGN_OR_RETURN(c->mla_value_dim, m.Positive("attention.value_length_mla"));
  c->mla_q_rank = 0;
  if (HasTensor(m, "blk.0.attn_q_a.weight")) {
    RADIXLM_ASSIGN_OR_RETURN(c->mla_q_rank, m.Positive("attention.q_lora_rank"));
  }
  if (c->n_kv_heads != 1 || c->head_dim != c->mla_kv_rank + c->rope_dims) {
    return InvalidArgument("model metadata: deepseek2 with multi-head latent attention needs '" +
                           m.Key("attention.head_count_kv") + "' 1 and '" +
                           m.Key("attention.key_length") + "' = kv_lora_rank + '" +
                           m.Key("rope.dimension_count") + "' (" +
                           std::to_string(c->mla_kv_rank + c->rope_dims) + "), got " +
                           std::to_string(c->n_kv_heads) + " and " + std::to_string(c->head_dim));
  }
  if (c->mla_key_dim <= c->rope_dims) {
    return InvalidArgument("model metadata: '" + m.Key("attention.key_length_mla") +
                           "' must exceed '" + m.Key("rope.dimension_count") + "'");
  }
  // Llama 4's attention temperature (Mistral Large 3 / mistral4): Q times
  // ln(floor(pos / temperature_length) + 1) * temperature_scale + 1.
  RADIXLM_ASSIGN_OR_RETURN(const double temperature,
                           m.file().GetFloatOr(m.Key("attention.temperature_scale"), 0.0));
  if (temperature != 0.0) {
    c->attn_temperature_scale = static_cast<float>(temperature);
    c->attn_temperature_offset = 0.0f;
    RADIXLM_ASSIGN_OR_RETURN(c->attn_temperature_floor, m.Positive("attention.temperature_length"));
  }
  c->rope_layout = RopeLayout::kNormal;
  // DeepSeek's YaRN: the magnitude goes into the scores' scale (llama.cpp's deepseek2 graph).
  if (m.Has("rope.scaling.yarn_log_multiplier")) {
    RADIXLM_ASSIGN_OR_RETURN(const double log_mul,
                             m.file().GetFloat(m.Key("rope.scaling.yarn_log_multiplier")));
    c->rope_yarn_log_mul = static_cast<float>(log_mul) / 0.1f;
  }
  c->rope_yarn_mscale_all_dims = true;
  const LayerAttentionConfig la = c->LayerAttention(0);
  const float log_inv_scale = std::log(1.0f / c->rope_freq_scale);
  const float attn_factor_org = la.rope_attn_factor * (1.0f + 0.1f * log_inv_scale);
  const float mscale = attn_factor_org * (1.0f + 0.1f * c->rope_yarn_log_mul * log_inv_scale);
  c->attention_scale = mscale * mscale / std::sqrt(static_cast<float>(c->mla_key_dim));
  return Status::Ok();
}

Status ReadMoe(const ArchMetadata& m, ModelConfig* c) {
  RADIXLM_ASSIGN_OR_RETURN(const int64_t expert_ffn, m.Positive("expert_feed_forward_length"));
  RADIXLM_RETURN_IF_ERROR(ReadExperts(m, expert_ffn, /*required=*/true, c));
  RADIXLM_ASSIGN_OR_RETURN(const int64_t shared,
                           m.file().GetIntOr(m.Key("expert_shared_count"), 0));
  if (shared < 0)
    return InvalidArgument("model metadata: '" + m.Key("expert_shared_count") + "' < 0");
  c->shared_expert_ffn_size = shared * expert_ffn;
  RADIXLM_ASSIGN_OR_RETURN(const bool norm,
                           m.file().GetBoolOr(m.Key("expert_weights_norm"), false));
  c->expert_weights_norm = norm;
  RADIXLM_ASSIGN_OR_RETURN(const double scale,
                           m.file().GetFloatOr(m.Key("expert_weights_scale"), 0.0));
  c->expert_weights_scale = scale != 0.0 ? static_cast<float>(scale) : 1.0f;
  RADIXLM_ASSIGN_OR_RETURN(const int64_t gating, m.file().GetIntOr(m.Key("expert_gating_func"), 1));
  if (gating == 2) {
    c->expert_gating = ModelConfig::ExpertGating::kSigmoid;
  } else if (gating != 0 && gating != 1) {
    return Unimplemented("model metadata: '" + m.Key("expert_gating_func") + "' " +
                         std::to_string(gating) + " is not supported (1: softmax, 2: sigmoid)");
  }
  RADIXLM_ASSIGN_OR_RETURN(c->n_expert_groups, m.file().GetIntOr(m.Key("expert_group_count"), 0));
  RADIXLM_ASSIGN_OR_RETURN(c->n_expert_groups_used,
                           m.file().GetIntOr(m.Key("expert_group_used_count"), 0));
  if (c->n_expert_groups > 1) {
    const int64_t per_group = c->n_experts / c->n_expert_groups;
    if (c->n_experts % c->n_expert_groups != 0 || c->n_expert_groups > kMaxExpertGroups ||
        c->n_expert_groups_used < 1 || c->n_expert_groups_used >= c->n_expert_groups ||
        per_group < 2 || c->n_expert_groups_used * per_group < c->n_experts_used) {
      return InvalidArgument("model metadata: '" + m.Key("expert_group_count") + "' (" +
                             std::to_string(c->n_expert_groups) + ") and '" +
                             m.Key("expert_group_used_count") + "' (" +
                             std::to_string(c->n_expert_groups_used) +
                             ") must split the experts into equal groups of at least 2, the "
                             "used groups holding expert_used_count experts");
    }
  }
  return Status::Ok();
}

Status Configure(const ArchMetadata& m, ModelConfig* c) {
  RADIXLM_RETURN_IF_ERROR(ReadAttention(m, c));
  RADIXLM_RETURN_IF_ERROR(ReadMoe(m, c));
  RADIXLM_ASSIGN_OR_RETURN(const int64_t dense,
                           m.file().GetIntOr(m.Key("leading_dense_block_count"), 0));
  if (dense < 0) {
    return InvalidArgument("model metadata: '" + m.Key("leading_dense_block_count") + "' < 0");
  }
  c->layer_tensors.clear();
  for (int64_t i = 0; i < c->n_layers; ++i) {
    LayerTensorNeeds n;
    for (LayerTensor t : {LayerTensor::kAttnNorm, LayerTensor::kAttnKvAMqa,
                          LayerTensor::kAttnKvANorm, LayerTensor::kAttnKB, LayerTensor::kAttnVB,
                          LayerTensor::kAttnOutput, LayerTensor::kFfnNorm}) {
      n[t] = TensorNeed::kRequired;
    }
    if (c->mla_q_rank > 0) {
      n[LayerTensor::kAttnQA] = n[LayerTensor::kAttnQANorm] = n[LayerTensor::kAttnQB] =
          TensorNeed::kRequired;
    } else {
      n[LayerTensor::kAttnQ] = TensorNeed::kRequired;
    }
    if (i < dense) {
      n[LayerTensor::kFfnGate] = n[LayerTensor::kFfnUp] = n[LayerTensor::kFfnDown] =
          TensorNeed::kRequired;
    } else {
      n[LayerTensor::kFfnGateInp] = n[LayerTensor::kFfnDownExps] = TensorNeed::kRequired;
      // Gate and up apart, or fused per expert (mistral4 conversions).
      if (HasTensor(m, LayerTensorName(i, LayerTensor::kFfnGateUpExps))) {
        n[LayerTensor::kFfnGateUpExps] = TensorNeed::kRequired;
      } else {
        n[LayerTensor::kFfnGateExps] = n[LayerTensor::kFfnUpExps] = TensorNeed::kRequired;
      }
      n[LayerTensor::kFfnExpProbsB] = TensorNeed::kOptional;
      if (c->shared_expert_ffn_size > 0) {
        n[LayerTensor::kFfnGateShexp] = n[LayerTensor::kFfnUpShexp] =
            n[LayerTensor::kFfnDownShexp] = TensorNeed::kRequired;
      }
    }
    c->layer_tensors.push_back(n);
  }
  return Status::Ok();
}

// mistral4 (Mistral Large 3): llama.cpp builds it with deepseek2's loader and graph.
constexpr std::string_view kArchitectures[] = {"deepseek2", "mistral4"};

}  // namespace
}  // namespace deepseek2_family

const ModelFamily& DeepSeek2Family() {
  static const ModelFamily family{.name = "deepseek2",
                                  .architectures = deepseek2_family::kArchitectures,
                                  .configure = &deepseek2_family::Configure};
  return family;
}

}  // namespace radixlm::model
