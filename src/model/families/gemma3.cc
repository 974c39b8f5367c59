// gemma3 (Gemma 3 text models; llama.cpp's src/models/gemma3.cpp): five sliding-window layers
// per global one, local layers with RoPE base 10k (rope.freq_base_swa) unscaled, NeoX RoPE,
// per-head Q/K norms, post-norms on both blocks, embeddings scaled by sqrt(hidden), Q scaled before
// Q·K, GELU.
#include <cmath>

#include "model/families/family.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace gemma3_family {
namespace {

Status Configure(const ArchMetadata& metadata, ModelConfig* c) {
  c->rope_layout = RopeLayout::kNeox;
  c->sliding_window_pattern = 6;
  RADIXLM_ASSIGN_OR_RETURN(c->rope_base_local,
                           metadata.PositiveFloatOr("rope.freq_base_swa", 10000.0f));
  c->rope_freq_scale_local = 1.0f;
  RADIXLM_ASSIGN_OR_RETURN(c->sliding_window, metadata.Positive("attention.sliding_window"));
  // Gemma 3 has none; llama.cpp reads it for derived checkpoints.
  RADIXLM_ASSIGN_OR_RETURN(c->final_logit_softcap,
                           metadata.PositiveFloatOr("final_logit_softcapping", 0.0f));
  c->qk_norm = true;
  c->post_norms = true;
  c->scale_embeddings = true;
  c->embedding_scale = std::sqrt(static_cast<float>(c->hidden_size));
  c->scale_query = true;
  c->ffn_activation = FfnActivation::kGeluTanh;
  // query_pre_attn_scalar: head_dim, except the 27B model (62 layers): hidden / n_heads.
  if (c->n_layers == 62) {
    c->attention_scale = 1.0f / std::sqrt(static_cast<float>(c->hidden_size / c->n_heads));
  }
  return Status::Ok();
}

constexpr std::string_view kArchitectures[] = {"gemma3"};

}  // namespace
}  // namespace gemma3_family

const ModelFamily& Gemma3Family() {
  static const ModelFamily family{.name = "gemma3",
                                  .architectures = gemma3_family::kArchitectures,
                                  .configure = &gemma3_family::Configure};
  return family;
}

}  // namespace radixlm::model
