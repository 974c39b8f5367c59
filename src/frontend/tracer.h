// The tracer: runs a program without a model to find its constant prefix — the text it has
// built when it first needs the model (a gen, a select or a fork). Generated values read as
// "" while tracing, so a program's control flow should not depend on them before that point.
// RunBatch prefills the prefix shared by a batch's traces once, before the batch starts.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "frontend/chat_roles.h"
#include "frontend/ir.h"
#include "frontend/state.h"

namespace radixlm::frontend {

struct TraceResult {
  std::string constant_prefix;  // the whole text if the program never needs the model
  std::shared_ptr<ProgramIr> ir;
};

TraceResult TraceProgram(const std::function<void(State&)>& body, const ChatRoles& roles);

// The longest common prefix of the given strings ("" for none).
std::string CommonPrefix(const std::vector<std::string>& texts);

}  // namespace radixlm::frontend
