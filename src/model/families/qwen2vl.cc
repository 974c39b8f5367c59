// qwen2vl (the language side of Qwen2-VL and Qwen2.5-VL; llama.cpp's src/models/qwen2vl.cpp):
// qwen2's block (NeoX pairs, Q/K/V biases) with M-RoPE: rope.dimension_sections splits each
// head's pairs into sections driven by a token's t, h and w positions (model/rotary.h). For
// text every section gets the token's position, so a text-only batch is qwen2's computation
// exactly; an image's tokens get (p0, p0 + row, p0 + col) from the engine
// (SequenceInput::rope_positions). llama.cpp's fourth section (position 0 for text; no Qwen2-VL
// checkpoint has one) is refused, as is RoPE on part of a head (as for every NeoX family).
#include "model/families/family.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace qwen2vl_family {
namespace {

Status ReadSections(const ArchMetadata& m, ModelConfig* c) {
  const std::string key = m.Key("rope.dimension_sections");
  RADIXLM_ASSIGN_OR_RETURN(const auto s, ReadRopeSections(m));
  if (s[3] != 0) {
    return Unimplemented("model metadata: '" + key + "' has a fourth section (" +
                         std::to_string(s[3]) + " pairs); only t, h and w are supported");
  }
  if (s[0] + s[1] + s[2] > c->head_dim) {  // (ggml_mrope_cache_init's bound)
    return InvalidArgument("model metadata: '" + key + "' sums to more than the head size (" +
                           std::to_string(c->head_dim) + ")");
  }
  c->mrope_sections = {s[0], s[1], s[2]};
  return Status::Ok();
}

Status Configure(const ArchMetadata& m, ModelConfig* c) {
  c->rope_layout = RopeLayout::kNeox;
  c->qkv_bias = true;
  return ReadSections(m, c);
}

constexpr std::string_view kArchitectures[] = {"qwen2vl"};

}  // namespace
}  // namespace qwen2vl_family

const ModelFamily& Qwen2VlFamily() {
  static const ModelFamily family{.name = "qwen2vl",
                                  .architectures = qwen2vl_family::kArchitectures,
                                  .configure = &qwen2vl_family::Configure};
  return family;
}

}  // namespace radixlm::model
