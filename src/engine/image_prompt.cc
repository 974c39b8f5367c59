#include "engine/image_prompt.h"

#include <optional>
#include <string>
#include <unordered_map>

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
  // mtmd's lookup_token: each kToken piece is the one token whose text it is (looked up once).
  std::unordered_map<std::string, int32_t> token_of;
  auto add_token = [&](const std::string& text) -> Status {
    auto it = token_of.find(text);
    if (it == token_of.end()) {
      const std::optional<int32_t> id = codec.TokenWithText(text);
      if (!id.has_value()) {
        return InvalidArgument("the model's vocabulary has no token '" + text +
                               "', which the vision projector's image layout needs");
      }
      it = token_of.emplace(text, *id).first;
    }
    prompt.ids.push_back(it->second);
    return Status::Ok();
  };
  auto add_rows = [&](const EncodedImage& image, int64_t first_row, int64_t n) {
    PromptImage span;
    span.begin = static_cast<int64_t>(prompt.ids.size());
    span.n = n;
    span.first_row = first_row;
    span.hash = image.hash;
    span.embeddings = image.rows;
    span.image_rows = image.n_tokens;
    span.bidirectional = layout.bidirectional;
    span.grid_rows = image.grid_rows;
    span.grid_cols = image.grid_cols;
    prompt.ids.resize(prompt.ids.size() + n);
    WriteImageIds(image.hash, std::span<int32_t>(prompt.ids).subspan(span.begin), first_row);
    prompt.images.push_back(std::move(span));
  };
  for (size_t i = 0; i < segments.size(); ++i) {
    if (i > 0) {
      const EncodedImage& image = images[i - 1];
      RADIXLM_RETURN_IF_ERROR(add_text(layout.begin_text, false));
      if (image.pieces.empty()) add_rows(image, 0, image.n_tokens);
      for (const ImagePiece& piece : image.pieces) {
        switch (piece.kind) {
          case ImagePiece::Kind::kText:
            RADIXLM_RETURN_IF_ERROR(add_text(piece.text, false));
            break;
          case ImagePiece::Kind::kToken:
            RADIXLM_RETURN_IF_ERROR(add_token(piece.text));
            break;
          case ImagePiece::Kind::kRows:
            add_rows(image, piece.first_row, piece.n_rows);
            break;
        }
      }
      RADIXLM_RETURN_IF_ERROR(add_text(layout.end_text, false));
    }
    RADIXLM_RETURN_IF_ERROR(add_text(segments[i], i == 0 && !verbatim));
  }
  return prompt;
}

}  // namespace radixlm
