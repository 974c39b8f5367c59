// gemma2 (Gemma 2; llama.cpp's src/models/gemma2.cpp): sliding-window and global layers
// alternating (even layers slide), NeoX RoPE with the same base and scale on both kinds, post-
// norms on both blocks, embeddings scaled by sqrt(hidden), Q scaled before Q·K, attention
// scores and final logits soft-capped (cap * tanh(x / cap)), GELU.
#include <cmath>

#include "model/families/family.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace gemma2_family {
namespace {

Status Configure(const ArchMetadata& metadata, ModelConfig* c) {
  c->rope_layout = RopeLayout::kNeox;
  RADIXLM_ASSIGN_OR_RETURN(c->sliding_window,
                           metadata.PositiveOr("attention.sliding_window", 4096));
  RADIXLM_ASSIGN_OR_RETURN(c->sliding_window_pattern,
                           metadata.PositiveOr("attention.sliding_window_pattern", 2));
  RADIXLM_ASSIGN_OR_RETURN(c->rope_base_local,
                           metadata.PositiveFloatOr("rope.freq_base_swa", c->rope_base));
  c->rope_freq_scale_local = c->rope_freq_scale;
  c->post_norms = true;
  c->scale_embeddings = true;
  c->embedding_scale = std::sqrt(static_cast<float>(c->hidden_size));
  c->scale_query = true;
  c->ffn_activation = FfnActivation::kGeluTanh;
  RADIXLM_ASSIGN_OR_RETURN(c->attn_logit_softcap,
                           metadata.PositiveFloatOr("attn_logit_softcapping", 50.0f));
  RADIXLM_ASSIGN_OR_RETURN(c->final_logit_softcap,
                           metadata.PositiveFloatOr("final_logit_softcapping", 30.0f));
  // query_pre_attn_scalar: head_dim, except the 27B model (46 layers): hidden / n_heads.
  if (c->n_layers == 46) {
    c->attention_scale = 1.0f / std::sqrt(static_cast<float>(c->hidden_size / c->n_heads));
  }
  return Status::Ok();
}

constexpr std::string_view kArchitectures[] = {"gemma2"};

}  // namespace
}  // namespace gemma2_family

const ModelFamily& Gemma2Family() {
  static const ModelFamily family{.name = "gemma2",
                                  .architectures = gemma2_family::kArchitectures,
                                  .configure = &gemma2_family::Configure};
  return family;
}

}  // namespace radixlm::model
