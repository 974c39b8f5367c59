// Tokenizer routes, as SGLang's (and vLLM's) OpenAI-style ones:
//
//   POST /tokenize, /v1/tokenize      {"prompt": "text" | ["a", "b"], "add_special_tokens": true}
//                                     or {"messages": [...], "tools": [...], "tool_choice": ...}
//                                     (rendered exactly as /v1/chat/completions renders them:
//                                     tool results and calls rewritten for the template, the
//                                     offered tools described; server/chat_prompt.h)
//        → {"tokens": [ids] | [[ids], ...], "count": n | [n, ...], "max_model_len": ctx}
//   POST /detokenize, /v1/detokenize  {"tokens": [ids] | [[ids], ...], "skip_special_tokens": true}
//        → {"text": "..." | ["...", ...]}
//
// The ids are exactly what /generate would compute for the same text (same tokenizer call), so
// a client can count a prompt's tokens without running it (the frontend's remote select does).
// Bad input (both or neither of prompt / messages, non-string prompts, messages or tools the
// chat route would refuse, tools with a prompt, ids outside the vocabulary) is a 400 naming
// the field.
#pragma once

#include "server/router.h"
#include "server/server_context.h"

namespace radixlm::server {

void AddTokenizeRoutes(const ServerContext& context, Router* router);

}  // namespace radixlm::server
