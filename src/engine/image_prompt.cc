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
  // As mtmd_tokenize: each marker becomes begin_text + marker + end_text, and the text between
  // markers is tokenized piece by piece.
  std::vector<std::string> pieces(1);
  for (size_t from = 0;;) {
    const size_t at = text.find(kImageMarker, from);
    if (at == std::string_view::npos) {
      pieces.back() += text.substr(from);
      break;
    }
    pieces.back() += std::string(text.substr(from, at - from)) + layout.begin_text;
    pieces.push_back(layout.end_text);
    from = at + kImageMarker.size();
  }
  ImagePrompt prompt;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0) {
      const EncodedImage& image = images[i - 1];
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
    }
    const bool with_bos = i == 0 && !verbatim;
    if (pieces[i].empty() && !with_bos) continue;
    StatusOr<std::vector<int32_t>> ids =
        with_bos ? codec.Encode(pieces[i]) : codec.EncodeVerbatim(pieces[i]);
    RADIXLM_RETURN_IF_ERROR(ids.status());
    prompt.ids.insert(prompt.ids.end(), ids->begin(), ids->end());
  }
  return prompt;
}

}  // namespace radixlm
