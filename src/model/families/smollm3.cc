// smollm3 (SmolLM3; llama.cpp's src/models/smollm3.cpp): llama's block with normal RoPE on
// three layers of every four; every fourth layer (3, 7, 11, ...) attends without RoPE (NoPE).
// llama.cpp fixes the interval at 4 and reads no key for it.
#include "model/families/family.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace smollm3_family {
namespace {

Status Configure(const ArchMetadata&, ModelConfig* c) {
  c->rope_layout = RopeLayout::kNormal;
  c->no_rope_layer_interval = 4;
  return Status::Ok();
}

constexpr std::string_view kArchitectures[] = {"smollm3"};

}  // namespace
}  // namespace smollm3_family

const ModelFamily& SmolLm3Family() {
  static const ModelFamily family{.name = "smollm3",
                                  .architectures = smollm3_family::kArchitectures,
                                  .configure = &smollm3_family::Configure};
  return family;
}

}  // namespace radixlm::model
