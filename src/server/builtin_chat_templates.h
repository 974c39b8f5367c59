// Built-in chat templates for architectures whose GGUFs often ship without one.
#pragma once

#include <string>

namespace radixlm::server {

// The template for `arch` (general.architecture), or nullptr when radixlm has none.
const char* BuiltinChatTemplate(const std::string& arch);

}  // namespace radixlm::server
