// Scheduler: jump-forward for constrained decoding (SGLang's compressed-FSM jump-forward).
//
// After a sampled token, where the request's grammar has a single path for the next bytes,
// those bytes are appended without running the model:
//   1. forced = Matcher::ForcedBytes(), cut back to whole UTF-8 characters;
//   2. the newest sampled token's text + forced is retokenized (EncodeContinuation), so the
//      tokens at the boundary are what the tokenizer produces for that text (a sampled `"` and
//      a forced `, "age": ` may become `",` ` "` `age` ...). Only the newest token is
//      retokenized: it is the one output token not yet reported, so token ids once streamed are
//      never taken back (the text does not change at all: the new tokens spell the same bytes);
//   3. the matcher is rolled back one step and fed the new tokens; penalties and logprobs follow
//      (forced tokens carry no sampled logprob: null);
//   4. the KV computed so far (every token before the retokenized one) goes to the radix tree
//      (CacheFinishedRequest, as SGLang does) and the request goes back to waiting. Admission
//      matches its new tokens against the tree — all of the old KV is a hit — and the next
//      forward pass computes the new tokens as one extend chunk, in place of the decode step
//      the request would have had: the forced tokens cost no forward pass each.
// The last retokenized token is held back (sampled by the model under the mask) unless the
// grammar ends after it, so the model never continues from a boundary the tokenizer would not
// produce. Where the grammar can only end, EOS is appended with no forward pass for it. The forced
// tokens are cut to max_new_tokens; stop strings are checked over the forced text; a retokenization
// that would contain a stop token, or that the grammar rejects, is not taken.
#include <algorithm>
#include <cassert>
#include <string>
#include <string_view>

#include "scheduler/scheduler.h"

namespace radixlm {
namespace {

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Length of the longest prefix of s made of complete UTF-8 characters.
size_t CompleteUtf8Prefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t len = c < 0x80           ? 1
                       : (c >> 5) == 0x6  ? 2
                       : (c >> 4) == 0xE  ? 3
                       : (c >> 3) == 0x1E ? 4
                                          : 1;
    if (i + len > s.size()) break;
    i += len;
  }
  return i;
}

}  // namespace

bool Scheduler::AppendUnsampledEos(Request* req) {
  grammar::Matcher& matcher = *req->matcher;
  for (int32_t eos : matcher.grammar().vocab().eos_ids()) {
    if (eos < 0 || eos >= runner_->vocab_size() || !matcher.AcceptToken(eos)) continue;
    req->token_ids.push_back(eos);
    req->penalties.AddOutputToken(eos);
    if (req->in.return_logprob) req->output_logprobs.push_back({eos, std::nullopt, {}});
    ++req->jump_forward_tokens;
    ++stats_.jump_forward_tokens;
    std::optional<FinishReason> finish = req->stop.OnToken(eos, req->output_len());
    // A terminated grammar finishes the request even under ignore_eos (as after a sampled EOS).
    if (!finish.has_value()) finish = FinishReason::StopToken(eos);
    FinishRequest(req, std::move(*finish));
    return true;
  }
  return false;
}

bool Scheduler::TryJumpForward(Request* req) {
  if (!config_.enable_jump_forward || !req->matcher.has_value() || cache_->disabled() ||
      codec_ == nullptr) {
    return false;
  }
  assert(req->state == RequestState::kDecoding);
  grammar::Matcher& matcher = *req->matcher;
  if (matcher.MustTerminate()) return AppendUnsampledEos(req);
  std::string forced = matcher.ForcedBytes();
  forced.resize(CompleteUtf8Prefix(forced));
  if (forced.empty()) return false;

  // The sampled token must start and end on character boundaries, so the decoder behind the
  // stop checker holds nothing back and the forced text can be appended as is.
  const grammar::TokenVocab& vocab = matcher.grammar().vocab();
  const int32_t sampled = req->token_ids.back();
  const std::string& sampled_text = vocab.bytes(sampled);
  if (sampled_text.empty() || IsContinuationByte(sampled_text[0]) ||
      CompleteUtf8Prefix(sampled_text) != sampled_text.size()) {
    return false;
  }
  const std::string text = sampled_text + forced;
  StatusOr<std::vector<int32_t>> encoded = codec_->EncodeContinuation(text);
  if (!encoded.ok() || encoded->empty()) return false;
  std::vector<int32_t> fresh = std::move(*encoded);

  // Replay on a copy: the new tokens must spell a prefix of `text` that the grammar accepts.
  grammar::Matcher trial = matcher.Clone();
  if (!trial.Rollback(1).ok()) return false;
  std::string covered;
  for (int32_t t : fresh) {
    if (req->stop.IsStopToken(t) || !trial.AcceptToken(t)) return false;
    covered += vocab.bytes(t);
  }
  auto drop_last = [&] {
    covered.resize(covered.size() - vocab.bytes(fresh.back()).size());
    fresh.pop_back();
    return trial.Rollback(1).ok();
  };
  // The last forced token is left to the model unless the grammar ends right after it: its
  // text may fuse with what the model writes next (a forced `"` before a sampled `:` is `":` in
  // the tokenizer's own output), and a sequence that stops at an unusual boundary skews what the
  // model predicts next. The model still must write those bytes: the mask allows only them (or
  // tokens that begin with them).
  if (!trial.MustTerminate() && !drop_last()) return false;
  // Outputs before the sampled token stay; the new tokens get the rest of the budget.
  const int64_t room = req->max_new_tokens - (req->output_len() - 1);
  while (static_cast<int64_t>(fresh.size()) > room) {
    if (!drop_last()) return false;
  }
  // A cut may end inside a character: drop tokens back to a boundary.
  while (!fresh.empty() && CompleteUtf8Prefix(covered) != covered.size()) {
    if (!drop_last()) return false;
  }
  if (covered.size() <= sampled_text.size() || text.compare(0, covered.size(), covered) != 0) {
    return false;
  }
  const size_t kept = fresh.front() == sampled ? 1 : 0;  // the sampled token survived

  // Commit. The tree takes the KV of tokens [0, kv_len): every token but the sampled one.
  ReleaseKv(req);
  RemoveFromQueues(req);
  req->token_ids.pop_back();
  req->token_ids.insert(req->token_ids.end(), fresh.begin(), fresh.end());
  req->matcher = std::move(trial);
  if (kept == 0) {  // the sampled token was replaced: recount the outputs
    req->penalties.Clear();
    if (req->in.params.repetition_penalty != 1.0f) req->penalties.SetPromptTokens(req->prompt());
    for (int32_t t : req->output_ids()) req->penalties.AddOutputToken(t);
  } else {
    for (size_t i = 1; i < fresh.size(); ++i) req->penalties.AddOutputToken(fresh[i]);
  }
  if (req->in.return_logprob) {
    if (kept == 0) req->output_logprobs.pop_back();
    for (size_t i = kept; i < fresh.size(); ++i) {
      req->output_logprobs.push_back({fresh[i], std::nullopt, {}});
    }
  }
  const auto placed = static_cast<int64_t>(fresh.size() - kept);
  req->jump_forward_tokens += placed;
  stats_.jump_forward_tokens += placed;
  ++stats_.jump_forwards;

  std::optional<FinishReason> finish = req->stop.OnForcedText(
      std::string_view(covered).substr(sampled_text.size()), req->output_len());
  if (finish.has_value()) {
    FinishRequest(req, std::move(*finish));
    return true;
  }
  if (req->matcher->MustTerminate() && AppendUnsampledEos(req)) return true;
  // Back to waiting with its outputs: the next admission extends it over its cached prefix.
  req->state = RequestState::kWaiting;
  req->match_len = -1;
  req->match_node = nullptr;
  waiting_.push_back(req);
  EmitOutput(req);
  return true;
}

}  // namespace radixlm
