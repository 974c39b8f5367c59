// qwen3 (Qwen 3 dense; llama.cpp's src/models/qwen3.cpp): llama's block with NeoX RoPE and a
// per-head RMSNorm of Q and K before RoPE.
#include "model/families/family.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace qwen3_family {
namespace {

Status Configure(const ArchMetadata&, ModelConfig* c) {
  c->rope_layout = RopeLayout::kNeox;
  c->qk_norm = true;
  return Status::Ok();
}

constexpr std::string_view kArchitectures[] = {"qwen3"};

}  // namespace
}  // namespace qwen3_family

const ModelFamily& Qwen3Family() {
  static const ModelFamily family{.name = "qwen3",
                                  .architectures = qwen3_family::kArchitectures,
                                  .configure = &qwen3_family::Configure};
  return family;
}

}  // namespace radixlm::model
