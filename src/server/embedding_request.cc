#include "server/embedding_request.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstring>
#include <nlohmann/json.hpp>

#include "sampling/pooling.h"

namespace radixlm::server {
namespace {

using json = nlohmann::json;

bool IsTokenList(const json& v) {
  if (!v.is_array() || v.empty()) return false;
  for (const json& id : v) {
    if (!id.is_number_integer()) return false;
  }
  return true;
}

GenerateRequest TextRequest(std::string text) {
  GenerateRequest r;
  r.text = std::move(text);
  r.embed = true;
  return r;
}

GenerateRequest IdsRequest(const json& ids) {
  GenerateRequest r;
  r.input_ids = ids.get<std::vector<int32_t>>();
  r.embed = true;
  return r;
}

Status CheckCount(size_t n, const std::string& field) {
  if (n == 0) return InvalidArgument("'" + field + "' must not be empty");
  if (n > kMaxEmbeddingInputs) {
    return InvalidArgument("'" + field + "' has " + std::to_string(n) + " inputs; at most " +
                           std::to_string(kMaxEmbeddingInputs) + " per request");
  }
  return Status::Ok();
}

// Token ids out of int32 range are refused here; the engine checks them against the vocabulary.
Status CheckIds(const json& ids, const std::string& field) {
  for (const json& id : ids) {
    const auto v = id.get<int64_t>();
    if (v < 0 || v > INT32_MAX) {
      return InvalidArgument("'" + field + "' has the token id " + std::to_string(v) +
                             ", which is not a token id");
    }
  }
  return Status::Ok();
}

// A string, a list of strings, a list of ids, or a list of lists of ids.
StatusOr<EmbeddingCall> ParseInputs(const json& input, const std::string& field,
                                    bool strings_allowed, bool ids_allowed) {
  const std::string shapes = strings_allowed && ids_allowed
                                 ? "a string, a list of strings, a list of token ids or a list "
                                   "of lists of token ids"
                             : strings_allowed ? "a string or a list of strings"
                                               : "a list of token ids or a list of such lists";
  EmbeddingCall call;
  if (input.is_string() && strings_allowed) {
    if (input.get<std::string>().empty()) return InvalidArgument("'" + field + "' is empty");
    call.requests.push_back(TextRequest(input.get<std::string>()));
    return call;
  }
  if (!input.is_array()) return InvalidArgument("'" + field + "' must be " + shapes);
  RADIXLM_RETURN_IF_ERROR(CheckCount(input.size(), field));
  if (ids_allowed && IsTokenList(input)) {
    RADIXLM_RETURN_IF_ERROR(CheckIds(input, field));
    call.requests.push_back(IdsRequest(input));
    return call;
  }
  call.batch = true;
  for (size_t i = 0; i < input.size(); ++i) {
    const json& item = input[i];
    const std::string where = field + "[" + std::to_string(i) + "]";
    if (strings_allowed && item.is_string()) {
      if (item.get<std::string>().empty()) return InvalidArgument("'" + where + "' is empty");
      call.requests.push_back(TextRequest(item.get<std::string>()));
    } else if (ids_allowed && IsTokenList(item)) {
      RADIXLM_RETURN_IF_ERROR(CheckIds(item, where));
      call.requests.push_back(IdsRequest(item));
    } else {
      return InvalidArgument("'" + where + "' is neither of " + shapes);
    }
  }
  return call;
}

}  // namespace

StatusOr<EmbeddingCall> ParseOpenAiEmbedding(const json& body) {
  if (!body.is_object()) return InvalidArgument("the body must be a JSON object");
  if (!body.contains("input") || body["input"].is_null()) {
    return InvalidArgument("'input' is required");
  }
  RADIXLM_ASSIGN_OR_RETURN(EmbeddingCall call, ParseInputs(body["input"], "input", true, true));
  if (body.contains("encoding_format") && !body["encoding_format"].is_null()) {
    const json& f = body["encoding_format"];
    if (!f.is_string() || (f != "float" && f != "base64")) {
      return InvalidArgument("'encoding_format' must be \"float\" or \"base64\", got " + f.dump());
    }
    call.base64 = f == "base64";
  }
  if (body.contains("dimensions") && !body["dimensions"].is_null()) {
    const json& d = body["dimensions"];
    if (!d.is_number_integer() || d.get<int64_t>() < 1) {
      return InvalidArgument("'dimensions' must be a positive integer, got " + d.dump());
    }
    call.dimensions = d.get<int64_t>();
  }
  return call;
}

StatusOr<EmbeddingCall> ParseNativeEmbedding(const json& body) {
  if (!body.is_object()) return InvalidArgument("the body must be a JSON object");
  const bool has_text = body.contains("text") && !body["text"].is_null();
  const bool has_ids = body.contains("input_ids") && !body["input_ids"].is_null();
  if (has_text == has_ids) {
    return InvalidArgument(has_text ? "Only one of text and input_ids may be provided."
                                    : "Either text or input_ids should be provided.");
  }
  RADIXLM_ASSIGN_OR_RETURN(EmbeddingCall call,
                           has_text ? ParseInputs(body["text"], "text", true, false)
                                    : ParseInputs(body["input_ids"], "input_ids", false, true));
  if (body.contains("rid") && !body["rid"].is_null()) {
    const json& rid = body["rid"];
    if (rid.is_string() && !call.batch) {
      call.requests[0].rid = rid.get<std::string>();
    } else if (rid.is_array() && call.batch && rid.size() == call.requests.size()) {
      for (size_t i = 0; i < rid.size(); ++i) {
        if (!rid[i].is_string()) return InvalidArgument("'rid' must be a list of strings");
        call.requests[i].rid = rid[i].get<std::string>();
      }
    } else {
      return InvalidArgument(
          "'rid' must be a string (one input) or a list of one string per "
          "input");
    }
  }
  return call;
}

std::vector<float> TruncateEmbedding(std::vector<float> v, std::optional<int64_t> dimensions) {
  if (!dimensions.has_value() || *dimensions >= static_cast<int64_t>(v.size())) return v;
  v.resize(static_cast<size_t>(*dimensions));
  L2Normalize(v);
  return v;
}

std::string EmbeddingToBase64(const std::vector<float>& v) {
  std::string bytes(v.size() * 4, '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t u = std::bit_cast<uint32_t>(v[i]);
    for (int b = 0; b < 4; ++b) bytes[i * 4 + b] = static_cast<char>((u >> (8 * b)) & 0xff);
  }
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t chunk = 0;
    for (size_t j = 0; j < 3; ++j) {
      chunk = chunk << 8 | (j < n ? static_cast<uint8_t>(bytes[i + j]) : 0u);
    }
    for (size_t j = 0; j < 4; ++j) {
      out += j <= n ? kAlphabet[(chunk >> (18 - 6 * j)) & 0x3f] : '=';
    }
  }
  return out;
}

}  // namespace radixlm::server
