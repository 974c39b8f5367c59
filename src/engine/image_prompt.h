// A text prompt with images: where each image's spans go and the ids around them, as llama.cpp's
// mtmd lays out the same prompt (mtmd_tokenize): every marker becomes layout.begin_text + the
// image's pieces (one span of all its rows unless the encoder gave pieces: idefics3's tiles,
// each a span, with text between) + layout.end_text, and the text between markers, begin_text,
// end_text and each text piece are tokenized piece by piece (special tokens parsed; only the
// first piece may get BOS); a token piece is the vocabulary's token of that text
// (TokenTextCodec::TokenWithText; InvalidArgument naming it when there is none).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "engine/image_cache.h"
#include "engine/image_encoder.h"
#include "scheduler/prompt_image.h"
#include "tokenizer/text_codec.h"
#include "util/status.h"

namespace radixlm {

// Where an image goes in a text prompt: llama-server's default media marker.
inline constexpr std::string_view kImageMarker = "<__media__>";

struct ImagePrompt {
  std::vector<int32_t> ids;         // vocabulary ids, and each image's ids (WriteImageIds)
  std::vector<PromptImage> images;  // the images' spans, in order
};

// `text` holds one kImageMarker per image, in order; InvalidArgument when the counts differ.
// verbatim: the text is a rendered chat template (its BOS written out: none added).
StatusOr<ImagePrompt> BuildImagePrompt(std::string_view text, bool verbatim,
                                       std::span<const EncodedImage> images,
                                       const ImagePromptLayout& layout,
                                       const TokenTextCodec& codec);

}  // namespace radixlm
