// Chat templates built into radixlm, for model files that carry none.
//
// The default model (gemma-3-270m Q4_K_M GGUF) has no `tokenizer.chat_template` in its
// metadata, so a server serving it needs Gemma 3's template from somewhere: this is it,
// verbatim from google/gemma-3-*-it's tokenizer_config.json (tests/chat/templates/gemma3.jinja
// holds the same text and its provenance).
#pragma once

#include <string_view>

namespace radixlm::chat {

// The template to use for a GGUF `general.architecture` whose file has no chat template:
// Gemma 3's for "gemma3", FamilyChatTemplate's for the others it knows; empty for
// architectures without a known default.
std::string_view DefaultChatTemplateForArchitecture(std::string_view architecture);

// The instruction-tuned models' own templates (family_templates.cc): "gemma2" Gemma 2's,
// "granite" Granite 3.3's, "olmo2" OLMo 2 Instruct's, "smollm3" SmolLM3's, "phi3" Phi-4-mini's,
// "glm4" GLM-4-0414's, "mistral3" Mistral Small 3.1's; empty for any other architecture.
std::string_view FamilyChatTemplate(std::string_view architecture);

// ChatML (<|im_start|>role\ncontent<|im_end|>), the generic fallback llama.cpp and
// transformers have used when nothing better is known.
std::string_view ChatMlTemplate();

}  // namespace radixlm::chat
