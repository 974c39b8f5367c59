#include "scheduler/stop_checker.h"

#include <algorithm>
#include <string_view>

#include "util/check.h"

namespace radixlm {

StopChecker::StopChecker(const SamplingParams& params, int64_t max_new_tokens,
                         std::span<const int32_t> eog_token_ids,
                         std::unique_ptr<TokenTextDecoder> decoder)
    : min_new_tokens_(params.min_new_tokens),
      max_new_tokens_(max_new_tokens),
      no_stop_trim_(params.no_stop_trim),
      decoder_(std::move(decoder)) {
  if (!params.ignore_eos) stop_ids_.assign(eog_token_ids.begin(), eog_token_ids.end());
  stop_ids_.insert(stop_ids_.end(), params.stop_token_ids.begin(), params.stop_token_ids.end());
  std::sort(stop_ids_.begin(), stop_ids_.end());
  stop_ids_.erase(std::unique(stop_ids_.begin(), stop_ids_.end()), stop_ids_.end());
  if (decoder_ != nullptr) {
    for (const std::string& s : params.stop) {
      if (s.empty()) continue;
      stop_strings_.push_back(s);
      max_stop_len_ = std::max(max_stop_len_, s.size());
    }
    for (const std::string& pattern : params.stop_regex) {
      if (pattern.empty()) continue;
      if (auto dfa = grammar::CompileStopRegex(pattern); dfa.ok()) {
        stop_regexes_.push_back({pattern, grammar::StopRegexSearch(std::move(*dfa))});
      }
    }
  }
}

void StopChecker::AppendTokenText(int32_t token) {
  if (decoder_ != nullptr) text_ += decoder_->Append(token);
}

std::optional<FinishReason> StopChecker::OnToken(int32_t token, int64_t output_count) {
  RADIXLM_DCHECK(!finished_);
  std::optional<FinishReason> finish;
  const size_t old_size = text_.size();
  if (output_count < min_new_tokens_) {
    AppendTokenText(token);
  } else if (output_count >= max_new_tokens_) {
    AppendTokenText(token);
    finish = FinishReason::Length(output_count);
  } else if (std::binary_search(stop_ids_.begin(), stop_ids_.end(), token)) {
    if (no_stop_trim_) AppendTokenText(token);
    finish = FinishReason::StopToken(token);
  } else {
    AppendTokenText(token);
    if (std::optional<std::string> matched = FindStop(old_size)) {
      finished_ = true;
      return FinishReason::StopString(std::move(*matched));
    }
  }
  if (finish.has_value()) {
    finished_ = true;
    if (decoder_ != nullptr) text_ += decoder_->Flush();
  }
  return finish;
}

std::optional<FinishReason> StopChecker::OnForcedText(std::string_view text, int64_t output_count) {
  RADIXLM_DCHECK(!finished_);
  const size_t old_size = text_.size();
  if (decoder_ != nullptr) text_ += text;
  if (output_count < min_new_tokens_) return std::nullopt;
  if (output_count >= max_new_tokens_) {
    finished_ = true;
    return FinishReason::Length(output_count);
  }
  if (std::optional<std::string> matched = FindStop(old_size)) {
    finished_ = true;
    return FinishReason::StopString(std::move(*matched));
  }
  return std::nullopt;
}

std::optional<std::string> StopChecker::FindStop(size_t old_size) {
  if (std::optional<std::string> matched = FindStopString(old_size)) return matched;
  return FindStopRegex();
}

std::optional<std::string> StopChecker::FindStopRegex() {
  // The earliest match start over the patterns (the first listed on a tie).
  const StopRegex* best = nullptr;
  size_t best_start = 0, best_end = 0;
  for (StopRegex& r : stop_regexes_) {
    const size_t fed = r.search.size();
    if (fed >= text_.size()) continue;
    if (std::optional<size_t> start = r.search.Feed(std::string_view(text_).substr(fed))) {
      if (best == nullptr || *start < best_start) {
        best = &r;
        best_start = *start;
        best_end = r.search.size();
      }
    }
  }
  if (best == nullptr) return std::nullopt;
  // The held-back tail covers every live match start, so nothing handed out is cut here.
  RADIXLM_DCHECK_GE(best_start, emitted_);
  text_.resize(no_stop_trim_ ? best_end : best_start);
  return best->pattern;
}

std::optional<std::string> StopChecker::FindStopString(size_t old_size) {
  if (stop_strings_.empty() || text_.size() == old_size) return std::nullopt;
  // A match must end inside the new text; it may start up to max_stop_len - 1 bytes earlier.
  const size_t from = old_size >= max_stop_len_ - 1 ? old_size - (max_stop_len_ - 1) : 0;
  const std::string_view window = std::string_view(text_).substr(from);
  size_t best_pos = std::string_view::npos;
  const std::string* best = nullptr;
  for (const std::string& s : stop_strings_) {
    const size_t pos = window.find(s);
    if (pos != std::string_view::npos && (best == nullptr || pos < best_pos)) {
      best_pos = pos;
      best = &s;
    }
  }
  if (best == nullptr) return std::nullopt;
  const size_t start = from + best_pos;
  // The held-back tail always covers a possible stop string's start, so nothing handed out is
  // cut here.
  RADIXLM_DCHECK_GE(start, emitted_);
  text_.resize(no_stop_trim_ ? start + best->size() : start);
  return *best;
}

size_t StopChecker::HeldBackTail() const {
  const std::string_view pending = std::string_view(text_).substr(emitted_);
  size_t hold = 0;
  for (const StopRegex& r : stop_regexes_) {
    // Text from the earliest start of a match still alive may yet be cut.
    const size_t live = std::max(r.search.EarliestLiveStart(), emitted_);
    if (live < text_.size()) hold = std::max(hold, text_.size() - live);
  }
  for (const std::string& s : stop_strings_) {
    // Longest proper prefix of s that the text ends with.
    for (size_t k = std::min(s.size() - 1, pending.size()); k > hold; --k) {
      if (pending.ends_with(std::string_view(s).substr(0, k))) {
        hold = k;
        break;
      }
    }
  }
  return hold;
}

std::string StopChecker::TakeText() {
  const size_t end = finished_ ? text_.size() : text_.size() - HeldBackTail();
  if (end <= emitted_) return {};
  std::string out = text_.substr(emitted_, end - emitted_);
  emitted_ = end;
  return out;
}

}  // namespace radixlm
