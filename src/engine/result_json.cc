#include "engine/result_json.h"

#include <nlohmann/json.hpp>

namespace radixlm {
namespace {

nlohmann::json EntryToJson(const LogprobEntry& e, const TokenTextCodec* codec) {
  nlohmann::json text = codec != nullptr ? nlohmann::json(codec->TokenText(e.token)) : nullptr;
  nlohmann::json lp = e.logprob.has_value() ? nlohmann::json(*e.logprob) : nullptr;
  return nlohmann::json::array({lp, e.token, text});
}

nlohmann::json TopToJson(const LogprobEntry& e, const TokenTextCodec* codec) {
  if (e.top.empty()) return nullptr;
  nlohmann::json list = nlohmann::json::array();
  for (const TokenLogprob& t : e.top) {
    list.push_back(nlohmann::json::array(
        {t.logprob, t.token,
         codec != nullptr ? nlohmann::json(codec->TokenText(t.token)) : nullptr}));
  }
  return list;
}

// SGLang's [[logprob, id, text], ...] of the requested ids at one position; null where nothing
// scored the position (the first prompt token, tokens placed by jump-forward).
nlohmann::json TokenIdsToJson(const LogprobEntry& e, const TokenTextCodec* codec) {
  if (!e.logprob.has_value()) return nullptr;
  nlohmann::json list = nlohmann::json::array();
  for (const TokenLogprob& t : e.token_ids) {
    list.push_back(nlohmann::json::array(
        {t.logprob, t.token,
         codec != nullptr ? nlohmann::json(codec->TokenText(t.token)) : nullptr}));
  }
  return list;
}

void AddLogprobs(const std::vector<LogprobEntry>& entries, const char* name, const char* top_name,
                 const char* ids_name, const TokenTextCodec* codec, nlohmann::json* meta) {
  nlohmann::json values = nlohmann::json::array();
  nlohmann::json tops = nlohmann::json::array();
  nlohmann::json by_id = nlohmann::json::array();
  for (const LogprobEntry& e : entries) {
    values.push_back(EntryToJson(e, codec));
    tops.push_back(TopToJson(e, codec));
    if (ids_name != nullptr) by_id.push_back(TokenIdsToJson(e, codec));
  }
  (*meta)[name] = std::move(values);
  (*meta)[top_name] = std::move(tops);
  if (ids_name != nullptr) (*meta)[ids_name] = std::move(by_id);
}

}  // namespace

nlohmann::json ResultToJson(const GenerateResult& r, bool return_logprob,
                            const TokenTextCodec* codec, bool token_ids_logprob) {
  nlohmann::json meta;
  meta["id"] = r.meta.id;
  meta["finish_reason"] =
      r.finish_reason.has_value() ? r.finish_reason->ToJson() : nlohmann::json(nullptr);
  meta["prompt_tokens"] = r.meta.prompt_tokens;
  meta["completion_tokens"] = r.meta.completion_tokens;
  meta["cached_tokens"] = r.meta.cached_tokens;
  meta["jump_forward_tokens"] = r.meta.jump_forward_tokens;
  meta["forward_passes_saved"] = r.meta.forward_passes_saved;
  meta["forward_passes"] = r.meta.forward_passes;
  if (r.meta.spec_verify_ct > 0) {  // speculative decoding on (SGLang's names)
    meta["spec_verify_ct"] = r.meta.spec_verify_ct;
    meta["spec_accept_length"] =
        1.0 + static_cast<double>(r.meta.spec_accepted_tokens) / r.meta.spec_verify_ct;
    meta["spec_draft_tokens"] = r.meta.spec_drafted_tokens;
    meta["spec_accepted_tokens"] = r.meta.spec_accepted_tokens;
  }
  if (return_logprob) {
    AddLogprobs(r.input_token_logprobs, "input_token_logprobs", "input_top_logprobs",
                token_ids_logprob ? "input_token_ids_logprobs" : nullptr, codec, &meta);
    AddLogprobs(r.output_token_logprobs, "output_token_logprobs", "output_top_logprobs",
                token_ids_logprob ? "output_token_ids_logprobs" : nullptr, codec, &meta);
  }
  nlohmann::json j;
  j["text"] = r.text;
  j["output_ids"] = r.output_ids;
  j["meta_info"] = std::move(meta);
  return j;
}

}  // namespace radixlm
