#include "util/check.h"

#include <cstdio>
#include <cstdlib>

namespace radixlm::internal {

CheckFailure::CheckFailure(const char* file, int line, std::string_view condition)
    : header_(std::string(file) + ":" + std::to_string(line) +
              ": CHECK failed: " + std::string(condition)) {}

CheckFailure::~CheckFailure() {
  std::string text = std::move(header_);
  const std::string message = stream_.str();
  if (!message.empty()) text += ": " + message;
  text += "\n";
  // One write, so the line is not interleaved with other threads' output.
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
  std::abort();
}

}  // namespace radixlm::internal
