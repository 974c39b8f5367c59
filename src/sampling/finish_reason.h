// FinishReason: why a request stopped, shaped like SGLang's finish_reason JSON:
//   {"type": "stop", "matched": <token id>}     an EOS / EOG id or one of stop_token_ids
//   {"type": "stop", "matched": "<string>"}     one of the stop strings
//   {"type": "length", "length": N}             max_new_tokens (or the context) reached
//   {"type": "abort", "message": "..."}         aborted by the user or by the engine
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

  static FinishReason StopToken(int32_t token) { return {Kind::kStopToken, token, "", 0}; }
  static FinishReason StopString(std::string s) { return {Kind::kStopString, -1, std::move(s), 0}; }
  static FinishReason Length(int64_t n) { return {Kind::kLength, -1, "", n}; }
  static FinishReason Abort(std::string message) {
    return {Kind::kAbort, -1, std::move(message), 0};
  }

  bool is_abort() const { return kind == Kind::kAbort; }
  // "stop" | "length" | "abort" (the OpenAI finish_reason string too).
  const char* type() const;
  nlohmann::json ToJson() const;
  bool operator==(const FinishReason&) const = default;
};

}  // namespace radixlm
