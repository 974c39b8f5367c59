#include "server/json_fields.h"

#include <cmath>
#include <limits>

namespace radixlm::server {

using json = nlohmann::json;

std::string DescribeJson(const json& value) {
  if (value.is_number() || value.is_boolean()) {
    std::string out = value.type_name();
    out += ' ';
    out += value.dump();
    return out;
  }
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    if (s.size() <= 40)
      return "string " + value.dump(-1, ' ', false, json::error_handler_t::replace);
    return "a string of " + std::to_string(s.size()) + " bytes";
  }
  return value.type_name();
}

const json* FindField(const json& object, std::string_view field) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

bool IsUnsetValue(const json& value) {
  if (value.is_null()) return true;
  if (value.is_string()) return value.get_ref<const std::string&>().empty();
  if (value.is_array() || value.is_object()) return value.empty();
  return value.is_boolean() && !value.get<bool>();
}

bool IsFieldSet(const json& object, std::string_view field) {
  const json* value = FindField(object, field);
  return value != nullptr && !IsUnsetValue(*value);
}

Status WrongType(std::string_view field, std::string_view expected, const json& value) {
  return InvalidArgument(std::string(field) + " must be " + std::string(expected) + ", got " +
                         DescribeJson(value));
}

Status ReadBool(const json& object, std::string_view field, bool* out) {
  const json* value = FindField(object, field);
  if (value == nullptr) return Status::Ok();
  if (!value->is_boolean()) return WrongType(field, "a boolean", *value);
  *out = value->get<bool>();
  return Status::Ok();
}

Status ParseInt(const json& value, std::string_view field, int64_t min, int64_t max, int64_t* out) {
  auto out_of_range = [&] {
    return InvalidArgument(std::string(field) + " must be in [" + std::to_string(min) + ", " +
                           std::to_string(max) + "], got " + value.dump());
  };
  if (value.is_number_unsigned()) {
    const uint64_t v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        static_cast<int64_t>(v) > max || static_cast<int64_t>(v) < min) {
      return out_of_range();
    }
    *out = static_cast<int64_t>(v);
    return Status::Ok();
  }
  if (value.is_number_integer()) {
    const int64_t v = value.get<int64_t>();
    if (v < min || v > max) return out_of_range();
    *out = v;
    return Status::Ok();
  }
  if (value.is_number_float()) {
    const double v = value.get<double>();
    if (!std::isfinite(v) || std::floor(v) != v) return WrongType(field, "an integer", value);
    if (v < static_cast<double>(min) || v > static_cast<double>(max)) return out_of_range();
    *out = static_cast<int64_t>(v);
    return Status::Ok();
  }
  return WrongType(field, "an integer", value);
}

Status ReadInt(const json& object, std::string_view field, int64_t min, int64_t max, int64_t* out) {
  const json* value = FindField(object, field);
  if (value == nullptr) return Status::Ok();
  return ParseInt(*value, field, min, max, out);
}

Status ReadInt32(const json& object, std::string_view field, int64_t min, int64_t max,
                 int32_t* out) {
  int64_t v = *out;
  RADIXLM_RETURN_IF_ERROR(ReadInt(object, field, min, max, &v));
  *out = static_cast<int32_t>(v);
  return Status::Ok();
}

Status ReadNumber(const json& object, std::string_view field, double min, double max, double* out) {
  const json* value = FindField(object, field);
  if (value == nullptr) return Status::Ok();
  if (!value->is_number()) return WrongType(field, "a number", *value);
  const double v = value->get<double>();
  if (!std::isfinite(v) || v < min || v > max) {
    char range[96];
    std::snprintf(range, sizeof(range), "[%g, %g]", min, max);
    return InvalidArgument(std::string(field) + " must be in " + range + ", got " + value->dump());
  }
  *out = v;
  return Status::Ok();
}

Status ReadString(const json& object, std::string_view field, std::string* out) {
  const json* value = FindField(object, field);
  if (value == nullptr) return Status::Ok();
  if (!value->is_string()) return WrongType(field, "a string", *value);
  *out = value->get<std::string>();
  return Status::Ok();
}

}  // namespace radixlm::server
