#include "model/model_config.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "model/encoder/encoder_model.h"
#include "model/families/family.h"
#include "model/tensor_names.h"

namespace radixlm::model {

namespace {

// Vocabulary size: rows of token_embd (the authority for the forward pass), else the
// tokenizer's token list.
StatusOr<int64_t> ReadVocabSize(const gguf::GgufFile& file, int64_t hidden) {
  if (const gguf::TensorInfo* embd = file.FindTensor("token_embd.weight")) {
    if (embd->shape.size() != 2 || embd->shape[0] != hidden) {
      return InvalidArgument("tensor 'token_embd.weight' must have shape [" +
                             std::to_string(hidden) + ", vocab]");
    }
    return embd->shape[1];
  }
  auto tokens = file.GetArray("tokenizer.ggml.tokens");
  if (tokens.ok()) return static_cast<int64_t>((*tokens)->items.size());
  return InvalidArgument("missing tensor 'token_embd.weight'");
}

// rope.scaling.{type,factor} (or the legacy rope.scale_linear) → a position multiplier, and
// whether it is YaRN's.
StatusOr<float> ReadRopeFreqScale(const gguf::GgufFile& file, const std::string& arch, bool* yarn) {
  RADIXLM_ASSIGN_OR_RETURN(std::string type, file.GetStringOr(arch + ".rope.scaling.type", ""));
  RADIXLM_ASSIGN_OR_RETURN(double factor, file.GetFloatOr(arch + ".rope.scaling.factor", 0.0));
  *yarn = type == "yarn";
  if (type.empty() || type == "none") {
    RADIXLM_ASSIGN_OR_RETURN(double legacy, file.GetFloatOr(arch + ".rope.scale_linear", 0.0));
    if (legacy > 0.0 && legacy != 1.0) return static_cast<float>(1.0 / legacy);
    return 1.0f;
  }
  if (type == "linear" || type == "yarn") {
    if (factor <= 0.0) {
      return InvalidArgument("'" + arch + ".rope.scaling.factor' must be positive for " + type +
                             " rope scaling");
    }
    return static_cast<float>(1.0 / factor);
  }
  return Unimplemented("rope scaling type '" + type + "' (" + arch +
                       ".rope.scaling.type) is not supported; supported: none, linear, yarn");
}

// llama.cpp's YaRN magnitude (llama_context: yarn_attn_factor before ggml's rope multiplies
// it by 1 + 0.1 ln(factor) again), times rope.scaling.attn_factor.
float YarnAttnFactor(const ModelConfig& c) {
  auto mscale = [](float scale, float m) {
    return scale <= 1.0f ? 1.0f : 0.1f * m * std::log(scale) + 1.0f;
  };
  const float factor = 1.0f / c.rope_freq_scale;
  const float m =
      c.rope_yarn_mscale_all_dims && c.rope_yarn_log_mul != 1.0f ? c.rope_yarn_log_mul : 1.0f;
  float attn = c.rope_yarn_log_mul != 0.0f ? mscale(factor, m) / mscale(factor, c.rope_yarn_log_mul)
                                           : mscale(factor, 1.0f);
  attn *= 1.0f / (1.0f + 0.1f * std::log(factor));
  return attn * c.rope_attn_factor;
}

// "<arch>.<suffix>" as one positive integer per layer when it is an array ([n_layers]; the
// first n_layers of a longer one, which counts multi-token-prediction layers), else empty.
StatusOr<std::vector<int64_t>> ReadPerLayer(const ArchMetadata& m, std::string_view suffix,
                                            int64_t n_layers) {
  const gguf::Value* value = m.file().Find(m.Key(suffix));
  if (value == nullptr || !value->is_array()) return std::vector<int64_t>();
  const gguf::Array& array = value->AsArray();
  if (static_cast<int64_t>(array.items.size()) < n_layers) {
    return InvalidArgument("model metadata: '" + m.Key(suffix) + "' has " +
                           std::to_string(array.items.size()) + " entries for " +
                           std::to_string(n_layers) + " layers");
  }
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n_layers; ++i) {
    const gguf::Value& item = array.items[i];
    if (!item.is_integer() || item.AsInt() <= 0) {
      return InvalidArgument("model metadata: '" + m.Key(suffix) + "' must hold positive integers");
    }
    out.push_back(item.AsInt());
  }
  return out;
}

}  // namespace

bool ModelConfig::IsSlidingLayer(int64_t layer) const {
  if (sliding_window <= 0) return false;
  if (!sliding_layers.empty()) return sliding_layers[layer] != 0;
  if (sliding_window_pattern <= 0) return true;
  return (layer + 1) % sliding_window_pattern != 0;
}

int64_t ModelConfig::LayerQSize(int64_t layer) const {
  return n_heads * LayerAttention(layer).head_dim;
}

int64_t ModelConfig::LayerKvSize(int64_t layer) const {
  if (IsLinearLayer(layer)) return 0;  // a recurrent state instead of K/V
  const LayerAttentionConfig la = LayerAttention(layer);
  return la.n_kv_heads * la.head_dim;
}

int64_t ModelConfig::LayerFfnSize(int64_t layer) const {
  return layer_ffn_size.empty() ? ffn_size : layer_ffn_size[layer];
}

int64_t ModelConfig::MaxQSize() const {
  if (n_layers <= 0) return q_size();
  int64_t m = 0;
  for (int64_t l = 0; l < n_layers; ++l) m = std::max(m, LayerQSize(l));
  return m;
}

int64_t ModelConfig::MaxKvSize() const {
  if (n_layers <= 0) return kv_size();
  int64_t m = 0;
  for (int64_t l = 0; l < n_layers; ++l) m = std::max(m, LayerKvSize(l));
  return m;
}

int64_t ModelConfig::MaxFfnSize() const {
  if (n_layers <= 0) return ffn_size;
  int64_t m = shared_expert_ffn_size;  // (run through the dense FFN's buffers)
  for (int64_t l = 0; l < n_layers; ++l) m = std::max(m, LayerFfnSize(l));
  return m;
}

int64_t ModelConfig::MaxHeadDim() const {
  if (n_layers <= 0) return head_dim;
  int64_t m = 0;
  for (int64_t l = 0; l < n_layers; ++l) m = std::max(m, LayerAttention(l).head_dim);
  return m;
}

LayerAttentionConfig ModelConfig::LayerAttention(int64_t layer) const {
  LayerAttentionConfig out;
  const bool sliding = IsSlidingLayer(layer);
  out.head_dim = sliding && head_dim_swa > 0 ? head_dim_swa : head_dim;
  out.rope_dims = sliding && rope_dims_swa > 0 ? rope_dims_swa : rope_dims;
  out.n_kv_heads = layer_n_kv_heads.empty() ? n_kv_heads : layer_n_kv_heads[layer];
  out.kv_layer = n_kv_layers > 0 && layer >= n_kv_layers ? n_kv_layers - (sliding ? 2 : 1) : layer;
  out.use_rope = no_rope_layer_interval <= 0 || (layer + 1) % no_rope_layer_interval != 0;
  out.rope_attn_factor = rope_attn_factor;
  if (sliding) {
    out.sliding_window = static_cast<int>(sliding_window);
    out.rope_base = rope_base_local;
    out.rope_freq_scale = rope_freq_scale_local;
    out.use_rope_freq_factors = false;
    if (rope_yarn && rope_yarn_sliding) {
      out.rope_ext_factor = 1.0f;
      out.rope_attn_factor = YarnAttnFactor(*this);
    }
  } else {
    out.sliding_window = 0;
    out.rope_base = rope_base;
    out.rope_freq_scale = rope_freq_scale;
    out.use_rope_freq_factors = has_rope_freq_factors || rope_original_context > 0;
    if (rope_yarn) {
      out.rope_ext_factor = 1.0f;
      out.rope_attn_factor = YarnAttnFactor(*this);
    }
  }
  return out;
}

StatusOr<ModelConfig> ModelConfig::FromGguf(const gguf::GgufFile& file) {
  auto arch_name = file.GetString("general.architecture");
  if (!arch_name.ok()) {
    return InvalidArgument("model metadata: missing 'general.architecture'");
  }
  if (IsEncoderArchitecture(*arch_name)) {
    return Unimplemented("'" + *arch_name +
                         "' is an encoder (an embedding model), which only "
                         "`radixlm serve --is-embedding` runs (model/encoder/encoder_model.h)");
  }
  const ModelFamily* family = FindModelFamily(*arch_name);
  if (family == nullptr) {
    return Unimplemented("unsupported model architecture '" + *arch_name +
                         "' (general.architecture); supported: " + SupportedArchitectures());
  }
  ModelConfig c;
  c.arch = std::string(family->name);
  const std::string& a = *arch_name;
  const ArchMetadata m(file, a);

  RADIXLM_ASSIGN_OR_RETURN(c.n_layers, m.Positive("block_count"));
  // Multi-token-prediction layers after the decoder's: not run in the decoder's forward pass.
  RADIXLM_ASSIGN_OR_RETURN(const int64_t nextn, file.GetIntOr(a + ".nextn_predict_layers", 0));
  if (nextn < 0 || nextn >= c.n_layers) {
    return InvalidArgument("model metadata: '" + a + ".nextn_predict_layers' (" +
                           std::to_string(nextn) + ") must be in [0, block_count)");
  }
  c.n_layers -= nextn;
  c.nextn_layers = nextn;
  RADIXLM_ASSIGN_OR_RETURN(c.hidden_size, m.Positive("embedding_length"));
  RADIXLM_ASSIGN_OR_RETURN(c.n_heads, m.Positive("attention.head_count"));
  // feed_forward_length and head_count_kv: a number, or one per layer (as llama.cpp reads
  // them); with an array the scalar is the widest layer's.
  RADIXLM_ASSIGN_OR_RETURN(c.layer_ffn_size, ReadPerLayer(m, "feed_forward_length", c.n_layers));
  if (c.layer_ffn_size.empty()) {
    RADIXLM_ASSIGN_OR_RETURN(c.ffn_size, m.Positive("feed_forward_length"));
  } else {
    c.ffn_size = *std::max_element(c.layer_ffn_size.begin(), c.layer_ffn_size.end());
  }
  RADIXLM_ASSIGN_OR_RETURN(c.layer_n_kv_heads,
                           ReadPerLayer(m, "attention.head_count_kv", c.n_layers));
  if (c.layer_n_kv_heads.empty()) {
    RADIXLM_ASSIGN_OR_RETURN(c.n_kv_heads, m.PositiveOr("attention.head_count_kv", c.n_heads));
  } else {
    c.n_kv_heads = *std::max_element(c.layer_n_kv_heads.begin(), c.layer_n_kv_heads.end());
    for (int64_t kv : c.layer_n_kv_heads) {
      if (c.n_heads % kv != 0) {
        return InvalidArgument("model metadata: head_count (" + std::to_string(c.n_heads) +
                               ") is not a multiple of a layer's head_count_kv (" +
                               std::to_string(kv) + ")");
      }
    }
  }
  if (c.hidden_size % c.n_heads != 0 && !m.Has("attention.key_length")) {
    return InvalidArgument(
        "model metadata: embedding_length is not a multiple of head_count "
        "and '" +
        a + ".attention.key_length' is absent");
  }
  RADIXLM_ASSIGN_OR_RETURN(c.head_dim,
                           m.PositiveOr("attention.key_length", c.hidden_size / c.n_heads));
  RADIXLM_ASSIGN_OR_RETURN(int64_t value_dim, m.PositiveOr("attention.value_length", c.head_dim));
  if (c.head_dim % 2 != 0) {
    return InvalidArgument("model metadata: head dimension must be even for RoPE");
  }
  if (c.n_heads % c.n_kv_heads != 0) {
    return InvalidArgument("model metadata: head_count (" + std::to_string(c.n_heads) +
                           ") is not a multiple of head_count_kv (" + std::to_string(c.n_kv_heads) +
                           ")");
  }
  RADIXLM_ASSIGN_OR_RETURN(c.context_length, m.PositiveOr("context_length", 4096));
  RADIXLM_ASSIGN_OR_RETURN(double eps,
                           file.GetFloatOr(a + ".attention.layer_norm_rms_epsilon", 1e-6));
  if (!(eps > 0.0)) {
    return InvalidArgument("model metadata: '" + a +
                           ".attention.layer_norm_rms_epsilon' must be positive");
  }
  c.rms_norm_eps = static_cast<float>(eps);
  RADIXLM_ASSIGN_OR_RETURN(double base, file.GetFloatOr(a + ".rope.freq_base", 10000.0));
  if (!(base > 0.0)) {
    return InvalidArgument("model metadata: '" + a + ".rope.freq_base' must be positive");
  }
  c.rope_base = static_cast<float>(base);
  c.rope_base_local = c.rope_base;
  RADIXLM_ASSIGN_OR_RETURN(c.rope_freq_scale, ReadRopeFreqScale(file, a, &c.rope_yarn));
  if (c.rope_yarn) {
    RADIXLM_ASSIGN_OR_RETURN(
        c.rope_yarn_original_context,
        m.PositiveOr("rope.scaling.original_context_length", c.context_length));
  }
  RADIXLM_ASSIGN_OR_RETURN(c.rope_attn_factor, m.PositiveFloatOr("rope.scaling.attn_factor", 1.0f));
  RADIXLM_ASSIGN_OR_RETURN(c.rope_dims, m.PositiveOr("rope.dimension_count", c.head_dim));
  if (c.rope_dims > c.head_dim || c.rope_dims % 2 != 0) {
    return InvalidArgument(
        "model metadata: '" + a + ".rope.dimension_count' (" + std::to_string(c.rope_dims) +
        ") must be even and at most the head dimension (" + std::to_string(c.head_dim) + ")");
  }
  if (file.FindTensor(kRopeFactorsLongName) != nullptr ||
      file.FindTensor(kRopeFactorsShortName) != nullptr) {
    RADIXLM_ASSIGN_OR_RETURN(
        c.rope_original_context,
        m.PositiveOr("rope.scaling.original_context_length", c.context_length));
  }
  // Q, K and V in one matrix where the file has one (llama.cpp's create_tensor_qkv).
  c.fused_qkv = file.FindTensor("blk.0.attn_qkv.weight") != nullptr;
  RADIXLM_ASSIGN_OR_RETURN(c.vocab_size, ReadVocabSize(file, c.hidden_size));
  c.attention_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));

  RADIXLM_RETURN_IF_ERROR(family->configure(m, &c));
  // (A latent cache's V is the first mla_kv_rank values of its key row.)
  if (value_dim != (c.IsMla() ? c.mla_kv_rank : c.head_dim)) {
    return Unimplemented("model metadata: key_length (" + std::to_string(c.head_dim) +
                         ") != value_length (" + std::to_string(value_dim) + ")");
  }
  // (The gated attention block of hybrid models rotates the first rope_dims values NeoX-style
  // itself: gated_attention.h.)
  if (c.rope_dims != c.head_dim && c.rope_layout == RopeLayout::kNeox && !c.attn_output_gate) {
    return Unimplemented("model metadata: '" + a + ".rope.dimension_count' (" +
                         std::to_string(c.rope_dims) + ") != head dimension (" +
                         std::to_string(c.head_dim) +
                         "): partial rotary embedding with NeoX RoPE is not supported");
  }

  if (c.layer_tensors.empty()) c.layer_tensors.assign(c.n_layers, StandardLayerTensors(c));
  if (c.n_experts > 0 &&
      (c.n_experts_used <= 0 || c.n_experts_used > c.n_experts || c.expert_ffn_size <= 0)) {
    return Internal("model family '" + c.arch + "' set " + std::to_string(c.n_experts) +
                    " experts without a valid used count or expert width");
  }
  if (static_cast<int64_t>(c.layer_tensors.size()) != c.n_layers) {
    return Internal("model family '" + c.arch + "' described " +
                    std::to_string(c.layer_tensors.size()) + " layers' tensors for " +
                    std::to_string(c.n_layers) + " layers");
  }
  return c;
}

namespace {

// Parameters of the tensors layer `layer` has, counting `experts` of its experts.
int64_t LayerParameters(const ModelConfig& c, int64_t layer, int64_t experts) {
  int64_t n = 0;
  for (int t = 0; t < kNumLayerTensors; ++t) {
    const auto tensor = static_cast<LayerTensor>(t);
    if (c.layer_tensors[layer][tensor] == TensorNeed::kAbsent) continue;
    const ExpectedShape shape = LayerTensorShape(c, tensor, layer);
    int64_t count = 1;
    // (The third dimension of attn_k_b / attn_v_b counts heads, not experts.)
    const bool per_head = tensor == LayerTensor::kAttnKB || tensor == LayerTensor::kAttnVB;
    for (int d = 0; d < shape.n_dims; ++d) {
      count *= d == 2 && !per_head ? experts : shape.dims[d];
    }
    n += count;
  }
  return n;
}

int64_t Parameters(const ModelConfig& c, bool active) {
  int64_t n = 2 * c.vocab_size * c.hidden_size + c.hidden_size;  // embedding, head, final norm
  const auto layers = std::min<int64_t>(c.n_layers, static_cast<int64_t>(c.layer_tensors.size()));
  for (int64_t i = 0; i < layers; ++i) {
    n += LayerParameters(c, i, active ? c.n_experts_used : c.n_experts);
  }
  return n;
}

}  // namespace

int64_t ModelConfig::ActiveParameters() const { return Parameters(*this, true); }
int64_t ModelConfig::TotalParameters() const { return Parameters(*this, false); }

std::string ModelConfig::DebugString() const {
  std::ostringstream s;
  s << arch << ": layers=" << n_layers << " hidden=" << hidden_size << " ffn=" << ffn_size
    << " heads=" << n_heads << "/" << n_kv_heads << " head_dim=" << head_dim
    << " vocab=" << vocab_size << " ctx=" << context_length << " rope_base=" << rope_base;
  if (sliding_window > 0) {
    s << " sliding_window=" << sliding_window << " (pattern " << sliding_window_pattern
      << ", local rope_base=" << rope_base_local << ")";
  }
  if (rope_freq_scale != 1.0f) s << " rope_freq_scale=" << rope_freq_scale;
  if (rope_yarn) s << " yarn(original_ctx=" << rope_yarn_original_context << ")";
  if (rope_dims > 0 && rope_dims != head_dim) s << " rope_dims=" << rope_dims;
  if (no_rope_layer_interval > 0) s << " no_rope_every=" << no_rope_layer_interval;
  if (mrope()) {
    s << " mrope=" << mrope_sections[0] << "/" << mrope_sections[1] << "/" << mrope_sections[2];
    if (mrope_interleaved) s << "/" << mrope_section_e << " interleaved";
  }
  if (n_deepstack_layers > 0) s << " deepstack=" << n_deepstack_layers;
  if (head_dim_swa > 0) s << " head_dim_swa=" << head_dim_swa;
  if (!layer_n_kv_heads.empty()) s << " per_layer_kv_heads";
  if (!layer_ffn_size.empty()) s << " per_layer_ffn";
  if (n_kv_layers > 0) s << " kv_layers=" << n_kv_layers;
  if (v_norm) s << " v_norm";
  if (IsMla()) {
    s << " mla(kv_rank=" << mla_kv_rank << " q_rank=" << mla_q_rank << " key=" << mla_key_dim
      << " value=" << mla_value_dim << ")";
  }
  if (per_layer_input_size > 0) s << " per_layer_input=" << per_layer_input_size;
  if (!pre_norms) s << " no_pre_norms";
  if (post_norms) s << " post_norms";
  if (qk_norm) s << (qk_norm_per_head ? " qk_norm" : " qk_norm_row");
  if (fused_qkv) s << " fused_qkv";
  if (fused_gate_up) s << " fused_gate_up";
  if (n_experts > 0) {
    s << " experts=" << n_experts_used << "/" << n_experts << " expert_ffn=" << expert_ffn_size;
    if (shared_expert_ffn_size > 0) s << " shared_ffn=" << shared_expert_ffn_size;
    if (expert_gating == ExpertGating::kSigmoid) s << " sigmoid_gating";
    if (n_expert_groups > 1) s << " groups=" << n_expert_groups_used << "/" << n_expert_groups;
    if (moe_dense_branch) s << " dense_branch";
  }
  if (attn_logit_softcap > 0.0f) s << " attn_softcap=" << attn_logit_softcap;
  if (final_logit_softcap > 0.0f) s << " final_softcap=" << final_logit_softcap;
  if (residual_scale != 1.0f) s << " residual_scale=" << residual_scale;
  if (output_scale != 1.0f) s << " output_scale=" << output_scale;
  return s.str();
}

}  // namespace radixlm::model
