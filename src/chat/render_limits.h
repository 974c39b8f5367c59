// Guards against runaway templates. Exceeding one is a ResourceExhausted error, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace radixlm::chat {

struct RenderLimits {
  size_t max_output_bytes = 16u << 20;  // all text produced, captured blocks included
  int max_call_depth = 64;              // nested macro calls
  uint64_t max_steps = 20'000'000;      // evaluated statements + expressions
  // When set, strftime_now() formats this Unix time in UTC instead of the local time now, so
  // a template that prints the date renders the same on any day (the golden tests).
  std::optional<int64_t> fixed_now_unix_s;
};

}  // namespace radixlm::chat
