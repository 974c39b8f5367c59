// Unicode normalisation forms (UAX #15: NFC, NFD, NFKC, NFKD) of UTF-8 text, as tokenizer.json's
// NFC / NFD / NFKC / NFKD normalisers apply them (the tokenizers crate runs the
// unicode-normalization crate over the whole text). Built on ICU's Normalizer2 (Debian's
// libicu-dev), the one place radixlm links ICU. Thread-safe: ICU's normaliser instances are
// immutable singletons.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace radixlm::tokenizer {

enum class NormalForm { kNfc, kNfd, kNfkc, kNfkd };

// "NFC" -> kNfc, ...; nullopt for any other name.
std::optional<NormalForm> NormalFormFromName(std::string_view name);
const char* NormalFormName(NormalForm form);

// `text` (valid UTF-8: callers sanitise it first) in normal form `form`. Text ICU cannot
// normalise (it reports an error only on invalid input or out of memory) is returned as it is.
std::string ToNormalForm(std::string_view text, NormalForm form);

}  // namespace radixlm::tokenizer
