// The regex of a forced Gemma 4 call's arguments (chat/gemma4_tool_syntax.h's dict syntax), from
// the function's JSON schema, for tool_choice "required" / named under --tool-call-parser gemma4.
//
// Flat: an object schema's properties become `key:value` pairs, the required ones first (in the
// order "required" lists them), then each optional one at most once (by name). A value follows
// its property's type: string (<|"|>text without '<'<|"|>, at most maxLength characters where
// the schema says, up to 1000), integer, number, boolean; any scalar or list of scalars where
// the type is another or absent. No schema, or one without properties: any such pairs with
// identifier keys. Nested objects are not constrained.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace radixlm::server {

std::string Gemma4ArgsRegex(const nlohmann::json& parameters);

}  // namespace radixlm::server
