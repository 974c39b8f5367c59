// idefics3 (SmolVLM, Idefics3) image slicing as llama.cpp does it
// (tools/mtmd/mtmd-image.cpp, mtmd_image_preprocessor_idefics3, the path for files with
// clip.vision.preproc_image_size): the image is resized keeping its aspect ratio so that its
// longer side is that size (the shorter one truncated, then made even), stretched up to whole
// tiles of clip.vision.image_size, and cut into tiles row by row; the overview is that
// stretched image resized to one tile. Every resize is Pillow's Lanczos (image_resize.h).
#pragma once

#include <vector>

#include "util/status.h"
#include "vision/image.h"

namespace radixlm::vision {

struct Idefics3Grid {
  int cols = 0;   // tiles per row (llama.cpp's grid_x)
  int rows = 0;   // rows of tiles (grid_y)
  int width = 0;  // the aspect-preserving resize, before the stretch to whole tiles
  int height = 0;
};

// The grid for a width x height image (both >= 1). A shorter side that would truncate to 0
// is taken as 1 (llama.cpp's preprocessing has no image there).
Idefics3Grid Idefics3GridFor(int width, int height, int tile_size, int longest_edge);

struct Idefics3Slices {
  Idefics3Grid grid;
  std::vector<Image> tiles;  // grid.rows * grid.cols, row-major, each tile_size square
  Image overview;            // tile_size square
};

// InvalidArgument for an image with no pixels or an RGB buffer that is not width x height x 3.
StatusOr<Idefics3Slices> SliceIdefics3(const Image& image, int tile_size, int longest_edge);

}  // namespace radixlm::vision
