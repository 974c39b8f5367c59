#include "hf/json_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace radixlm::hf {

StatusOr<nlohmann::json> ReadJsonObject(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return NotFound(path + ": no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot open '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument(path + ": not valid JSON");
  if (!j.is_object()) return InvalidArgument(path + ": not a JSON object");
  return j;
}

StatusOr<int64_t> PositiveIntField(const nlohmann::json& j, const char* key,
                                   const std::string& path, int64_t def) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (def > 0) return def;
    return InvalidArgument(path + ": missing field \"" + key + "\"");
  }
  if (!it->is_number_integer() || it->get<int64_t>() <= 0) {
    return InvalidArgument(path + ": field \"" + key + "\" must be a positive integer");
  }
  return it->get<int64_t>();
}

}  // namespace radixlm::hf
