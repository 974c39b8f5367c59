// StopChecker: a request's stop conditions and its visible output text.
//
// After each output token, OnToken says whether the request is done, in SGLang's order
// (Req.check_finished): nothing is checked before min_new_tokens; then max_new_tokens
// (finish "length"); then the token itself — an EOG id (unless ignore_eos) or one of
// stop_token_ids (finish "stop", matched = the id); then the stop strings, searched in the
// decoded text across token boundaries (finish "stop", matched = the string); then the stop
// regexes, searched incrementally in the same text (grammar/stop_regex.h; finish "stop",
// matched = the pattern).
//
// Text. Tokens are decoded incrementally (UTF-8 safe, by the codec's decoder). A matched stop
// string and everything after it is cut from the text, and so is a matched stop token's own
// text, unless no_stop_trim; a stop regex cuts the text at the start of its match (keeping the
// match with no_stop_trim). While streaming, TakeText holds back the longest tail of the text
// that could still turn out to be the start of a stop string or of a stop regex's match, so
// text once handed out is never taken back.
//
// Without a decoder (no codec) there is no text and stop strings and regexes are not checked;
// the engine rejects them in that configuration. Stop regexes must compile (the engine
// validates them first); one that does not is ignored.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/stop_regex.h"
#include "sampling/finish_reason.h"
#include "sampling/sampling_params.h"
#include "tokenizer/text_codec.h"

namespace radixlm {

class StopChecker {
 public:
  StopChecker() = default;
  // eog_token_ids: the tokenizer's end-of-generation ids. decoder may be null.
  StopChecker(const SamplingParams& params, int64_t max_new_tokens,
              std::span<const int32_t> eog_token_ids, std::unique_ptr<TokenTextDecoder> decoder);

  // Feeds the newest output token; output_count counts it. Returns the finish reason when the
  // request is done now (then no further tokens may be fed).
  std::optional<FinishReason> OnToken(int32_t token, int64_t output_count);

  // Jump-forward: appends `text` (bytes the grammar forced; complete UTF-8) as the output of
  // tokens that bring the output count to output_count, with the same checks as OnToken but
  // no stop-token check (the caller keeps stop tokens out of forced output). The decoder must
  // hold no partial character (the previous token ended on a character boundary); it is not
  // fed: later tokens continue from where it is, which is the same text.
  std::optional<FinishReason> OnForcedText(std::string_view text, int64_t output_count);
  // Whether `token` would finish the request as a stop token (EOG unless ignore_eos, or one of
  // stop_token_ids).
  bool IsStopToken(int32_t token) const {
    return std::binary_search(stop_ids_.begin(), stop_ids_.end(), token);
  }

  // The text not yet handed out that is safe to show: all of it once finished, else all but
  // the held-back tail.
  std::string TakeText();

  const std::string& text() const { return text_; }
  bool finished() const { return finished_; }

 private:
  void AppendTokenText(int32_t token);
  // Searches for a stop string ending after byte `old_size`; on a match cuts the text and
  // returns the matched string.
  std::optional<std::string> FindStopString(size_t old_size);
  // Feeds the text added since the last call to the stop regexes; on a match cuts the text and
  // returns the pattern.
  std::optional<std::string> FindStopRegex();
  // Both searches, strings first (SGLang's order).
  std::optional<std::string> FindStop(size_t old_size);
  size_t HeldBackTail() const;

  std::vector<int32_t> stop_ids_;  // EOG ids (unless ignore_eos) and stop_token_ids, sorted
  std::vector<std::string> stop_strings_;
  struct StopRegex {
    std::string pattern;
    grammar::StopRegexSearch search;
  };
  std::vector<StopRegex> stop_regexes_;
  size_t max_stop_len_ = 0;
  int64_t min_new_tokens_ = 0;
  int64_t max_new_tokens_ = 0;
  bool no_stop_trim_ = false;
  std::unique_ptr<TokenTextDecoder> decoder_;

  std::string text_;    // visible output text so far
  size_t emitted_ = 0;  // bytes of text_ already handed out by TakeText
  bool finished_ = false;
};

}  // namespace radixlm
