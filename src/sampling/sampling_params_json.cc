// SamplingParams <-> SGLang's `sampling_params` JSON object.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "sampling/sampling_params.h"

namespace radixlm {
namespace {

using json = nlohmann::json;

// "string", "boolean", "array", ... for messages; a float shows its value.
std::string Describe(const json& value) {
  if (value.is_number()) return value.dump();
  if (value.is_string() && value.get_ref<const std::string&>().size() <= 32) {
    return "string " + value.dump();
  }
  return value.type_name();
}

Status WrongType(const char* field, const char* expected, const json& value) {
  return InvalidArgument(std::string(field) + " must be " + expected + ", got " + Describe(value));
}

// The field's value, or null when it is absent or JSON null (both mean: keep the default).
const json* Find(const json& obj, const char* field) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

// An integer in [min, max]; an integral float (5.0) is accepted, as JSON does not tell them apart.
Status ParseInt(const json& value, const char* field, int64_t min, int64_t max, int64_t* out) {
  if (value.is_number_unsigned()) {
    const uint64_t v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(max)) {
      return InvalidArgument(std::string(field) + " is out of range, got " + value.dump());
    }
    *out = static_cast<int64_t>(v);
    return Status::Ok();
  }
  if (value.is_number_integer()) {
    const int64_t v = value.get<int64_t>();
    if (v < min || v > max) {
      return InvalidArgument(std::string(field) + " is out of range, got " + value.dump());
    }
    *out = v;
    return Status::Ok();
  }
  if (value.is_number_float()) {
    const double v = value.get<double>();
    if (std::isfinite(v) && std::floor(v) == v && v >= static_cast<double>(min) &&
        v <= static_cast<double>(max)) {
      *out = static_cast<int64_t>(v);
      return Status::Ok();
    }
  }
  return WrongType(field, "an integer", value);
}

Status ReadInt32(const json& obj, const char* field, int32_t* out) {
  const json* value = Find(obj, field);
  if (value == nullptr) return Status::Ok();
  int64_t v = 0;
  RADIXLM_RETURN_IF_ERROR(ParseInt(*value, field, std::numeric_limits<int32_t>::min(),
                                   std::numeric_limits<int32_t>::max(), &v));
  *out = static_cast<int32_t>(v);
  return Status::Ok();
}

Status ReadFloat(const json& obj, const char* field, float* out) {
  const json* value = Find(obj, field);
  if (value == nullptr) return Status::Ok();
  if (!value->is_number()) return WrongType(field, "a number", *value);
  *out = value->get<float>();
  return Status::Ok();
}

Status ReadBool(const json& obj, const char* field, bool* out) {
  const json* value = Find(obj, field);
  if (value == nullptr) return Status::Ok();
  if (!value->is_boolean()) return WrongType(field, "a boolean", *value);
  *out = value->get<bool>();
  return Status::Ok();
}

Status ReadString(const json& obj, const char* field, std::optional<std::string>* out) {
  const json* value = Find(obj, field);
  if (value == nullptr) return Status::Ok();
  if (!value->is_string()) return WrongType(field, "a string", *value);
  *out = value->get<std::string>();
  return Status::Ok();
}

// `stop` / `stop_regex`: a string or a list of strings.
Status ReadStringList(const json& obj, const char* field, std::vector<std::string>* out) {
  const json* value = Find(obj, field);
  if (value == nullptr) return Status::Ok();
  if (value->is_string()) {
    out->push_back(value->get<std::string>());
    return Status::Ok();
  }
  if (!value->is_array()) return WrongType(field, "a string or a list of strings", *value);
  for (const json& item : *value) {
    if (!item.is_string()) return WrongType(field, "a string or a list of strings", item);
    out->push_back(item.get<std::string>());
  }
  return Status::Ok();
}

// `stop_token_ids`: a list of token ids; null entries are dropped (as SGLang does).
Status ReadStopTokenIds(const json& obj, std::vector<int32_t>* out) {
  const json* value = Find(obj, "stop_token_ids");
  if (value == nullptr) return Status::Ok();
  if (!value->is_array()) return WrongType("stop_token_ids", "a list of token ids", *value);
  for (const json& item : *value) {
    if (item.is_null()) continue;
    int64_t id = 0;
    if (!ParseInt(item, "stop_token_ids", std::numeric_limits<int32_t>::min(),
                  std::numeric_limits<int32_t>::max(), &id)
             .ok()) {
      return WrongType("stop_token_ids", "a list of token ids", item);
    }
    out->push_back(static_cast<int32_t>(id));
  }
  return Status::Ok();
}

// `logit_bias`: {"<token id>": bias, ...}.
Status ReadLogitBias(const json& obj, std::map<int32_t, float>* out) {
  const json* value = Find(obj, "logit_bias");
  if (value == nullptr) return Status::Ok();
  if (!value->is_object()) {
    return WrongType("logit_bias", "an object mapping token ids to numbers", *value);
  }
  for (const auto& [key, bias] : value->items()) {
    char* end = nullptr;
    errno = 0;
    const long long id = std::strtoll(key.c_str(), &end, 10);
    const bool starts_like_int =
        !key.empty() && (std::isdigit(static_cast<unsigned char>(key[0])) || key[0] == '-');
    if (!starts_like_int || *end != '\0' || errno != 0 ||
        id < std::numeric_limits<int32_t>::min() || id > std::numeric_limits<int32_t>::max()) {
      return InvalidArgument("logit_bias keys must be token ids, got \"" + key + "\"");
    }
    if (!bias.is_number()) {
      return InvalidArgument("logit_bias value for token " + key + " must be a number, got " +
                             Describe(bias));
    }
    (*out)[static_cast<int32_t>(id)] = bias.get<float>();
  }
  return Status::Ok();
}

Status ReadSeed(const json& obj, std::optional<int64_t>* out) {
  const json* value = Find(obj, "sampling_seed");
  if (value == nullptr) return Status::Ok();
  int64_t seed = 0;
  RADIXLM_RETURN_IF_ERROR(ParseInt(*value, "sampling_seed", std::numeric_limits<int64_t>::min(),
                                   std::numeric_limits<int64_t>::max(), &seed));
  *out = seed;
  return Status::Ok();
}

}  // namespace

StatusOr<SamplingParams> SamplingParams::FromJson(const json& obj) {
  SamplingParams p;
  if (obj.is_null()) return p;
  if (!obj.is_object()) return WrongType("sampling_params", "a JSON object", obj);

  // max_new_tokens: present-but-null means "no cap" (SGLang's Optional[int] = 128).
  if (auto it = obj.find("max_new_tokens"); it != obj.end()) {
    if (it->is_null()) {
      p.max_new_tokens.reset();
    } else {
      int32_t v = 0;
      RADIXLM_RETURN_IF_ERROR(ReadInt32(obj, "max_new_tokens", &v));
      p.max_new_tokens = v;
    }
  }
  RADIXLM_RETURN_IF_ERROR(ReadInt32(obj, "min_new_tokens", &p.min_new_tokens));
  RADIXLM_RETURN_IF_ERROR(ReadStringList(obj, "stop", &p.stop));
  RADIXLM_RETURN_IF_ERROR(ReadStringList(obj, "stop_regex", &p.stop_regex));
  // An empty pattern would match at once; SGLang clients send "" to mean "none".
  std::erase(p.stop_regex, std::string());
  RADIXLM_RETURN_IF_ERROR(ReadStopTokenIds(obj, &p.stop_token_ids));
  RADIXLM_RETURN_IF_ERROR(ReadBool(obj, "ignore_eos", &p.ignore_eos));
  RADIXLM_RETURN_IF_ERROR(ReadFloat(obj, "temperature", &p.temperature));
  RADIXLM_RETURN_IF_ERROR(ReadFloat(obj, "top_p", &p.top_p));
  RADIXLM_RETURN_IF_ERROR(ReadInt32(obj, "top_k", &p.top_k));
  RADIXLM_RETURN_IF_ERROR(ReadFloat(obj, "min_p", &p.min_p));
  RADIXLM_RETURN_IF_ERROR(ReadFloat(obj, "frequency_penalty", &p.frequency_penalty));
  RADIXLM_RETURN_IF_ERROR(ReadFloat(obj, "presence_penalty", &p.presence_penalty));
  RADIXLM_RETURN_IF_ERROR(ReadFloat(obj, "repetition_penalty", &p.repetition_penalty));
  RADIXLM_RETURN_IF_ERROR(ReadLogitBias(obj, &p.logit_bias));
  RADIXLM_RETURN_IF_ERROR(ReadSeed(obj, &p.sampling_seed));
  RADIXLM_RETURN_IF_ERROR(ReadInt32(obj, "n", &p.n));
  RADIXLM_RETURN_IF_ERROR(ReadBool(obj, "skip_special_tokens", &p.skip_special_tokens));
  RADIXLM_RETURN_IF_ERROR(
      ReadBool(obj, "spaces_between_special_tokens", &p.spaces_between_special_tokens));
  RADIXLM_RETURN_IF_ERROR(ReadBool(obj, "no_stop_trim", &p.no_stop_trim));
  RADIXLM_RETURN_IF_ERROR(ReadString(obj, "regex", &p.regex));
  RADIXLM_RETURN_IF_ERROR(ReadString(obj, "ebnf", &p.ebnf));
  // json_schema: SGLang takes a string; a JSON object is accepted too and serialized.
  if (const json* schema = Find(obj, "json_schema"); schema != nullptr) {
    if (schema->is_string()) {
      p.json_schema = schema->get<std::string>();
    } else if (schema->is_object() || schema->is_boolean()) {
      p.json_schema = schema->dump();
    } else {
      return WrongType("json_schema", "a string or a JSON schema object", *schema);
    }
  }
  // structural_tag: likewise a JSON string in SGLang; an object is serialized.
  if (const json* tag = Find(obj, "structural_tag"); tag != nullptr) {
    if (tag->is_string()) {
      p.structural_tag = tag->get<std::string>();
    } else if (tag->is_object()) {
      p.structural_tag = tag->dump();
    } else {
      return WrongType("structural_tag", "a string or a JSON object", *tag);
    }
  }
  return p;
}

json SamplingParams::ToJson() const {
  json j = json::object();
  j["max_new_tokens"] = max_new_tokens.has_value() ? json(*max_new_tokens) : json(nullptr);
  j["min_new_tokens"] = min_new_tokens;
  j["stop"] = stop;
  j["stop_regex"] = stop_regex;
  j["stop_token_ids"] = stop_token_ids;
  j["ignore_eos"] = ignore_eos;
  j["temperature"] = temperature;
  j["top_p"] = top_p;
  j["top_k"] = top_k;
  j["min_p"] = min_p;
  j["frequency_penalty"] = frequency_penalty;
  j["presence_penalty"] = presence_penalty;
  j["repetition_penalty"] = repetition_penalty;
  json bias = json::object();
  for (const auto& [token_id, value] : logit_bias) bias[std::to_string(token_id)] = value;
  j["logit_bias"] = std::move(bias);
  j["sampling_seed"] = sampling_seed.has_value() ? json(*sampling_seed) : json(nullptr);
  j["n"] = n;
  j["skip_special_tokens"] = skip_special_tokens;
  j["spaces_between_special_tokens"] = spaces_between_special_tokens;
  j["no_stop_trim"] = no_stop_trim;
  j["regex"] = regex.has_value() ? json(*regex) : json(nullptr);
  j["json_schema"] = json_schema.has_value() ? json(*json_schema) : json(nullptr);
  j["ebnf"] = ebnf.has_value() ? json(*ebnf) : json(nullptr);
  j["structural_tag"] = structural_tag.has_value() ? json(*structural_tag) : json(nullptr);
  return j;
}

}  // namespace radixlm
