// qwen2 (Qwen 2 / 2.5; llama.cpp's src/models/qwen2.cpp): llama's block with NeoX RoPE and
// biases on the Q, K and V projections.
#include "model/families/family.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace qwen2_family {
namespace {

Status Configure(const ArchMetadata&, ModelConfig* c) {
  c->rope_layout = RopeLayout::kNeox;
  c->qkv_bias = true;
  return Status::Ok();
}

constexpr std::string_view kArchitectures[] = {"qwen2"};

}  // namespace
}  // namespace qwen2_family

const ModelFamily& Qwen2Family() {
  static const ModelFamily family{.name = "qwen2",
                                  .architectures = qwen2_family::kArchitectures,
                                  .configure = &qwen2_family::Configure};
  return family;
}

}  // namespace radixlm::model
