// Guards against runaway templates. Exceeding one is a ResourceExhausted error, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>

namespace radixlm::chat {

struct RenderLimits {
  size_t max_output_bytes = 16u << 20;  // all text produced, captured blocks included
  int max_call_depth = 64;              // nested macro calls
  uint64_t max_steps = 20'000'000;      // evaluated statements + expressions
};

}  // namespace radixlm::chat
