// FinishReason: why a request stopped, shaped like SGLang's finish_reason JSON:
//   {"type": "stop", "matched": <token id>}     an EOS / EOG id or one of stop_token_ids
//   {"type": "stop", "matched": "<string>"}     one of the stop strings
//   {"type": "length", "length": N}             max_new_tokens (or the context) reached
//   {"type": "abort", "message": "..."}         aborted by the user or by the engine
//   {"type": "abort", "message": "...", "status_code": 503}   an abort the HTTP server answers
//                                               with that status (a non-streaming request)
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace radixlm {

struct FinishReason {
  enum class Kind { kStopToken, kStopString, kLength, kAbort };

  Kind kind = Kind::kLength;
  int32_t matched_token = -1;  // kStopToken
  std::string matched_text;    // kStopString: the stop string; kAbort: the message
  int64_t length = 0;          // kLength: completion tokens
  int32_t status_code = 0;     // kAbort: the HTTP status SGLang gives it (503, ...); 0: none

  static FinishReason StopToken(int32_t token) { return {Kind::kStopToken, token, "", 0, 0}; }
  static FinishReason StopString(std::string s) {
    return {Kind::kStopString, -1, std::move(s), 0, 0};
  }
  static FinishReason Length(int64_t n) { return {Kind::kLength, -1, "", n, 0}; }
  static FinishReason Abort(std::string message, int32_t status_code = 0) {
    return {Kind::kAbort, -1, std::move(message), 0, status_code};
  }

  bool is_abort() const { return kind == Kind::kAbort; }
  // "stop" | "length" | "abort" (the OpenAI finish_reason string too).
  const char* type() const;
  nlohmann::json ToJson() const;
  bool operator==(const FinishReason&) const = default;
};

}  // namespace radixlm
