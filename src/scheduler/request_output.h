// RequestOutput: what the scheduler reports about one request after a step (or on abort).
//
// Outputs are deltas: each carries the tokens, text and logprobs produced since the previous
// output of the same request, so concatenating them gives the whole result. The last output of
// a request has `chunk.finish_reason` set. Input (prompt) logprobs, when asked for, arrive once, in
// the first output that carries tokens (or the final one when max_new_tokens == 0).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sampling/generate_output.h"

namespace radixlm {

struct RequestOutput {
  uint64_t id = 0;       // the scheduler-level request id
  GenerateOutput chunk;  // the engine's own chunk type; the engine adds index and meta.id
};

}  // namespace radixlm
