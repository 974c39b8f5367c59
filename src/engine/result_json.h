// ResultToJson: SGLang's /generate response object of one sample:
//   {"text", "output_ids", "meta_info": {"id", "finish_reason", "prompt_tokens",
//    "completion_tokens", "cached_tokens", "jump_forward_tokens", "forward_passes_saved",
//    "forward_passes", "input_token_logprobs", "output_token_logprobs", "input_top_logprobs",
//    "output_top_logprobs", "input_token_ids_logprobs", "output_token_ids_logprobs"}}
// Logprob entries serialize as SGLang's [logprob, token_id, text-or-null] triples.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "engine/api.h"
#include "tokenizer/text_codec.h"

namespace radixlm {

// A streamed chunk is the same object built from the result accumulated so far, as SGLang
// streams cumulative text. With return_logprob the logprob lists are included, token texts
// filled in when codec is not null; with token_ids_logprob too, the per-position lists of the
// requested ids' [logprob, id, text] (null where the position has no logprob). The server adds
// "index" for n > 1.
nlohmann::json ResultToJson(const GenerateResult& result, bool return_logprob,
                            const TokenTextCodec* codec, bool token_ids_logprob = false);

}  // namespace radixlm
