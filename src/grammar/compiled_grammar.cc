#include "grammar/compiled_grammar.h"

#include "grammar/ebnf_parser.h"
#include "grammar/nfa.h"
#include "grammar/regex_parser.h"
#include "grammar/structural_tag.h"
#include "grammar/token_walk.h"
#include "sampling/token_bitmask.h"
#include "util/thread_pool.h"

namespace radixlm::grammar {
namespace {

// WalkVocabulary cursor over a DFA: a stack of states, one per pushed byte.
class DfaCursor {
 public:
  DfaCursor(const Dfa& dfa, int32_t state, size_t max_depth) : dfa_(dfa) {
    stack_.reserve(max_depth + 1);
    stack_.push_back(state);
  }
  bool Push(uint8_t byte) {
    const int32_t next = dfa_.Next(stack_.back(), byte);
    if (next == Dfa::kDead) return false;
    stack_.push_back(next);
    return true;
  }
  void Pop() { stack_.pop_back(); }

 private:
  const Dfa& dfa_;
  std::vector<int32_t> stack_;
};

}  // namespace

StatusOr<Dfa> CompileRegex(std::string_view pattern, const CompileOptions& options) {
  RADIXLM_ASSIGN_OR_RETURN(RegexNode ast, ParseRegex(pattern));
  RADIXLM_ASSIGN_OR_RETURN(Nfa nfa, BuildNfa(ast, options.max_nfa_states));
  return BuildDfa(nfa, options.max_dfa_states);
}

const char* GrammarKindName(GrammarKind kind) {
  switch (kind) {
    case GrammarKind::kRegex:
      return "regex";
    case GrammarKind::kJsonSchema:
      return "json_schema";
    case GrammarKind::kEbnf:
      return "ebnf";
    case GrammarKind::kStructuralTag:
      return "structural_tag";
  }
  return "?";
}

Status CompiledGrammar::Validate(GrammarKind kind, std::string_view text,
                                 const CompileOptions& options) {
  switch (kind) {
    case GrammarKind::kRegex:
      return ParseRegex(text).status();
    case GrammarKind::kJsonSchema: {
      RADIXLM_ASSIGN_OR_RETURN(std::string regex, JsonSchemaToRegex(text, options.json));
      Status parsed = ParseRegex(regex).status();
      if (!parsed.ok()) {
        return Status(parsed.code(),
                      "JSON schema: " + parsed.message() + " (while compiling its regex)");
      }
      return Status::Ok();
    }
    case GrammarKind::kEbnf:
      return ParseEbnf(text).status();
    case GrammarKind::kStructuralTag:
      return ParseStructuralTag(text, options).status();
  }
  return Status::Ok();
}

StatusOr<std::shared_ptr<const CompiledGrammar>> CompiledGrammar::Compile(
    GrammarKind kind, std::string_view text, std::shared_ptr<const TokenVocab> vocab,
    const CompileOptions& options) {
  std::shared_ptr<CompiledGrammar> g(new CompiledGrammar());
  g->kind_ = kind;
  g->vocab_ = std::move(vocab);
  switch (kind) {
    case GrammarKind::kRegex: {
      RADIXLM_ASSIGN_OR_RETURN(Dfa dfa, CompileRegex(text, options));
      g->dfa_ = std::move(dfa);
      break;
    }
    case GrammarKind::kJsonSchema: {
      RADIXLM_ASSIGN_OR_RETURN(g->regex_, JsonSchemaToRegex(text, options.json));
      auto dfa = CompileRegex(g->regex_, options);
      if (!dfa.ok()) {
        return Status(dfa.status().code(),
                      "JSON schema: " + dfa.status().message() + " (while compiling its regex)");
      }
      g->dfa_ = std::move(dfa).value();
      break;
    }
    case GrammarKind::kEbnf: {
      RADIXLM_ASSIGN_OR_RETURN(Cfg cfg, ParseEbnf(text));
      g->cfg_ = std::make_shared<const Cfg>(std::move(cfg));
      break;
    }
    case GrammarKind::kStructuralTag: {
      RADIXLM_ASSIGN_OR_RETURN(StructuralTagSpec spec, ParseStructuralTag(text, options));
      RADIXLM_ASSIGN_OR_RETURN(Dfa dfa, BuildStructuralTagDfa(spec, options));
      g->dfa_ = std::move(dfa);
      break;
    }
  }
  if (g->dfa_) {
    MutexLock lock(&g->mask_mutex_);  // not shared yet, but masks_ is guarded
    g->masks_.resize(g->dfa_->num_states());
  }
  return std::shared_ptr<const CompiledGrammar>(std::move(g));
}

const std::vector<int32_t>& CompiledGrammar::DfaStateMask(int32_t state) const {
  {
    MutexLock lock(&mask_mutex_);
    if (masks_[state]) return *masks_[state];
  }
  // Computed outside the lock: two threads may both compute the same mask; the first one
  // stored wins and the results are identical anyway.
  auto mask = std::make_unique<std::vector<int32_t>>(BitmaskWords(vocab_->size()), 0);
  DfaCursor cursor(*dfa_, state, vocab_->max_token_bytes());
  WalkVocabulary(*vocab_, cursor, [&](int32_t id) { SetTokenAllowed(*mask, id, true); });
  if (dfa_->IsAccepting(state)) {
    for (int32_t id : vocab_->eos_ids()) {
      if (id >= 0 && id < vocab_->size()) SetTokenAllowed(*mask, id, true);
    }
  }
  MutexLock lock(&mask_mutex_);
  if (!masks_[state]) masks_[state] = std::move(mask);
  return *masks_[state];
}

void CompiledGrammar::PrecomputeMasks(ThreadPool* pool) const {
  if (!dfa_) return;
  const int32_t n = dfa_->num_states();
  if (pool == nullptr) {
    for (int32_t s = 0; s < n; ++s) DfaStateMask(s);
    return;
  }
  pool->ParallelFor(n, [&](int64_t begin, int64_t end, int) {
    for (int64_t s = begin; s < end; ++s) DfaStateMask(static_cast<int32_t>(s));
  });
}

int32_t CompiledGrammar::InternEarleyState(const std::vector<int32_t>& key) const {
  MutexLock lock(&mask_mutex_);
  auto it = earley_ids_.find(key);
  if (it != earley_ids_.end()) return it->second;
  if (earley_ids_.size() >= kMaxEarleyStates) return -1;
  const auto id = static_cast<int32_t>(earley_ids_.size());
  earley_ids_.emplace(key, id);
  return id;
}

const std::vector<int32_t>* CompiledGrammar::EarleyMask(int32_t id) const {
  MutexLock lock(&mask_mutex_);
  auto it = earley_masks_.find(id);
  return it == earley_masks_.end() ? nullptr : it->second.get();
}

void CompiledGrammar::StoreEarleyMask(int32_t id, std::span<const int32_t> mask) const {
  MutexLock lock(&mask_mutex_);
  if (earley_masks_.size() >= kMaxEarleyMasks || earley_masks_.count(id)) return;
  earley_masks_.emplace(id, std::make_unique<const std::vector<int32_t>>(mask.begin(), mask.end()));
}

size_t CompiledGrammar::earley_masks_cached() const {
  MutexLock lock(&mask_mutex_);
  return earley_masks_.size();
}

}  // namespace radixlm::grammar
