// CompiledGrammar: a grammar (regex, JSON schema or EBNF) compiled against one vocabulary —
// the immutable, shareable half of constrained decoding. Matchers (matcher.h) hold the
// per-request state and point back here through a shared_ptr.
//
//   auto vocab = TokenVocab::FromTokenizer(tokenizer, tokenizer.eog_ids());
//   auto grammar = CompiledGrammar::Compile(GrammarKind::kJsonSchema, schema, vocab);
//   Matcher m(*grammar);
//
// Regex and JSON schema compile to a minimized byte DFA; the allowed-token mask of each DFA
// state is computed on first use and cached here, shared by every matcher of the grammar
// (thread-safe). EBNF compiles to a Cfg matched by an Earley recognizer; its masks depend on
// the whole parse stack, so they are cached by the stack's canonical id
// (EarleyRecognizer::CanonicalState), up to a fixed number of ids and masks per grammar.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "grammar/cfg.h"
#include "grammar/dfa.h"
#include "grammar/json_schema.h"
#include "grammar/token_vocab.h"
#include "util/mutex.h"
#include "util/status.h"

namespace radixlm {
class ThreadPool;
}

namespace radixlm::grammar {

// kStructuralTag: structural_tag.h (free text with triggered, schema-constrained structures).
enum class GrammarKind { kRegex, kJsonSchema, kEbnf, kStructuralTag };

const char* GrammarKindName(GrammarKind kind);

struct CompileOptions {
  // Subset construction stops with ResourceExhausted beyond this many DFA states (each costs
  // 1 KiB of transitions plus, once used, a vocab/8-byte mask).
  size_t max_dfa_states = 20000;
  size_t max_nfa_states = 200000;
  JsonSchemaOptions json;
};

// A regex's automaton (parse, NFA, DFA within the options' state caps), without token masks:
// what Compile builds first for a regex, for callers that must know it can be built.
StatusOr<Dfa> CompileRegex(std::string_view pattern, const CompileOptions& options);

class CompiledGrammar {
 public:
  static StatusOr<std::shared_ptr<const CompiledGrammar>> Compile(
      GrammarKind kind, std::string_view text, std::shared_ptr<const TokenVocab> vocab,
      const CompileOptions& options = {});
  // The cheap part of Compile: parses the text (regex / JSON schema → regex → parse / EBNF)
  // without building automata or masks. OK does not promise Compile succeeds (the DFA may still
  // exceed its cap); an error here is the error Compile would return.
  static Status Validate(GrammarKind kind, std::string_view text,
                         const CompileOptions& options = {});

  GrammarKind kind() const { return kind_; }
  const TokenVocab& vocab() const { return *vocab_; }
  // Set for regex, JSON schema and structural tags (nullptr for EBNF).
  const Dfa* dfa() const { return dfa_ ? &*dfa_ : nullptr; }
  // Set for EBNF (nullptr otherwise).
  const std::shared_ptr<const Cfg>& cfg() const { return cfg_; }
  // The regex a JSON schema was lowered to ("" for other kinds): useful in error reports.
  const std::string& regex() const { return regex_; }

  // The allowed-token mask of DFA state `state` ([BitmaskWords(vocab.size())] words, EOS bits
  // set iff the state accepts). Computed once per state, then shared; thread-safe. The
  // returned reference stays valid as long as this grammar.
  const std::vector<int32_t>& DfaStateMask(int32_t state) const;

  // Computes the mask of every DFA state now (on `pool` if given, else on the caller), so
  // decoding never pays for a first visit; no-op for EBNF. Thread-safe. Cost: about one
  // vocabulary walk per state (~1 s for ~900 states and a 100k vocabulary on one core).
  void PrecomputeMasks(ThreadPool* pool = nullptr) const;

  // EBNF mask cache (thread-safe). InternEarleyState gives a parse-state key its id (-1 once
  // kMaxEarleyStates ids exist); EarleyMask is the cached mask of an id or nullptr;
  // StoreEarleyMask keeps a computed mask unless kMaxEarleyMasks are kept already.
  static constexpr size_t kMaxEarleyStates = 20000;
  static constexpr size_t kMaxEarleyMasks = 256;
  int32_t InternEarleyState(const std::vector<int32_t>& key) const;
  const std::vector<int32_t>* EarleyMask(int32_t id) const;
  void StoreEarleyMask(int32_t id, std::span<const int32_t> mask) const;
  size_t earley_masks_cached() const;

 private:
  CompiledGrammar() = default;

  GrammarKind kind_ = GrammarKind::kRegex;
  std::shared_ptr<const TokenVocab> vocab_;
  std::optional<Dfa> dfa_;
  std::shared_ptr<const Cfg> cfg_;
  std::string regex_;

  mutable Mutex mask_mutex_;
  // [dfa states]; a slot is filled once and never replaced.
  mutable std::vector<std::unique_ptr<const std::vector<int32_t>>> masks_ GUARDED_BY(mask_mutex_);
  // EBNF: canonical parse-state keys → ids, and masks by id; entries are never replaced.
  mutable std::map<std::vector<int32_t>, int32_t> earley_ids_ GUARDED_BY(mask_mutex_);
  mutable std::unordered_map<int32_t, std::unique_ptr<const std::vector<int32_t>>> earley_masks_
      GUARDED_BY(mask_mutex_);
};

}  // namespace radixlm::grammar
