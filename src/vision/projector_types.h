// The per-type constructors behind Projector::FromGguf (one file per clip.projector_type).
// Internal to src/vision.
#pragma once

#include <memory>

#include "gguf/gguf_file.h"
#include "util/status.h"
#include "vision/clip_config.h"
#include "vision/projector.h"

namespace radixlm::vision::internal {

// gemma3.cc
StatusOr<std::unique_ptr<Projector>> MakeGemma3Projector(std::unique_ptr<gguf::GgufFile> file,
                                                         const ClipConfig& config,
                                                         const Projector::Options& options);
// idefics3.cc
StatusOr<std::unique_ptr<Projector>> MakeIdefics3Projector(std::unique_ptr<gguf::GgufFile> file,
                                                           const ClipConfig& config,
                                                           const Projector::Options& options);
// gemma4v.cc
StatusOr<std::unique_ptr<Projector>> MakeGemma4vProjector(std::unique_ptr<gguf::GgufFile> file,
                                                          const ClipConfig& config,
                                                          const Projector::Options& options);
// qwen25vl.cc
StatusOr<std::unique_ptr<Projector>> MakeQwen25VlProjector(std::unique_ptr<gguf::GgufFile> file,
                                                           const ClipConfig& config,
                                                           const Projector::Options& options);
StatusOr<std::unique_ptr<Projector>> MakeQwen3VlProjector(std::unique_ptr<gguf::GgufFile> file,
                                                          const ClipConfig& config,
                                                          const Projector::Options& options);

}  // namespace radixlm::vision::internal
