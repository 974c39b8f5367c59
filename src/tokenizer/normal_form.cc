#include "tokenizer/normal_form.h"

#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>
#include <unicode/stringpiece.h>

namespace radixlm::tokenizer {

std::optional<NormalForm> NormalFormFromName(std::string_view name) {
  if (name == "NFC") return NormalForm::kNfc;
  if (name == "NFD") return NormalForm::kNfd;
  if (name == "NFKC") return NormalForm::kNfkc;
  if (name == "NFKD") return NormalForm::kNfkd;
  return std::nullopt;
}

const char* NormalFormName(NormalForm form) {
  switch (form) {
    case NormalForm::kNfc:
      return "NFC";
    case NormalForm::kNfd:
      return "NFD";
    case NormalForm::kNfkc:
      return "NFKC";
    case NormalForm::kNfkd:
      return "NFKD";
  }
  return "";
}

std::string ToNormalForm(std::string_view text, NormalForm form) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* normalizer = nullptr;
  switch (form) {
    case NormalForm::kNfc:
      normalizer = icu::Normalizer2::getNFCInstance(status);
      break;
    case NormalForm::kNfd:
      normalizer = icu::Normalizer2::getNFDInstance(status);
      break;
    case NormalForm::kNfkc:
      normalizer = icu::Normalizer2::getNFKCInstance(status);
      break;
    case NormalForm::kNfkd:
      normalizer = icu::Normalizer2::getNFKDInstance(status);
      break;
  }
  if (U_FAILURE(status) || normalizer == nullptr) return std::string(text);
  const icu::StringPiece piece(text.data(), static_cast<int32_t>(text.size()));
  // Already normalised (most text): no copy through the sink.
  if (normalizer->isNormalizedUTF8(piece, status) && U_SUCCESS(status)) return std::string(text);
  status = U_ZERO_ERROR;
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  icu::StringByteSink<std::string> sink(&out);
  normalizer->normalizeUTF8(0, piece, sink, nullptr, status);
  if (U_FAILURE(status)) return std::string(text);
  return out;
}

}  // namespace radixlm::tokenizer
