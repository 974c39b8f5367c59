// A minimal leveled logger for the server (stderr, one line per call, thread-safe).
#pragma once

#include <string>
#include <string_view>

namespace radixlm::server {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// "debug" | "info" | "warning" | "error" (case-sensitive); false for anything else.
bool ParseLogLevel(std::string_view name, LogLevel* out);
void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);
// Writes "[time] LEVEL message" when level is enabled.
void Log(LogLevel level, const std::string& message);

}  // namespace radixlm::server
