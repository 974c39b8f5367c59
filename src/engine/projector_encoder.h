// The ImageEncoder of a llama.cpp vision projector GGUF (--mmproj; general.architecture clip).
#pragma once

#include <memory>
#include <string>

#include "engine/image_encoder.h"
#include "util/status.h"

namespace radixlm {

// Loads the projector at `path` with `threads` worker threads (<= 0: one per hardware
// thread). InvalidArgument naming the problem for a file that is not a projector this build
// runs.
StatusOr<std::unique_ptr<ImageEncoder>> LoadProjectorEncoder(const std::string& path, int threads);

}  // namespace radixlm
