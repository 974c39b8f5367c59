// Jinja chat templates: ChatTemplate::Parse on the input, then Render with a fixed chat
// context (what apply_chat_template passes) under tighter RenderLimits than the default, so
// one input stays fast. Syntax errors, template errors, raise_exception and exceeded limits
// are Status values; anything else is a bug.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "chat/chat_template.h"

namespace {

const nlohmann::ordered_json& Context() {
  static const nlohmann::ordered_json context = nlohmann::ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": "You are terse."},
      {"role": "user", "content": "Hi <b>there</b> \u00e9\ud83d\ude00"},
      {"role": "assistant", "content": "Hello!", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {"x": 1, "y": [true, null]}}}]},
      {"role": "tool", "content": "42"},
      {"role": "user", "content": [{"type": "text", "text": "part"}, {"type": "text", "text": "2"}]}
    ],
    "add_generation_prompt": true,
    "bos_token": "<s>",
    "eos_token": "</s>",
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    "documents": null,
    "enable_thinking": false
  })");
  return context;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  auto parsed = radixlm::chat::ChatTemplate::Parse(source);
  if (!parsed.ok()) return 0;
  radixlm::chat::RenderLimits limits;
  limits.max_output_bytes = 1u << 20;
  limits.max_steps = 200'000;
  (void)parsed->Render(Context(), limits);
  return 0;
}
