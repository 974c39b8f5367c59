#include "vision/projector.h"

#include "vision/clip_config.h"
#include "vision/projector_types.h"

namespace radixlm::vision {
namespace {

using Factory = StatusOr<std::unique_ptr<Projector>> (*)(std::unique_ptr<gguf::GgufFile>,
                                                         const ClipConfig&,
                                                         const Projector::Options&);
struct Registered {
  std::string_view type;
  Factory make;
};
constexpr Registered kProjectors[] = {
    {"gemma3", internal::MakeGemma3Projector},
    {"gemma4v", internal::MakeGemma4vProjector},
    {"qwen2.5vl_merger", internal::MakeQwen25VlProjector},
    {"qwen3vl_merger", internal::MakeQwen3VlProjector},
    {"idefics3", internal::MakeIdefics3Projector},
};

}  // namespace

std::vector<std::string_view> Projector::SupportedTypes() {
  std::vector<std::string_view> types;
  for (const Registered& r : kProjectors) types.push_back(r.type);
  return types;
}

std::vector<ImagePromptPiece> Projector::PromptPieces(const Image& image) const {
  return {{.kind = ImagePromptPiece::Kind::kRows, .first_row = 0, .n_rows = TokensFor(image)}};
}

StatusOr<std::unique_ptr<Projector>> Projector::Load(const std::string& path,
                                                     const Options& options) {
  auto file = gguf::GgufFile::Open(path);
  if (!file.ok()) {
    return Status(file.status().code(), "projector '" + path + "': " + file.status().message());
  }
  return FromGguf(std::move(*file), options);
}

StatusOr<std::unique_ptr<Projector>> Projector::FromGguf(std::unique_ptr<gguf::GgufFile> file,
                                                         const Options& options) {
  RADIXLM_ASSIGN_OR_RETURN(const ClipConfig config, ReadClipConfig(*file));
  for (const Registered& r : kProjectors) {
    if (r.type == config.projector_type) return r.make(std::move(file), config, options);
  }
  std::string built;
  for (const Registered& r : kProjectors)
    built += (built.empty() ? "" : ", ") + std::string(r.type);
  return Unimplemented("projector type '" + config.projector_type +
                       "' is not supported (supported: " + built + ")");
}

}  // namespace radixlm::vision
