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

}  // namespace radixlm::hf
