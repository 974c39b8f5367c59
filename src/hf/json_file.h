// Reading the JSON files of a Hugging Face folder with errors that name the file.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "util/status.h"

namespace radixlm::hf {

// The parsed object in `path`. NotFound when the file does not exist, InvalidArgument naming
// the file when it is not valid JSON or not an object.
StatusOr<nlohmann::json> ReadJsonObject(const std::string& path);

// j[key] as a positive integer; `def` when the key is absent or null and def > 0. Otherwise
// InvalidArgument naming `path` and the field (missing, or not a positive integer).
StatusOr<int64_t> PositiveIntField(const nlohmann::json& j, const char* key,
                                   const std::string& path, int64_t def = -1);

}  // namespace radixlm::hf
