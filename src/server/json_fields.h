// Typed reads of request fields with messages that name the field, shared by the native and
// OpenAI request parsers. Every reader treats an absent field and JSON null alike: the output is
// left unchanged (the caller's default). A wrong type or range is InvalidArgument, e.g.
// "stream must be a boolean, got string \"yes\"".
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "util/status.h"

namespace radixlm::server {

// "a number 1.5", "string \"abc\"", "array", ... for error messages (long strings elided).
std::string DescribeJson(const nlohmann::json& value);

// The field's value, or nullptr when absent or null.
const nlohmann::json* FindField(const nlohmann::json& object, std::string_view field);

// True for a value that means "not set" as SGLang's clients send it: null, "", [], {} or false
// (e.g. "lora_path": "" for the base model).
bool IsUnsetValue(const nlohmann::json& value);
// The field is present with a value other than IsUnsetValue's.
bool IsFieldSet(const nlohmann::json& object, std::string_view field);

Status WrongType(std::string_view field, std::string_view expected, const nlohmann::json& value);

Status ReadBool(const nlohmann::json& object, std::string_view field, bool* out);
// An integer in [min, max]; integral floats (3.0) are accepted, booleans are not.
Status ReadInt(const nlohmann::json& object, std::string_view field, int64_t min, int64_t max,
               int64_t* out);
Status ReadInt32(const nlohmann::json& object, std::string_view field, int64_t min, int64_t max,
                 int32_t* out);
// A finite number in [min, max].
Status ReadNumber(const nlohmann::json& object, std::string_view field, double min, double max,
                  double* out);
Status ReadString(const nlohmann::json& object, std::string_view field, std::string* out);

// Value-level variants (for list elements and already-found fields).
Status ParseInt(const nlohmann::json& value, std::string_view field, int64_t min, int64_t max,
                int64_t* out);

}  // namespace radixlm::server
