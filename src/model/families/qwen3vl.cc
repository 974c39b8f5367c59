// qwen3vl (the language side of Qwen3-VL; llama.cpp's src/models/qwen3vl.cpp): qwen3's block
// (NeoX pairs, per-head RMSNorm of Q and K, no biases) with interleaved M-RoPE
// (rope.dimension_sections as LLAMA_ROPE_TYPE_IMROPE reads them, model/rotary.h: for text the
// t, h and w pairs all take the token's position and the fourth section's pairs position 0) and
// deepstack: n_deepstack_layers extra slices in each image row, slice k + 1 added to the hidden
// state after layer k (ModelConfig::n_deepstack_layers). A text-only batch is qwen3 with that
// RoPE. Image tokens get (p0, p0 + row, p0 + col) from the engine, as for qwen2vl.
// qwen3vlmoe (Qwen3-VL-30B-A3B, -235B-A22B) is this with qwen3moe's FFN (qwen3vlmoe.cc).
#include "model/families/family.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace qwen3vl_family {
namespace {

Status Configure(const ArchMetadata& m, ModelConfig* c) {
  c->rope_layout = RopeLayout::kNeox;
  c->qk_norm = true;
  const std::string key = m.Key("rope.dimension_sections");
  RADIXLM_ASSIGN_OR_RETURN(const auto s, ReadRopeSections(m));
  if (s[0] + s[1] + s[2] + s[3] > c->head_dim / 2) {  // (ggml_mrope_cache_init's bound)
    return InvalidArgument("model metadata: '" + key + "' sums to more than the head's " +
                           std::to_string(c->head_dim / 2) + " pairs");
  }
  c->mrope_sections = {s[0], s[1], s[2]};
  c->mrope_section_e = s[3];
  c->mrope_interleaved = true;
  if (m.Has("n_deepstack_layers")) {
    auto n = m.file().GetInt(m.Key("n_deepstack_layers"));
    if (!n.ok() || *n < 0) {
      return InvalidArgument("model metadata: '" + m.Key("n_deepstack_layers") +
                             "' must be an integer >= 0");
    }
    // llama.cpp adds slice k + 1 after layer k for k < min(deepstack, layers); a slice the
    // last layer would take is added to rows the last layer has already dropped there, so
    // every deepstack layer is before the last.
    if (*n >= c->n_layers) {
      return Unimplemented("model metadata: '" + m.Key("n_deepstack_layers") + "' is " +
                           std::to_string(*n) + "; at most " + std::to_string(c->n_layers - 1) +
                           " (the layers but the last) are supported");
    }
    c->n_deepstack_layers = *n;
  }
  return Status::Ok();
}

constexpr std::string_view kArchitectures[] = {"qwen3vl"};

}  // namespace
}  // namespace qwen3vl_family

const ModelFamily& Qwen3VlFamily() {
  static const ModelFamily family{.name = "qwen3vl",
                                  .architectures = qwen3vl_family::kArchitectures,
                                  .configure = &qwen3vl_family::Configure};
  return family;
}

}  // namespace radixlm::model
