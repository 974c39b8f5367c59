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
// The last retokenized token is held back (sampled by the model under the mask) when the
// grammar allows a longer token that starts with it, so the model never continues from a
// boundary the tokenizer would not produce. Where the grammar can only end, EOS is appended with no
// forward pass for it. The forced tokens are cut to max_new_tokens; stop strings are checked over
// the forced text; a retokenization that would contain a stop token, or that the grammar rejects,
// is not taken.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/scheduler.h"
#include "util/check.h"
#include "util/utf8_chars.h"

namespace radixlm {
namespace {

// Whether the grammar, positioned before token `last`, also allows a longer token that starts
// with last's text: then the model might have written last fused with what follows (a forced
// `"` before a free `:` is `":` in the tokenizer's own output).
bool MayFuseWithWhatFollows(const grammar::Matcher& before_last, int32_t last,
                            const grammar::TokenVocab& vocab) {
  const std::string& text = vocab.bytes(last);
  const std::vector<int32_t>& sorted = vocab.sorted_ids();
  auto it = std::lower_bound(sorted.begin(), sorted.end(), text,
                             [&](int32_t id, const auto& t) { return vocab.bytes(id) < t; });
  grammar::Matcher probe = before_last.Clone();
  for (; it != sorted.end(); ++it) {
    const std::string& bytes = vocab.bytes(*it);
    if (!bytes.starts_with(text)) break;
    if (bytes.size() > text.size() && probe.AcceptToken(*it)) return true;
  }
  return false;
}

}  // namespace

bool Scheduler::AppendUnsampledEos(Request* req) {
  grammar::Matcher& matcher = *req->matcher;
  for (int32_t eos : matcher.grammar().vocab().eos_ids()) {
    if (eos < 0 || eos >= runner_->vocab_size() || !matcher.AcceptToken(eos)) continue;
    req->token_ids.push_back(eos);
    req->penalties.AddOutputToken(eos);
    if (req->in.return_logprob) req->output_logprobs.push_back({eos, std::nullopt, {}, {}});
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

bool Scheduler::JumpForwardEnabled(const Request& req) const {
  return config_.enable_jump_forward && req.matcher.has_value() && !cache_->disabled() &&
         codec_ != nullptr;
}

std::optional<Scheduler::JumpPlan> Scheduler::PlanJump(const Request& req, int32_t replaced) const {
  const grammar::Matcher& matcher = *req.matcher;
  const grammar::TokenVocab& vocab = matcher.grammar().vocab();
  std::string forced = matcher.ForcedBytes();
  forced.resize(WholeUtf8CharsPrefix(forced));
  if (forced.empty()) return std::nullopt;

  // The replaced (newest sampled) token must start and end on character boundaries, so the
  // decoder behind the stop checker holds nothing back and the forced text can be appended as is.
  std::string head;
  if (replaced == 1) {
    head = vocab.bytes(req.token_ids.back());
    if (head.empty() || IsUtf8ContinuationByte(head[0]) ||
        WholeUtf8CharsPrefix(head) != head.size()) {
      return std::nullopt;
    }
  }
  const std::string text = head + forced;
  StatusOr<std::vector<int32_t>> encoded = codec_->EncodeContinuation(text);
  if (!encoded.ok() || encoded->empty()) return std::nullopt;

  // Replay on a copy: the new tokens must spell a prefix of `text` that the grammar accepts.
  JumpPlan plan{.tokens = std::move(*encoded),
                .text = {},
                .matcher = matcher.Clone(),
                .forced_text = {},
                .kept = 0};
  if (!plan.matcher.Rollback(replaced).ok()) return std::nullopt;
  for (int32_t t : plan.tokens) {
    if (req.stop.IsStopToken(t) || !plan.matcher.AcceptToken(t)) return std::nullopt;
    plan.text += vocab.bytes(t);
  }
  auto drop_last = [&] {
    plan.text.resize(plan.text.size() - vocab.bytes(plan.tokens.back()).size());
    plan.tokens.pop_back();
    return plan.matcher.Rollback(1).ok();
  };
  // The last forced token is left to the model when a longer token the grammar allows starts
  // with it: its text may fuse with what the model writes next (a forced `"` before a sampled
  // `:` is `":` in the tokenizer's own output), and a sequence that stops at a boundary the
  // tokenizer would not write skews what the model predicts next. The model still must write
  // those bytes: the mask allows only them or tokens that begin with them.
  if (!plan.matcher.MustTerminate()) {
    grammar::Matcher before_last = plan.matcher.Clone();
    if (!before_last.Rollback(1).ok()) return std::nullopt;
    if (MayFuseWithWhatFollows(before_last, plan.tokens.back(), vocab) && !drop_last()) {
      return std::nullopt;
    }
  }
  // Outputs before the replaced token stay; the new tokens get the rest of the budget.
  const int64_t room = req.max_new_tokens - (req.output_len() - replaced);
  while (static_cast<int64_t>(plan.tokens.size()) > room) {
    if (!drop_last()) return std::nullopt;
  }
  // A cut may end inside a character: drop tokens back to a boundary.
  while (!plan.tokens.empty() && WholeUtf8CharsPrefix(plan.text) != plan.text.size()) {
    if (!drop_last()) return std::nullopt;
  }
  if (plan.text.size() <= head.size() || text.compare(0, plan.text.size(), plan.text) != 0) {
    return std::nullopt;
  }
  plan.kept = replaced == 1 && plan.tokens.front() == req.token_ids.back() ? 1 : 0;
  plan.forced_text = plan.text.substr(head.size());
  return plan;
}

bool Scheduler::ApplyJump(Request* req, int32_t replaced, JumpPlan plan) {
  req->token_ids.resize(req->token_ids.size() - replaced);
  req->token_ids.insert(req->token_ids.end(), plan.tokens.begin(), plan.tokens.end());
  req->matcher = std::move(plan.matcher);
  if (static_cast<size_t>(replaced) >
      plan.kept) {  // a sampled token was replaced: recount the outputs
    req->penalties.Clear();
    if (req->in.params.repetition_penalty != 1.0f) req->penalties.SetPromptTokens(req->prompt());
    for (int32_t t : req->output_ids()) req->penalties.AddOutputToken(t);
  } else {
    for (size_t i = plan.kept; i < plan.tokens.size(); ++i) {
      req->penalties.AddOutputToken(plan.tokens[i]);
    }
  }
  if (req->in.return_logprob) {
    req->output_logprobs.resize(req->output_logprobs.size() -
                                (static_cast<size_t>(replaced) - plan.kept));
    for (size_t i = plan.kept; i < plan.tokens.size(); ++i) {
      req->output_logprobs.push_back({plan.tokens[i], std::nullopt, {}, {}});
    }
  }
  const auto placed = static_cast<int64_t>(plan.tokens.size() - plan.kept);
  req->jump_forward_tokens += placed;
  stats_.jump_forward_tokens += placed;
  ++stats_.jump_forwards;

  std::optional<FinishReason> finish = req->stop.OnForcedText(plan.forced_text, req->output_len());
  if (finish.has_value()) {
    FinishRequest(req, std::move(*finish));
    return true;
  }
  return req->matcher->MustTerminate() && AppendUnsampledEos(req);
}

bool Scheduler::TryJumpForward(Request* req) {
  if (!JumpForwardEnabled(*req)) return false;
  RADIXLM_CHECK(req->state == RequestState::kDecoding);
  if (req->matcher->MustTerminate()) return AppendUnsampledEos(req);
  std::optional<JumpPlan> plan = PlanJump(*req, /*replaced=*/1);
  if (!plan.has_value()) return false;
  // The tree takes the KV of tokens [0, kv_len): every token but the sampled one.
  ReleaseKv(req);
  RemoveFromQueues(req);
  if (ApplyJump(req, 1, std::move(*plan))) return true;  // finished
  // Back to waiting with its outputs: the next admission extends it over its cached prefix.
  req->state = RequestState::kWaiting;
  req->match_len = -1;
  req->match_node = nullptr;
  waiting_.push_back(req);
  EmitOutput(req);
  return true;
}

bool Scheduler::JumpForwardAtStart(Request* req) {
  if (!JumpForwardEnabled(*req) || req->output_len() != 0) return false;
  std::optional<JumpPlan> plan = PlanJump(*req, /*replaced=*/0);
  if (!plan.has_value()) return false;
  if (ApplyJump(req, 0, std::move(*plan))) return true;
  EmitOutput(req);
  return false;
}

}  // namespace radixlm
