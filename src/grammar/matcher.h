// Matcher: the per-request state of constrained decoding over a CompiledGrammar.
//
// One concrete class for all three grammar kinds (a DFA state for regex / JSON schema, an
// Earley recognizer for EBNF): no virtual call per token. Every successful AcceptToken or
// AcceptBytes call is one *step*; Rollback(k) undoes the last k steps (speculative decoding,
// jump-forward retokenization). An EOS token is accepted only where the grammar can end and
// then terminates the matcher.
//
// Copying is Clone(): the compiled grammar is shared (shared_ptr), the DFA state and history
// are small vectors, and Earley sets are shared immutable nodes. Not thread-safe, not even its
// const methods (EBNF masks probe the parser in place); one matcher per request, any number
// of matchers per grammar on any threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/compiled_grammar.h"
#include "grammar/earley.h"
#include "util/status.h"

namespace radixlm::grammar {

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const CompiledGrammar> grammar);

  Matcher Clone() const { return *this; }

  // Accepts token `id`: its bytes, or an EOS id where CanTerminate(). Returns false and leaves
  // the state unchanged otherwise (also for ids with no bytes, out-of-range ids, and anything
  // after termination).
  bool AcceptToken(int32_t id);
  // Accepts raw bytes (e.g. jump-forward text) all or nothing.
  bool AcceptBytes(std::string_view bytes);

  // The output so far is a complete match: EOS is allowed now.
  bool CanTerminate() const;
  // The output so far is a complete match that no byte can extend: only EOS may follow (so
  // jump-forward takes it without a forward pass). False once terminated.
  bool MustTerminate() const;
  // An EOS token has been accepted.
  bool IsTerminated() const { return !steps_.empty() && steps_.back().eos; }

  // Undoes the last `num_steps` steps. OutOfRange (changing nothing) if fewer were taken.
  Status Rollback(int32_t num_steps);
  int32_t num_steps() const { return static_cast<int32_t>(steps_.size()); }

  // The longest byte string that every accepted continuation starts with (for jump-forward).
  // Empty when the next byte is not determined or the grammar may end here.
  std::string ForcedBytes() const;

  // Writes the allowed-token bitmask (layout of sampling/token_bitmask.h: bit t%32 of word
  // t/32). mask.size() must be >= BitmaskWords(vocab size); words past it are zeroed too.
  // After termination only the EOS ids are set.
  void FillTokenMask(std::span<int32_t> mask) const;

  const CompiledGrammar& grammar() const { return *grammar_; }

 private:
  struct Step {
    int64_t before;  // DFA state, or Earley bytes consumed, before the step
    bool eos;
  };
  bool AcceptBytesInternal(std::string_view bytes);

  std::shared_ptr<const CompiledGrammar> grammar_;
  const Dfa* dfa_ = nullptr;  // regex / JSON schema
  int32_t state_ = 0;         // current DFA state
  // EBNF. Mutable: FillTokenMask and ForcedBytes push bytes onto it and pop them again
  // (the state is unchanged on return), which avoids copying the whole parse stack per call.
  mutable std::optional<EarleyRecognizer> earley_;
  std::vector<Step> steps_;
};

}  // namespace radixlm::grammar
