// Structural tags (SGLang's `structural_tag` sampling parameter and response_format type,
// compiled by xgrammar there): free text until the output completes one of the *triggers*,
// then one of the structures whose `begin` starts with that trigger — the rest of its begin,
// its content (JSON matching a schema), its end — then free text again, any number of times.
// Function calling uses it to constrain a call once the model opens one (tool_choice "auto").
//
// Accepted request shapes (JSON text; a top-level "type" must be "structural_tag" if present):
//   SGLang's:  {"structures": [{"begin": B, "schema": S, "end": E}, ...], "triggers": [T, ...]}
//              (S: a JSON schema object, or its JSON text; absent/null: any JSON value)
//   xgrammar's format:
//     {"format": {"type": "triggered_tags", "triggers": [...],
//                 "tags": [{"type": "tag", "begin": B, "content": C, "end": E}, ...],
//                 "at_least_one": false, "stop_after_first": bool}}
//     C: {"type": "json_schema", "json_schema": S} | {"type": "regex", "pattern": P}
//        | {"type": "const_string", "value": V};  E: a string or a list of strings.
// Anything else is InvalidArgument naming what is not supported (other format types,
// at_least_one true, unknown fields).
//
// Rules (InvalidArgument otherwise): at least one structure, at most 1024 structures and 1024
// triggers (the checks below compare them pairwise); triggers non-empty and none
// contains another (so the output completes at most one at a time and the trigger a structure
// belongs to is unambiguous); every structure's begin starts with a trigger and every trigger
// starts some structure; a structure may not go on after a complete match (its end must close
// it: e.g. an empty end after a bare-number schema is refused), so control returns to free
// text at one definite point.
//
// Lowering: one byte DFA. Free text is an Aho-Corasick automaton over the triggers (every
// state accepting); completing trigger T enters the DFA of the regex
// alt(rest-of-begin · content · end) over T's structures; that DFA's final state continues
// like the free start state (or, with stop_after_first, accepts and allows nothing more).
// The result is trimmed and minimized like any regex DFA, so token masks, EOS handling and
// jump-forward (forced text inside a structure) work unchanged.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "grammar/compiled_grammar.h"
#include "grammar/dfa.h"
#include "util/status.h"

namespace radixlm::grammar {

struct StructuralTagSpec {
  struct Structure {
    std::string begin;
    std::string content_regex;      // the lowered schema / pattern / literal
    std::vector<std::string> ends;  // alternatives, at least one
  };
  std::vector<Structure> structures;
  std::vector<std::string> triggers;
  bool stop_after_first = false;
};

// Parses either request shape, lowers each content to a regex (JSON schemas with
// `options.json`) and checks the rules above, all but the one on ends (that one needs the
// automaton: BuildStructuralTagDfa checks it). ResourceExhausted when the triggers alone need
// more automaton states than options.max_dfa_states (one per distinct trigger prefix), so an
// oversized request is refused before anything of its size is built.
StatusOr<StructuralTagSpec> ParseStructuralTag(std::string_view text,
                                               const CompileOptions& options);

// The DFA described above. ResourceExhausted past options.max_dfa_states (or an NFA cap); the
// parts built before that is known never exceed the cap in all.
StatusOr<Dfa> BuildStructuralTagDfa(const StructuralTagSpec& spec, const CompileOptions& options);

}  // namespace radixlm::grammar
