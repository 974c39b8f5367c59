#include "grammar/structural_tag.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <queue>
#include <set>

#include "grammar/json_patterns.h"
#include "grammar/json_schema.h"
#include "grammar/nfa.h"
#include "grammar/regex_parser.h"

namespace radixlm::grammar {
namespace {

using json = nlohmann::json;

// Far beyond what function calling asks for; they bound the quadratic checks of CheckRules.
constexpr size_t kMaxTriggers = 1024;
constexpr size_t kMaxStructures = 1024;

Status Bad(const std::string& message) { return InvalidArgument("structural_tag: " + message); }

Status CheckKeys(const json& obj, const std::string& where, std::set<std::string> allowed) {
  for (const auto& [key, value] : obj.items()) {
    if (allowed.count(key) == 0) {
      return Bad(where + " has field \"" + key + "\", which radixlm does not support");
    }
  }
  return Status::Ok();
}

StatusOr<std::string> StringField(const json& obj, const std::string& where, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) {
    return Bad(where + "." + key + " must be a string");
  }
  return it->get<std::string>();
}

StatusOr<std::string> SchemaRegex(const json& schema, const std::string& where,
                                  const CompileOptions& options) {
  std::string text;
  if (schema.is_null()) {
    text = "{}";
  } else if (schema.is_string()) {
    text = schema.get<std::string>();
  } else if (schema.is_object() || schema.is_boolean()) {
    text = schema.dump();
  } else {
    return Bad(where + " must be a JSON schema object");
  }
  StatusOr<std::string> regex = JsonSchemaToRegex(text, options.json);
  if (!regex.ok()) return Bad(where + ": " + regex.status().message());
  return regex;
}

StatusOr<std::vector<std::string>> Triggers(const json& obj, const std::string& where) {
  auto it = obj.find("triggers");
  if (it == obj.end() || !it->is_array() || it->empty()) {
    return Bad(where + ".triggers must be a non-empty list of strings");
  }
  std::vector<std::string> out;
  for (const json& t : *it) {
    if (!t.is_string() || t.get<std::string>().empty()) {
      return Bad(where + ".triggers must hold non-empty strings");
    }
    out.push_back(t.get<std::string>());
  }
  return out;
}

StatusOr<StructuralTagSpec> ParseLegacy(const json& root, const CompileOptions& options) {
  RADIXLM_RETURN_IF_ERROR(CheckKeys(root, "the request", {"type", "structures", "triggers"}));
  StructuralTagSpec spec;
  RADIXLM_ASSIGN_OR_RETURN(spec.triggers, Triggers(root, "structural_tag"));
  const json& structures = root["structures"];
  if (!structures.is_array()) return Bad("structures must be a list");
  for (size_t i = 0; i < structures.size(); ++i) {
    const std::string where = "structures[" + std::to_string(i) + "]";
    const json& s = structures[i];
    if (!s.is_object()) return Bad(where + " must be an object");
    RADIXLM_RETURN_IF_ERROR(CheckKeys(s, where, {"begin", "schema", "end"}));
    StructuralTagSpec::Structure out;
    RADIXLM_ASSIGN_OR_RETURN(out.begin, StringField(s, where, "begin"));
    RADIXLM_ASSIGN_OR_RETURN(std::string end, StringField(s, where, "end"));
    out.ends.push_back(std::move(end));
    RADIXLM_ASSIGN_OR_RETURN(out.content_regex,
                             SchemaRegex(s.value("schema", json()), where + ".schema", options));
    spec.structures.push_back(std::move(out));
  }
  return spec;
}

StatusOr<std::string> ContentRegex(const json& content, const std::string& where,
                                   const CompileOptions& options) {
  if (!content.is_object()) return Bad(where + " must be an object");
  RADIXLM_ASSIGN_OR_RETURN(std::string type, StringField(content, where, "type"));
  if (type == "json_schema") {
    RADIXLM_RETURN_IF_ERROR(CheckKeys(content, where, {"type", "json_schema"}));
    auto it = content.find("json_schema");
    if (it == content.end()) return Bad(where + ".json_schema is required");
    return SchemaRegex(*it, where + ".json_schema", options);
  }
  if (type == "regex") {
    RADIXLM_RETURN_IF_ERROR(CheckKeys(content, where, {"type", "pattern"}));
    return StringField(content, where, "pattern");
  }
  if (type == "const_string") {
    RADIXLM_RETURN_IF_ERROR(CheckKeys(content, where, {"type", "value"}));
    RADIXLM_ASSIGN_OR_RETURN(std::string value, StringField(content, where, "value"));
    return json_patterns::EscapeRegex(value);
  }
  return Bad(where + ".type \"" + type +
             "\" is not supported by radixlm (supported: json_schema, regex, const_string)");
}

StatusOr<StructuralTagSpec> ParseFormat(const json& root, const CompileOptions& options) {
  RADIXLM_RETURN_IF_ERROR(CheckKeys(root, "the request", {"type", "format"}));
  const json& format = root["format"];
  if (!format.is_object()) return Bad("format must be an object");
  RADIXLM_ASSIGN_OR_RETURN(std::string type, StringField(format, "format", "type"));
  if (type != "triggered_tags") {
    return Bad("format.type \"" + type +
               "\" is not supported by radixlm (supported: triggered_tags)");
  }
  RADIXLM_RETURN_IF_ERROR(CheckKeys(
      format, "format", {"type", "triggers", "tags", "at_least_one", "stop_after_first"}));
  StructuralTagSpec spec;
  RADIXLM_ASSIGN_OR_RETURN(spec.triggers, Triggers(format, "format"));
  for (const char* flag : {"at_least_one", "stop_after_first"}) {
    auto it = format.find(flag);
    if (it != format.end() && !it->is_boolean()) {
      return Bad(std::string("format.") + flag + " must be a boolean");
    }
  }
  if (format.value("at_least_one", false)) {
    return Bad("format.at_least_one true is not supported by radixlm");
  }
  spec.stop_after_first = format.value("stop_after_first", false);
  auto tags = format.find("tags");
  if (tags == format.end() || !tags->is_array()) return Bad("format.tags must be a list");
  for (size_t i = 0; i < tags->size(); ++i) {
    const std::string where = "format.tags[" + std::to_string(i) + "]";
    const json& tag = (*tags)[i];
    if (!tag.is_object()) return Bad(where + " must be an object");
    RADIXLM_RETURN_IF_ERROR(CheckKeys(tag, where, {"type", "begin", "content", "end"}));
    if (tag.contains("type") && tag["type"] != "tag") return Bad(where + ".type must be \"tag\"");
    StructuralTagSpec::Structure out;
    RADIXLM_ASSIGN_OR_RETURN(out.begin, StringField(tag, where, "begin"));
    const json end = tag.value("end", json());
    if (end.is_string()) {
      out.ends.push_back(end.get<std::string>());
    } else if (end.is_array() && !end.empty() &&
               std::all_of(end.begin(), end.end(), [](const json& e) { return e.is_string(); })) {
      for (const json& e : end) out.ends.push_back(e.get<std::string>());
    } else {
      return Bad(where + ".end must be a string or a non-empty list of strings");
    }
    auto content = tag.find("content");
    if (content == tag.end()) return Bad(where + ".content is required");
    RADIXLM_ASSIGN_OR_RETURN(out.content_regex,
                             ContentRegex(*content, where + ".content", options));
    spec.structures.push_back(std::move(out));
  }
  return spec;
}

// The nodes of the triggers' trie (their distinct prefixes, the empty one included): sorted,
// each trigger adds the bytes past its common prefix with the one before.
size_t TriggerTrieNodes(std::vector<std::string> triggers) {
  std::sort(triggers.begin(), triggers.end());
  size_t nodes = 1;
  for (size_t i = 0; i < triggers.size(); ++i) {
    size_t common = 0;
    if (i > 0) {
      const std::string& a = triggers[i - 1];
      const std::string& b = triggers[i];
      while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
    }
    nodes += triggers[i].size() - common;
  }
  return nodes;
}

// The rules that need no automaton (see the header), and the limits checked before any is
// built: the rules compare every pair of triggers and every structure with every trigger, and
// every free-text trie node is an automaton state (1 KiB of transitions each).
Status CheckRules(const StructuralTagSpec& spec, const CompileOptions& options) {
  if (spec.structures.empty()) return Bad("at least one structure is required");
  if (spec.triggers.size() > kMaxTriggers || spec.structures.size() > kMaxStructures) {
    return Bad("at most " + std::to_string(kMaxTriggers) + " triggers and " +
               std::to_string(kMaxStructures) + " structures are supported, got " +
               std::to_string(spec.triggers.size()) + " and " +
               std::to_string(spec.structures.size()));
  }
  if (const size_t nodes = TriggerTrieNodes(spec.triggers); nodes > options.max_dfa_states) {
    return ResourceExhausted("structural_tag: the triggers alone need " + std::to_string(nodes) +
                             " automaton states, over the cap of " +
                             std::to_string(options.max_dfa_states));
  }
  for (size_t i = 0; i < spec.triggers.size(); ++i) {
    for (size_t j = 0; j < spec.triggers.size(); ++j) {
      if (i != j && spec.triggers[i].find(spec.triggers[j]) != std::string::npos) {
        return Bad("trigger \"" + spec.triggers[i] + "\" contains trigger \"" + spec.triggers[j] +
                   "\" (triggers must not contain one another)");
      }
    }
  }
  std::vector<bool> used(spec.triggers.size(), false);
  for (const StructuralTagSpec::Structure& s : spec.structures) {
    bool found = false;
    for (size_t t = 0; t < spec.triggers.size(); ++t) {
      if (s.begin.starts_with(spec.triggers[t])) used[t] = found = true;
    }
    if (!found) return Bad("begin \"" + s.begin + "\" does not start with any trigger");
  }
  for (size_t t = 0; t < spec.triggers.size(); ++t) {
    if (!used[t]) return Bad("trigger \"" + spec.triggers[t] + "\" starts no structure");
  }
  return Status::Ok();
}

std::string StructuresRegex(const StructuralTagSpec& spec, const std::string& trigger) {
  std::string alternatives;
  for (const StructuralTagSpec::Structure& s : spec.structures) {
    if (!s.begin.starts_with(trigger)) continue;
    std::string ends;
    for (const std::string& e : s.ends) {
      if (!ends.empty()) ends += "|";
      ends += json_patterns::EscapeRegex(e);
    }
    if (!alternatives.empty()) alternatives += "|";
    alternatives += json_patterns::EscapeRegex(std::string_view(s.begin).substr(trigger.size())) +
                    "(?:" + s.content_regex + ")(?:" + ends + ")";
  }
  return "(?:" + alternatives + ")";
}

StatusOr<Dfa> CompileRegexDfa(const std::string& pattern, const CompileOptions& options) {
  RADIXLM_ASSIGN_OR_RETURN(RegexNode ast, ParseRegex(pattern));
  RADIXLM_ASSIGN_OR_RETURN(Nfa nfa, BuildNfa(ast, options.max_nfa_states));
  return BuildDfa(nfa, options.max_dfa_states);
}

// Aho-Corasick over the triggers: trie nodes with a complete goto function. Node 0 is the
// root; `trigger[n]` is the trigger node n completes, or -1.
struct TriggerAutomaton {
  std::vector<std::array<int32_t, 256>> next;
  std::vector<int32_t> trigger;

  explicit TriggerAutomaton(const std::vector<std::string>& triggers) {
    AddNode();
    for (size_t t = 0; t < triggers.size(); ++t) {
      int32_t n = 0;
      for (char c : triggers[t]) {
        const auto b = static_cast<uint8_t>(c);
        if (next[n][b] < 0) next[n][b] = AddNode();
        n = next[n][b];
      }
      trigger[n] = static_cast<int32_t>(t);
    }
    // Breadth-first: a node's missing edges follow its failure node's (already complete) ones.
    std::vector<int32_t> fail(next.size(), 0);
    std::queue<int32_t> queue;
    for (int b = 0; b < 256; ++b) {
      int32_t& child = next[0][b];
      if (child < 0) {
        child = 0;
      } else {
        queue.push(child);
      }
    }
    while (!queue.empty()) {
      const int32_t n = queue.front();
      queue.pop();
      for (int b = 0; b < 256; ++b) {
        int32_t& child = next[n][b];
        if (child < 0) {
          child = next[fail[n]][b];
        } else {
          fail[child] = next[fail[n]][b];
          queue.push(child);
        }
      }
    }
  }

  int32_t AddNode() {
    std::array<int32_t, 256> row;
    row.fill(-1);
    next.push_back(row);
    trigger.push_back(-1);
    return static_cast<int32_t>(next.size()) - 1;
  }
};

}  // namespace

StatusOr<StructuralTagSpec> ParseStructuralTag(std::string_view text,
                                               const CompileOptions& options) {
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) return Bad("must be a JSON object");
  if (auto type = root.find("type"); type != root.end() && *type != "structural_tag") {
    return Bad("type must be \"structural_tag\"");
  }
  StatusOr<StructuralTagSpec> spec = [&]() -> StatusOr<StructuralTagSpec> {
    if (root.contains("structures")) return ParseLegacy(root, options);
    if (root.contains("format")) return ParseFormat(root, options);
    return Bad("needs \"structures\" and \"triggers\", or \"format\"");
  }();
  if (!spec.ok()) return spec;
  RADIXLM_RETURN_IF_ERROR(CheckRules(*spec, options));
  for (const StructuralTagSpec::Structure& s : spec->structures) {
    if (Status parsed = ParseRegex(s.content_regex).status(); !parsed.ok()) {
      return Bad("the content after \"" + s.begin + "\": " + parsed.message());
    }
  }
  return spec;
}

StatusOr<Dfa> BuildStructuralTagDfa(const StructuralTagSpec& spec, const CompileOptions& options) {
  RADIXLM_RETURN_IF_ERROR(CheckRules(spec, options));
  const TriggerAutomaton ac(spec.triggers);

  // Free states: the trie nodes that complete no trigger, numbered from 0 (the root).
  std::vector<int32_t> free_index(ac.next.size(), -1);
  int32_t num_free = 0;
  for (size_t n = 0; n < ac.next.size(); ++n) {
    if (ac.trigger[n] < 0) free_index[n] = num_free++;
  }

  std::vector<Dfa> bodies;
  std::vector<int32_t> offset;  // of each trigger's body DFA in the combined table
  int32_t total = num_free;
  for (const std::string& trigger : spec.triggers) {
    // Each body may take only the states left under the cap (so the bodies built before the
    // cap is known to be exceeded never hold more than the cap in all).
    if (static_cast<size_t>(total) >= options.max_dfa_states) break;
    CompileOptions body_options = options;
    body_options.max_dfa_states = options.max_dfa_states - static_cast<size_t>(total);
    StatusOr<Dfa> body = CompileRegexDfa(StructuresRegex(spec, trigger), body_options);
    if (!body.ok()) {
      return Status(body.status().code(), "structural_tag: the structures of trigger \"" + trigger +
                                              "\": " + body.status().message());
    }
    for (int32_t s = 0; s < body->num_states(); ++s) {
      if (!body->IsAccepting(s)) continue;
      for (int b = 0; b < 256; ++b) {
        if (body->Next(s, static_cast<uint8_t>(b)) != Dfa::kDead) {
          return Bad("a structure of trigger \"" + trigger +
                     "\" can go on after a complete match; its end must close it");
        }
      }
    }
    offset.push_back(total);
    total += body->num_states();
    bodies.push_back(std::move(body).value());
  }
  if (bodies.size() < spec.triggers.size()) {
    return ResourceExhausted("structural_tag: the automaton needs more than " +
                             std::to_string(options.max_dfa_states) + " states (the cap)");
  }
  if (static_cast<size_t>(total) > options.max_dfa_states) {
    return ResourceExhausted("structural_tag: the automaton needs " + std::to_string(total) +
                             " states, over the cap of " + std::to_string(options.max_dfa_states));
  }

  std::vector<int32_t> next(static_cast<size_t>(total) * 256, Dfa::kDead);
  std::vector<uint8_t> accepting(total, 0);
  for (size_t n = 0; n < ac.next.size(); ++n) {
    if (free_index[n] < 0) continue;
    const int32_t row = free_index[n];
    accepting[row] = 1;
    for (int b = 0; b < 256; ++b) {
      const int32_t to = ac.next[n][b];
      const int32_t t = ac.trigger[to];
      next[row * 256 + b] = t < 0 ? free_index[to] : offset[t] + bodies[t].start();
    }
  }
  for (size_t t = 0; t < bodies.size(); ++t) {
    const Dfa& body = bodies[t];
    for (int32_t s = 0; s < body.num_states(); ++s) {
      const int32_t row = offset[t] + s;
      if (body.IsAccepting(s)) {
        // The structure is over: free text again (from the root), or nothing with
        // stop_after_first.
        accepting[row] = 1;
        if (!spec.stop_after_first) {
          std::copy_n(next.begin(), 256, next.begin() + static_cast<ptrdiff_t>(row) * 256);
        }
        continue;
      }
      for (int b = 0; b < 256; ++b) {
        const int32_t to = body.Next(s, static_cast<uint8_t>(b));
        next[row * 256 + b] = to == Dfa::kDead ? Dfa::kDead : offset[t] + to;
      }
    }
  }
  return MinimizeDfa(TrimDfa(Dfa::FromTable(0, std::move(next), std::move(accepting))));
}

}  // namespace radixlm::grammar
