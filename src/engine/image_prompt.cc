#include "engine/image_prompt.h"

#include <string>

namespace radixlm {

namespace {

int64_t CountMarkers(std::string_view text) {
  int64_t n = 0;
  for (size_t at = text.find(kImageMarker); at != std::string_view::npos;
       at = text.find(kImageMarker, at + kImageMarker.size())) {
    ++n;
  }
  return n;
}

}  // namespace

StatusOr<ImagePrompt> BuildImagePrompt(std::string_view text, bool verbatim,
                                       std::span<const EncodedImage> images,
                                       const ImagePromptLayout& layout,
                                       const TokenTextCodec& codec) {
  const int64_t markers = CountMarkers(text);
  if (markers != static_cast<int64_t>(images.size())) {
    return InvalidArgument("the prompt has " + std::to_string(markers) + " image markers (" +
                           std::string(kImageMarker) + ") for " + std::to_string(images.size()) +
                           " images");
  }
  // As mtmd_tokenize (llama.cpp 0.3.36): the text between markers, and each image's begin_text
  // and end_text, are tokenized as pieces of their own (special tokens parsed; only the first
  // piece may get BOS). A begin_text that is not a special token (Gemma 4's <|image> under
  // another tokenizer) is thus never merged with the text before it.
  std::vector<std::string> segments(1);
  for (size_t from = 0;;) {
    const size_t at = text.find(kImageMarker, from);
    if (at == std::string_view::npos) {
      segments.back() = std::string(text.substr(from));
      break;
    }
    segments.back() = std::string(text.substr(from, at - from));
    segments.emplace_back();
    from = at + kImageMarker.size();
  }
  ImagePrompt prompt;
  auto add_text = [&](const std::string& piece, bool with_bos) -> Status {
    if (piece.empty() && !with_bos) return Status::Ok();
    StatusOr<std::vector<int32_t>> ids =
        with_bos ? codec.Encode(piece) : codec.EncodeVerbatim(piece);
    RADIXLM_RETURN_IF_ERROR(ids.status());
    prompt.ids.insert(prompt.ids.end(), ids->begin(), ids->end());
    return Status::Ok();
  };
  for (size_t i = 0; i < segments.size(); ++i) {
    if (i > 0) {
      const EncodedImage& image = images[i - 1];
      RADIXLM_RETURN_IF_ERROR(add_text(layout.begin_text, false));
      PromptImage span;
      span.begin = static_cast<int64_t>(prompt.ids.size());
      span.n = image.n_tokens;
      span.hash = image.hash;
      span.embeddings = image.rows;
      span.bidirectional = layout.bidirectional;
      span.grid_rows = image.grid_rows;
      span.grid_cols = image.grid_cols;
      prompt.ids.resize(prompt.ids.size() + image.n_tokens);
      WriteImageIds(image.hash, std::span<int32_t>(prompt.ids).subspan(span.begin));
      prompt.images.push_back(std::move(span));
      RADIXLM_RETURN_IF_ERROR(add_text(layout.end_text, false));
    }
    RADIXLM_RETURN_IF_ERROR(add_text(segments[i], i == 0 && !verbatim));
  }
  return prompt;
}

}  // namespace radixlm
