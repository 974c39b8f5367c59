// The built-in library: filters (filters.cc, filters_seq.cc), tests (jinja_tests.cc), methods
// of str/dict/list values (methods.cc) and global functions (globals.cc).
#pragma once

#include <string_view>

#include "chat/renderer.h"
#include "chat/value.h"

namespace radixlm::chat {

using FilterFn = Value (*)(Renderer& renderer, const Value& input, CallArgs& args);
using TestFn = bool (*)(Renderer& renderer, const Value& input, CallArgs& args);

// Null when no filter / test has that name.
FilterFn FindFilter(std::string_view name);
FilterFn FindSequenceFilter(std::string_view name);  // filters_seq.cc part of the table
TestFn FindTest(std::string_view name);

// `receiver.name` when `name` is an attribute of the receiver's Python type (str.strip,
// dict.items, ...): sets *out to a callable bound to the receiver and returns true. Attributes
// the immutable sandbox forbids (list.append, dict.pop, dunders) yield jinja2's "unsafe"
// undefined, which fails only when used. Returns false when the type has no such attribute.
bool FindMethod(const Value& receiver, std::string_view name, Value* out);

// range, namespace, dict, raise_exception, strftime_now (as transformers defines them).
void InstallGlobals(Frame* globals);

// Byte cap for strings and lists built by operators and filters ('a' * 10**9 must not allocate).
constexpr size_t kMaxBuiltBytes = 64u << 20;
void CheckBuiltSize(size_t bytes);

}  // namespace radixlm::chat
