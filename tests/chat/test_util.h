// Helpers shared by the chat engine tests.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "chat/chat_template.h"

namespace radixlm::chat::testing {

// Parses and renders; returns the text, or "ERROR: <status>" so EXPECT_EQ shows both.
inline std::string Render(std::string_view source,
                          const nlohmann::ordered_json& context = nlohmann::ordered_json::object(),
                          const RenderLimits& limits = RenderLimits()) {
  auto parsed = ChatTemplate::Parse(source);
  if (!parsed.ok()) return "ERROR: " + parsed.status().ToString();
  auto out = parsed->Render(context, limits);
  if (!out.ok()) return "ERROR: " + out.status().ToString();
  return *out;
}

// The Status of parsing + rendering (OK when both succeed).
inline Status RenderStatus(std::string_view source,
                           const nlohmann::ordered_json& context = nlohmann::ordered_json::object(),
                           const RenderLimits& limits = RenderLimits()) {
  auto parsed = ChatTemplate::Parse(source);
  if (!parsed.ok()) return parsed.status();
  auto out = parsed->Render(context, limits);
  return out.ok() ? Status::Ok() : out.status();
}

}  // namespace radixlm::chat::testing
