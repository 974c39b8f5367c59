// olmo2 (OLMo 2, and OLMo 3's sliding-window layout; llama.cpp's src/models/olmo2.cpp): no norm
// on a block's input, RMSNorm on each block's output before its residual add, RMSNorm of the
// whole Q and K projections (not per head) before NeoX RoPE, SwiGLU. With a sliding window, three
// sliding layers per global one, the sliding ones with unscaled RoPE.
#include "model/families/family.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace olmo2_family {
namespace {

Status Configure(const ArchMetadata& metadata, ModelConfig* c) {
  c->rope_layout = RopeLayout::kNeox;
  c->pre_norms = false;
  c->post_norms = true;
  c->qk_norm = true;
  c->qk_norm_per_head = false;
  if (metadata.Has("attention.sliding_window")) {
    RADIXLM_ASSIGN_OR_RETURN(c->sliding_window, metadata.Positive("attention.sliding_window"));
    RADIXLM_ASSIGN_OR_RETURN(c->sliding_window_pattern,
                             metadata.PositiveOr("attention.sliding_window_pattern", 4));
    RADIXLM_ASSIGN_OR_RETURN(c->rope_base_local,
                             metadata.PositiveFloatOr("rope.freq_base_swa", c->rope_base));
    c->rope_freq_scale_local = 1.0f;
  }
  return Status::Ok();
}

constexpr std::string_view kArchitectures[] = {"olmo2"};

}  // namespace
}  // namespace olmo2_family

const ModelFamily& Olmo2Family() {
  static const ModelFamily family{.name = "olmo2",
                                  .architectures = olmo2_family::kArchitectures,
                                  .configure = &olmo2_family::Configure};
  return family;
}

}  // namespace radixlm::model
