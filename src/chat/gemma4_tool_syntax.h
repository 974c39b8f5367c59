// Gemma 4's tool-call argument syntax, to and from JSON. Gemma 4 writes a call as
//
//   <|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3,opts:{metric:true},tags:[1,2]}<tool_call|>
//
// a dict of bare keys (everything up to ':'), strings quoted with the <|"|> token (their text
// taken as it is, no escapes), JSON numbers, true / false / null, nested dicts and lists, with
// optional white space after '{', '[', ',' and ':' and before '}' and ']' (llama.cpp's
// common_chat_params_init_gemma4 grammar and gemma4_to_json). A key written in <|"|> quotes (as
// Gemma 4's template writes tool declarations) is read as the text between them.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace radixlm::chat {

inline constexpr std::string_view kGemma4Quote = "<|\"|>";

enum class Gemma4Scan {
  kComplete,    // a whole dict ends at `end`
  kIncomplete,  // the text ends inside a dict that more text could complete
  kInvalid,     // not Gemma 4's syntax
};

struct Gemma4ArgsResult {
  Gemma4Scan status = Gemma4Scan::kInvalid;
  size_t end = 0;  // kComplete: one past the closing '}'
  // The arguments as compact JSON ({"city":"Paris","days":3}). kIncomplete: the JSON of what
  // more text cannot change — always a prefix of the JSON the completed text gives, so that
  // streamed pieces concatenate to the final value.
  std::string json;
};

// Converts the dict starting at text[pos] ('{'). Nesting deeper than 64 is kInvalid.
Gemma4ArgsResult ConvertGemma4Args(std::string_view text, size_t pos);

// The other way, as Gemma 4's template writes a call's arguments (keys bare and sorted, strings
// in <|"|> quotes): {city:<|"|>Paris<|"|>,days:3}. A non-object is written as a value.
std::string FormatGemma4Args(const nlohmann::json& args);

}  // namespace radixlm::chat
