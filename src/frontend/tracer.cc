#include "frontend/tracer.h"

#include <algorithm>

namespace radixlm::frontend {

TraceResult TraceProgram(const std::function<void(State&)>& body, const ChatRoles& roles) {
  auto runtime = std::make_shared<Runtime>();
  runtime->roles = &roles;
  TraceResult result;
  {
    State s(runtime);
    body(s);
    result.ir = s.ir();
    std::lock_guard<std::mutex> lock(runtime->trace_mu);
    result.constant_prefix =
        runtime->constant_prefix.has_value() ? *runtime->constant_prefix : s.text();
  }
  return result;
}

std::string CommonPrefix(const std::vector<std::string>& texts) {
  if (texts.empty()) return "";
  size_t n = texts[0].size();
  for (const std::string& t : texts) {
    n = std::min(n, t.size());
    n = static_cast<size_t>(
        std::mismatch(t.begin(), t.begin() + static_cast<ptrdiff_t>(n), texts[0].begin()).first -
        t.begin());
  }
  return texts[0].substr(0, n);
}

}  // namespace radixlm::frontend
