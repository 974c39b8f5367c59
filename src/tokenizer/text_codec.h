// TokenTextCodec: everything the rest of radixlm needs from a tokenizer, behind one interface,
// so the scheduler, engine and server can run over the real tokenizer (TokenizerCodec) or a
// small fake vocabulary in tests, and no caller ever needs to know which.
//
//   Encode / EncodeVerbatim   text → ids (a prompt; a rendered chat template)
//   NewDecoder                ids → text, incrementally and UTF-8 safe (stop strings, streams)
//   TokenText / TokenBytes    one token's text (logprob listings) / output bytes (grammars)
//   eog_token_ids, bos_text, eos_text
//
// Thread-safety: the codec's const methods may be called from any thread; a decoder belongs to
// one request and is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace radixlm {

class TokenTextDecoder {
 public:
  virtual ~TokenTextDecoder() = default;
  // Feeds one output token; returns the text that became complete (possibly empty, e.g. while a
  // multi-byte UTF-8 character is still incomplete, or for a skipped special token).
  virtual std::string Append(int32_t token) = 0;
  // Whatever is still held back (an incomplete character), at the end of the request.
  virtual std::string Flush() = 0;
};

class TokenTextCodec {
 public:
  virtual ~TokenTextCodec() = default;
  // The ids of `text` as a prompt (with BOS etc. as the model expects; special tokens written
  // in the text are parsed).
  virtual StatusOr<std::vector<int32_t>> Encode(std::string_view text) const = 0;
  // The ids of `text` that already holds its special tokens (a rendered chat template writes
  // BOS itself): special tokens parsed, none added. A codec that adds nothing in Encode may
  // keep this default.
  virtual StatusOr<std::vector<int32_t>> EncodeVerbatim(std::string_view text) const {
    return Encode(text);
  }
  // A decoder for one request's output; special tokens give no text when skip_special_tokens.
  virtual std::unique_ptr<TokenTextDecoder> NewDecoder(bool skip_special_tokens) const = 0;
  // End-of-generation ids (EOS, EOT, ...).
  virtual std::vector<int32_t> eog_token_ids() const = 0;
  // The text of one token, for logprob listings (may be a partial UTF-8 sequence).
  virtual std::string TokenText(int32_t token) const = 0;
  // Control / special tokens (never part of constrained output).
  virtual bool IsControlToken(int32_t token) const {
    (void)token;
    return false;
  }
  // The bytes `token` adds to output text ("" for control tokens): the vocabulary grammars
  // are compiled against.
  virtual std::string TokenBytes(int32_t token) const {
    return IsControlToken(token) ? std::string() : TokenText(token);
  }
  // The token whose text (special tokens rendered) is exactly `text`: the lowest such id, as
  // llama.cpp's mtmd finds the tokens of an image layout (lookup_token); nullopt for none.
  // Default: `text` when EncodeVerbatim gives it as one token of that text.
  virtual std::optional<int32_t> TokenWithText(std::string_view text) const {
    StatusOr<std::vector<int32_t>> ids = EncodeVerbatim(text);
    if (!ids.ok() || ids->size() != 1 || TokenText(ids->front()) != text) return std::nullopt;
    return ids->front();
  }
  // The BOS / EOS tokens' text ("" where the vocabulary has none), for chat templates.
  virtual std::string bos_text() const { return ""; }
  virtual std::string eos_text() const { return ""; }
  // The ids of `text` as a continuation of output text: no BOS, special tokens not parsed, no
  // space prefix — what jump-forward retokenizes (an error skips that jump).
  virtual StatusOr<std::vector<int32_t>> EncodeContinuation(std::string_view text) const = 0;
};

}  // namespace radixlm
