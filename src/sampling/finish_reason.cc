#include "sampling/finish_reason.h"

#include <nlohmann/json.hpp>

namespace radixlm {

const char* FinishReason::type() const {
  switch (kind) {
    case Kind::kStopToken:
    case Kind::kStopString:
      return "stop";
    case Kind::kLength:
      return "length";
    case Kind::kAbort:
      return "abort";
  }
  return "abort";
}

nlohmann::json FinishReason::ToJson() const {
  nlohmann::json j;
  j["type"] = type();
  switch (kind) {
    case Kind::kStopToken:
      j["matched"] = matched_token;
      break;
    case Kind::kStopString:
      j["matched"] = matched_text;
      break;
    case Kind::kLength:
      j["length"] = length;
      break;
    case Kind::kAbort:
      j["message"] = matched_text;
      if (status_code != 0) j["status_code"] = status_code;
      break;
  }
  return j;
}

}  // namespace radixlm
