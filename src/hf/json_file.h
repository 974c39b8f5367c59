// Reading the JSON files of a Hugging Face folder with errors that name the file.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "util/status.h"

namespace radixlm::hf {

// The parsed object in `path`. NotFound when the file does not exist, InvalidArgument naming
// the file when it is not valid JSON or not an object.
StatusOr<nlohmann::json> ReadJsonObject(const std::string& path);

}  // namespace radixlm::hf
