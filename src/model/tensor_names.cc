#include "model/tensor_names.h"

namespace radixlm::model {

std::string_view LayerTensorSuffix(LayerTensor t) {
  switch (t) {
    case LayerTensor::kAttnNorm:
      return "attn_norm.weight";
    case LayerTensor::kAttnQ:
      return "attn_q.weight";
    case LayerTensor::kAttnK:
      return "attn_k.weight";
    case LayerTensor::kAttnV:
      return "attn_v.weight";
    case LayerTensor::kAttnOutput:
      return "attn_output.weight";
    case LayerTensor::kAttnQBias:
      return "attn_q.bias";
    case LayerTensor::kAttnKBias:
      return "attn_k.bias";
    case LayerTensor::kAttnVBias:
      return "attn_v.bias";
    case LayerTensor::kAttnQNorm:
      return "attn_q_norm.weight";
    case LayerTensor::kAttnKNorm:
      return "attn_k_norm.weight";
    case LayerTensor::kPostAttnNorm:
      return "post_attention_norm.weight";
    case LayerTensor::kFfnNorm:
      return "ffn_norm.weight";
    case LayerTensor::kFfnGate:
      return "ffn_gate.weight";
    case LayerTensor::kFfnUp:
      return "ffn_up.weight";
    case LayerTensor::kFfnDown:
      return "ffn_down.weight";
    case LayerTensor::kPostFfnNorm:
      return "post_ffw_norm.weight";
    case LayerTensor::kAttnQkv:
      return "attn_qkv.weight";
    case LayerTensor::kAttnQkvBias:
      return "attn_qkv.bias";
    case LayerTensor::kPerLayerInpGate:
      return "inp_gate.weight";
    case LayerTensor::kPerLayerProj:
      return "proj.weight";
    case LayerTensor::kPerLayerPostNorm:
      return "post_norm.weight";
    case LayerTensor::kLayerOutScale:
      return "layer_output_scale.weight";
    case LayerTensor::kAttnOutputBias:
      return "attn_output.bias";
    case LayerTensor::kAttnSinks:
      return "attn_sinks.weight";
    case LayerTensor::kFfnGateInpBias:
      return "ffn_gate_inp.bias";
    case LayerTensor::kFfnGateExpsBias:
      return "ffn_gate_exps.bias";
    case LayerTensor::kFfnUpExpsBias:
      return "ffn_up_exps.bias";
    case LayerTensor::kFfnDownExpsBias:
      return "ffn_down_exps.bias";
    case LayerTensor::kFfnGateInp:
      return "ffn_gate_inp.weight";
    case LayerTensor::kFfnGateExps:
      return "ffn_gate_exps.weight";
    case LayerTensor::kFfnUpExps:
      return "ffn_up_exps.weight";
    case LayerTensor::kFfnDownExps:
      return "ffn_down_exps.weight";
    case LayerTensor::kAttnGate:
      return "attn_gate.weight";
    case LayerTensor::kSsmConv1d:
      return "ssm_conv1d.weight";
    case LayerTensor::kSsmDt:
      return "ssm_dt.bias";
    case LayerTensor::kSsmA:
      return "ssm_a";
    case LayerTensor::kSsmBeta:
      return "ssm_beta.weight";
    case LayerTensor::kSsmAlpha:
      return "ssm_alpha.weight";
    case LayerTensor::kSsmNorm:
      return "ssm_norm.weight";
    case LayerTensor::kSsmOut:
      return "ssm_out.weight";
    case LayerTensor::kAttnQA:
      return "attn_q_a.weight";
    case LayerTensor::kAttnQANorm:
      return "attn_q_a_norm.weight";
    case LayerTensor::kAttnQB:
      return "attn_q_b.weight";
    case LayerTensor::kAttnKvAMqa:
      return "attn_kv_a_mqa.weight";
    case LayerTensor::kAttnKvANorm:
      return "attn_kv_a_norm.weight";
    case LayerTensor::kAttnKB:
      return "attn_k_b.weight";
    case LayerTensor::kAttnVB:
      return "attn_v_b.weight";
    case LayerTensor::kFfnGateShexp:
      return "ffn_gate_shexp.weight";
    case LayerTensor::kFfnUpShexp:
      return "ffn_up_shexp.weight";
    case LayerTensor::kFfnDownShexp:
      return "ffn_down_shexp.weight";
    case LayerTensor::kFfnExpProbsB:
      return "exp_probs_b.bias";
    case LayerTensor::kFfnGateInpScale:
      return "ffn_gate_inp.scale";
    case LayerTensor::kFfnPreNorm2:
      return "pre_ffw_norm_2.weight";
    case LayerTensor::kFfnPostNorm1:
      return "post_ffw_norm_1.weight";
    case LayerTensor::kFfnPostNorm2:
      return "post_ffw_norm_2.weight";
    case LayerTensor::kFfnDownExpsScale:
      return "ffn_down_exps.scale";
    case LayerTensor::kFfnGateUpExps:
      return "ffn_gate_up_exps.weight";
    case LayerTensor::kFfnGateInpShexp:
      return "ffn_gate_inp_shexp.weight";
    case LayerTensor::kSsmBetaAlpha:
      return "ssm_ba.weight";
    case LayerTensor::kNextnEhProj:
      return "nextn.eh_proj.weight";
    case LayerTensor::kNextnEnorm:
      return "nextn.enorm.weight";
    case LayerTensor::kNextnHnorm:
      return "nextn.hnorm.weight";
    case LayerTensor::kNextnSharedHeadNorm:
      return "nextn.shared_head_norm.weight";
    case LayerTensor::kNextnEmbedTokens:
      return "nextn.embed_tokens.weight";
    case LayerTensor::kNextnSharedHeadHead:
      return "nextn.shared_head_head.weight";
    case LayerTensor::kCount:
      break;
  }
  return "";
}

std::string LayerTensorName(int64_t layer, LayerTensor t) {
  std::string name = "blk." + std::to_string(layer) + ".";
  name += LayerTensorSuffix(t);
  return name;
}

LayerTensorNeeds StandardLayerTensors(const ModelConfig& c) {
  auto need = [](bool required) { return required ? TensorNeed::kRequired : TensorNeed::kAbsent; };
  LayerTensorNeeds n;
  for (LayerTensor t :
       {LayerTensor::kAttnQ, LayerTensor::kAttnK, LayerTensor::kAttnV, LayerTensor::kAttnOutput,
        LayerTensor::kFfnGate, LayerTensor::kFfnUp, LayerTensor::kFfnDown}) {
    n[t] = TensorNeed::kRequired;
  }
  n[LayerTensor::kAttnNorm] = n[LayerTensor::kFfnNorm] = need(c.pre_norms);
  // Q/K/V biases: required with qkv_bias, read where present otherwise (as llama.cpp does for
  // every family).
  n[LayerTensor::kAttnQBias] = n[LayerTensor::kAttnKBias] = n[LayerTensor::kAttnVBias] =
      c.qkv_bias ? TensorNeed::kRequired : TensorNeed::kOptional;
  n[LayerTensor::kAttnQNorm] = n[LayerTensor::kAttnKNorm] = need(c.qk_norm);
  n[LayerTensor::kPostAttnNorm] = n[LayerTensor::kPostFfnNorm] = need(c.post_norms);
  if (c.fused_qkv) {
    n[LayerTensor::kAttnQkv] = TensorNeed::kRequired;
    n[LayerTensor::kAttnQkvBias] = TensorNeed::kOptional;
    n[LayerTensor::kAttnQ] = n[LayerTensor::kAttnK] = n[LayerTensor::kAttnV] = TensorNeed::kAbsent;
  }
  if (c.fused_gate_up) n[LayerTensor::kFfnGate] = TensorNeed::kAbsent;
  if (c.n_experts > 0) {
    n[LayerTensor::kFfnGate] = n[LayerTensor::kFfnUp] = n[LayerTensor::kFfnDown] =
        TensorNeed::kAbsent;
    for (LayerTensor t : {LayerTensor::kFfnGateInp, LayerTensor::kFfnGateExps,
                          LayerTensor::kFfnUpExps, LayerTensor::kFfnDownExps}) {
      n[t] = TensorNeed::kRequired;
    }
  }
  return n;
}

ExpectedShape LayerTensorShape(const ModelConfig& c, LayerTensor t, int64_t layer) {
  const int64_t hd = c.LayerAttention(layer).head_dim;
  const int64_t qs = c.LayerQSize(layer);
  const int64_t kvs = c.LayerKvSize(layer);
  const int64_t ffn = c.LayerFfnSize(layer);
  auto vec = [](int64_t n) {
    ExpectedShape s;
    s.dims[0] = n;
    s.n_dims = 1;
    return s;
  };
  auto mat = [](int64_t cols, int64_t rows) {
    ExpectedShape s;
    s.dims[0] = cols;
    s.dims[1] = rows;
    s.n_dims = 2;
    return s;
  };
  auto experts = [&](int64_t cols, int64_t rows) {
    ExpectedShape s = mat(cols, rows);
    s.dims[2] = c.n_experts;
    s.n_dims = 3;
    return s;
  };
  auto per_head = [&](int64_t cols, int64_t rows) {
    ExpectedShape s = mat(cols, rows);
    s.dims[2] = c.n_heads;
    s.n_dims = 3;
    return s;
  };
  if (c.IsMla()) {  // Q and the output are as wide as the MLA heads, not the cache's rows
    if (t == LayerTensor::kAttnQ) return mat(c.hidden_size, c.n_heads * c.mla_key_dim);
    if (t == LayerTensor::kAttnOutput) return mat(c.n_heads * c.mla_value_dim, c.hidden_size);
  }
  switch (t) {
    case LayerTensor::kAttnQA:
      return mat(c.hidden_size, c.mla_q_rank);
    case LayerTensor::kAttnQANorm:
      return vec(c.mla_q_rank);
    case LayerTensor::kAttnQB:
      return mat(c.mla_q_rank, c.n_heads * c.mla_key_dim);
    case LayerTensor::kAttnKvAMqa:
      return mat(c.hidden_size, c.mla_kv_rank + c.rope_dims);
    case LayerTensor::kAttnKvANorm:
      return vec(c.mla_kv_rank);
    case LayerTensor::kAttnKB:
      return per_head(c.MlaNopeDim(), c.mla_kv_rank);
    case LayerTensor::kAttnVB:
      return per_head(c.mla_kv_rank, c.mla_value_dim);
    case LayerTensor::kFfnGateShexp:
    case LayerTensor::kFfnUpShexp:
      return mat(c.hidden_size, c.shared_expert_ffn_size);
    case LayerTensor::kFfnDownShexp:
      return mat(c.shared_expert_ffn_size, c.hidden_size);
    case LayerTensor::kFfnExpProbsB:
    case LayerTensor::kFfnDownExpsScale:
      return vec(c.n_experts);
    case LayerTensor::kFfnGateInpScale:
    case LayerTensor::kFfnPreNorm2:
    case LayerTensor::kFfnPostNorm1:
    case LayerTensor::kFfnPostNorm2:
      return vec(c.hidden_size);
    case LayerTensor::kFfnGateUpExps:
      return experts(c.hidden_size, 2 * c.expert_ffn_size);
    case LayerTensor::kNextnEhProj:
      return mat(2 * c.hidden_size, c.hidden_size);
    case LayerTensor::kNextnEnorm:
    case LayerTensor::kNextnHnorm:
    case LayerTensor::kNextnSharedHeadNorm:
      return vec(c.hidden_size);
    case LayerTensor::kNextnEmbedTokens:
    case LayerTensor::kNextnSharedHeadHead:
      return mat(c.hidden_size, c.vocab_size);
    case LayerTensor::kAttnNorm:
    case LayerTensor::kPostAttnNorm:
    case LayerTensor::kFfnNorm:
    case LayerTensor::kPostFfnNorm:
    case LayerTensor::kPerLayerPostNorm:
      return vec(c.hidden_size);
    case LayerTensor::kAttnQ:
      return mat(c.hidden_size, c.attn_output_gate ? 2 * qs : qs);
    case LayerTensor::kAttnK:
    case LayerTensor::kAttnV:
      return mat(c.hidden_size, kvs);
    case LayerTensor::kAttnOutput:
      return mat(qs, c.hidden_size);
    case LayerTensor::kAttnQBias:
      return vec(qs);
    case LayerTensor::kAttnKBias:
    case LayerTensor::kAttnVBias:
      return vec(kvs);
    case LayerTensor::kAttnQNorm:
      return vec(c.qk_norm_per_head ? hd : qs);
    case LayerTensor::kAttnKNorm:
      return vec(c.qk_norm_per_head ? hd : kvs);
    case LayerTensor::kFfnGate:
      return mat(c.hidden_size, ffn);
    case LayerTensor::kFfnUp:
      return mat(c.hidden_size, c.fused_gate_up ? 2 * ffn : ffn);
    case LayerTensor::kAttnQkv:
      if (c.IsLinearLayer(layer)) return mat(c.hidden_size, c.LinearConvChannels());
      return mat(c.hidden_size, qs + 2 * kvs);
    case LayerTensor::kAttnQkvBias:
      return vec(qs + 2 * kvs);
    case LayerTensor::kFfnDown:
      return mat(ffn, c.hidden_size);
    case LayerTensor::kPerLayerInpGate:
      return mat(c.hidden_size, c.per_layer_input_size);
    case LayerTensor::kPerLayerProj:
      return mat(c.per_layer_input_size, c.hidden_size);
    case LayerTensor::kLayerOutScale:
      return vec(1);
    case LayerTensor::kAttnOutputBias:
      return vec(c.hidden_size);
    case LayerTensor::kAttnSinks:
      return vec(c.n_heads);
    case LayerTensor::kFfnGateInpBias:
      return vec(c.n_experts);
    case LayerTensor::kFfnGateExpsBias:
    case LayerTensor::kFfnUpExpsBias:
      return mat(c.expert_ffn_size, c.n_experts);
    case LayerTensor::kFfnDownExpsBias:
      return mat(c.hidden_size, c.n_experts);
    case LayerTensor::kFfnGateInp:
      return mat(c.hidden_size, c.n_experts);
    case LayerTensor::kFfnGateExps:
    case LayerTensor::kFfnUpExps:
      return experts(c.hidden_size, c.expert_ffn_size);
    case LayerTensor::kFfnDownExps:
      return experts(c.expert_ffn_size, c.hidden_size);
    case LayerTensor::kAttnGate:
      return mat(c.hidden_size, c.ssm_inner_size);
    case LayerTensor::kSsmConv1d:
      return mat(c.ssm_conv_kernel, c.LinearConvChannels());
    case LayerTensor::kSsmDt:
    case LayerTensor::kSsmA:
      return vec(c.ssm_n_v_heads);
    case LayerTensor::kSsmBeta:
    case LayerTensor::kSsmAlpha:
      return mat(c.hidden_size, c.ssm_n_v_heads);
    case LayerTensor::kSsmBetaAlpha:
      return mat(c.hidden_size, 2 * c.ssm_n_v_heads);
    case LayerTensor::kFfnGateInpShexp:
      return vec(c.hidden_size);
    case LayerTensor::kSsmNorm:
      return vec(c.ssm_state_size);
    case LayerTensor::kSsmOut:
      return mat(c.ssm_inner_size, c.hidden_size);
    case LayerTensor::kCount:
      break;
  }
  return ExpectedShape{};
}

}  // namespace radixlm::model
