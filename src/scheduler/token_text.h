// TokenTextCodec: what the scheduler and engine need from a tokenizer, behind a small interface
// so the scheduler can be tested with a fake vocabulary and the engine can adapt the real
// tokenizer module.
//
// The scheduler uses NewDecoder (incremental, UTF-8 safe output text, needed for stop strings)
// and eog_token_ids (end-of-generation ids that finish a request unless ignore_eos). The engine
// also uses Encode for text prompts.
//
// Thread-safety: the codec's const methods may be called from any thread; a decoder belongs to
// one request and is used only by the scheduler thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sampling/sampling_params.h"
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
  // The ids of `text` as a prompt (with BOS etc. as the model expects).
  virtual StatusOr<std::vector<int32_t>> Encode(std::string_view text) const = 0;
  // A decoder honouring params.skip_special_tokens / spaces_between_special_tokens.
  virtual std::unique_ptr<TokenTextDecoder> NewDecoder(const SamplingParams& params) const = 0;
  // End-of-generation ids (EOS, EOT, ...).
  virtual std::vector<int32_t> eog_token_ids() const = 0;
  // The text of one token, for logprob listings (may be a partial UTF-8 sequence).
  virtual std::string TokenText(int32_t token) const = 0;
  // Control / special tokens (never part of constrained output). Used by the engine to build
  // the grammar vocabulary of codecs other than the real tokenizer's.
  virtual bool IsControlToken(int32_t token) const { return false; }
  // The ids of `text` as a continuation of output text: no BOS, special tokens not parsed, no
  // space prefix — what jump-forward retokenizes. Unimplemented where the codec cannot promise
  // that (jump-forward is then skipped).
  virtual StatusOr<std::vector<int32_t>> EncodeContinuation(std::string_view text) const {
    (void)text;
    return Unimplemented("this tokenizer cannot encode a continuation");
  }
};

}  // namespace radixlm
