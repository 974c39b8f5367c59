#include "grammar/matcher.h"

#include <algorithm>
#include <cassert>

#include "grammar/token_walk.h"
#include "sampling/token_bitmask.h"

namespace radixlm::grammar {
namespace {

// WalkVocabulary cursor over an Earley recognizer; it pushes onto the recognizer itself and
// pops back, so the recognizer ends where it started.
struct EarleyCursor {
  EarleyRecognizer& recognizer;
  bool Push(uint8_t byte) { return recognizer.Push(byte); }
  void Pop() { recognizer.Pop(); }
};

// Bounds jump-forward on grammars whose forced text could be long (EBNF repetition bodies).
constexpr size_t kMaxForcedBytes = 4096;

}  // namespace

Matcher::Matcher(std::shared_ptr<const CompiledGrammar> grammar) : grammar_(std::move(grammar)) {
  dfa_ = grammar_->dfa();
  if (dfa_) {
    state_ = dfa_->start();
  } else {
    earley_.emplace(grammar_->cfg());
  }
}

bool Matcher::AcceptBytesInternal(std::string_view bytes) {
  if (dfa_) {
    const int32_t next = dfa_->Walk(state_, bytes.data(), bytes.size());
    if (next == Dfa::kDead) return false;
    steps_.push_back({state_, false});
    state_ = next;
    return true;
  }
  const size_t before = earley_->consumed();
  for (char c : bytes) {
    if (!earley_->Push(static_cast<uint8_t>(c))) {
      earley_->Truncate(before);
      return false;
    }
  }
  steps_.push_back({static_cast<int64_t>(before), false});
  return true;
}

bool Matcher::AcceptToken(int32_t id) {
  if (IsTerminated() || id < 0 || id >= grammar_->vocab().size()) return false;
  if (grammar_->vocab().IsEos(id)) {
    if (!CanTerminate()) return false;
    steps_.push_back({dfa_ ? state_ : static_cast<int64_t>(earley_->consumed()), true});
    return true;
  }
  const std::string& bytes = grammar_->vocab().bytes(id);
  if (bytes.empty()) return false;
  return AcceptBytesInternal(bytes);
}

bool Matcher::AcceptBytes(std::string_view bytes) {
  if (IsTerminated()) return false;
  return AcceptBytesInternal(bytes);
}

bool Matcher::CanTerminate() const {
  if (IsTerminated()) return true;
  return dfa_ ? dfa_->IsAccepting(state_) : earley_->CanTerminate();
}

bool Matcher::MustTerminate() const {
  if (IsTerminated() || !CanTerminate()) return false;
  if (dfa_) {
    for (int b = 0; b < 256; ++b) {
      if (dfa_->Next(state_, static_cast<uint8_t>(b)) != Dfa::kDead) return false;
    }
    return true;
  }
  uint8_t only = 0;
  return earley_->CountNextBytes(&only) == 0;
}

Status Matcher::Rollback(int32_t num_steps) {
  if (num_steps < 0 || num_steps > static_cast<int32_t>(steps_.size())) {
    return OutOfRange("cannot roll back " + std::to_string(num_steps) + " steps; only " +
                      std::to_string(steps_.size()) + " taken");
  }
  if (num_steps == 0) return Status::Ok();
  const Step target = steps_[steps_.size() - num_steps];
  steps_.resize(steps_.size() - num_steps);
  if (dfa_) {
    state_ = static_cast<int32_t>(target.before);
  } else {
    earley_->Truncate(static_cast<size_t>(target.before));
  }
  return Status::Ok();
}

std::string Matcher::ForcedBytes() const {
  std::string forced;
  if (IsTerminated()) return forced;
  if (dfa_) {
    // Trimmed DFA: every non-dead edge leads to a live state, so a state with exactly one
    // outgoing byte (and not accepting) forces that byte. No such chain can cycle forever:
    // a cycle without an exit would not be live.
    int32_t s = state_;
    while (!dfa_->IsAccepting(s) && forced.size() < kMaxForcedBytes) {
      int32_t only_next = Dfa::kDead;
      int only_byte = -1;
      for (int b = 0; b < 256; ++b) {
        const int32_t t = dfa_->Next(s, static_cast<uint8_t>(b));
        if (t == Dfa::kDead) continue;
        if (only_byte >= 0) {
          only_byte = -2;
          break;
        }
        only_byte = b, only_next = t;
      }
      if (only_byte < 0) break;
      forced.push_back(static_cast<char>(only_byte));
      s = only_next;
    }
    return forced;
  }
  const size_t consumed = earley_->consumed();
  uint8_t only = 0;
  while (!earley_->CanTerminate() && forced.size() < kMaxForcedBytes &&
         earley_->CountNextBytes(&only) == 1 && earley_->Push(only)) {
    forced.push_back(static_cast<char>(only));
  }
  earley_->Truncate(consumed);
  return forced;
}

void Matcher::FillTokenMask(std::span<int32_t> mask) const {
  const TokenVocab& vocab = grammar_->vocab();
  assert(mask.size() >= static_cast<size_t>(BitmaskWords(vocab.size())));
  std::fill(mask.begin(), mask.end(), 0);
  if (IsTerminated()) {
    for (int32_t id : vocab.eos_ids()) {
      if (id >= 0 && id < vocab.size()) SetTokenAllowed(mask, id, true);
    }
    return;
  }
  if (dfa_) {
    const std::vector<int32_t>& cached = grammar_->DfaStateMask(state_);
    std::copy(cached.begin(), cached.end(), mask.begin());
    return;
  }
  const int32_t state = earley_->CanonicalState(
      [&](const std::vector<int32_t>& key) { return grammar_->InternEarleyState(key); });
  const size_t words = BitmaskWords(vocab.size());
  if (const std::vector<int32_t>* cached = state >= 0 ? grammar_->EarleyMask(state) : nullptr) {
    std::copy(cached->begin(), cached->end(), mask.begin());
    return;
  }
  EarleyCursor cursor{*earley_};  // pushes and pops back: earley_ ends where it started
  WalkVocabulary(vocab, cursor, [&](int32_t id) { SetTokenAllowed(mask, id, true); });
  if (earley_->CanTerminate()) {
    for (int32_t id : vocab.eos_ids()) {
      if (id >= 0 && id < vocab.size()) SetTokenAllowed(mask, id, true);
    }
  }
  if (state >= 0) grammar_->StoreEarleyMask(state, mask.first(words));
}

}  // namespace radixlm::grammar
