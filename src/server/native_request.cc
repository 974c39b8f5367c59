#include "server/native_request.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "server/json_fields.h"
#include "server/lora_api.h"

namespace radixlm::server {
namespace {

using json = nlohmann::json;

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// Fields that name features radixlm does not have; a non-null, non-empty value is refused.
struct UnsupportedField {
  const char* name;
  const char* what;
};
constexpr UnsupportedField kUnsupported[] = {
    {"input_embeds", "input embeddings"},
    {"audio_data", "audio inputs (this server runs text-only models)"},
    {"video_data", "video inputs (this server runs text-only models)"},
    {"custom_logit_processor", "custom logit processors"},
};

Status RejectUnsupported(const json& body) {
  for (const UnsupportedField& field : kUnsupported) {
    if (IsFieldSet(body, field.name)) {
      return Unimplemented(std::string(field.name) + ": " + field.what +
                           " are not supported by radixlm");
    }
  }
  return RejectHiddenStates(body);
}

// The per-prompt value of a field that is a scalar or (in a batch) a list of scalars.
// Returns the element to read for prompt `i` (null when absent).
StatusOr<json> PerPrompt(const json& body, const char* field, bool batch, size_t batch_size,
                         size_t i) {
  const json* value = FindField(body, field);
  if (value == nullptr) return json(nullptr);
  if (!value->is_array()) return *value;
  if (!batch) {
    return InvalidArgument(std::string(field) + " is a list, but the input is a single prompt");
  }
  if (value->size() != batch_size) {
    return InvalidArgument(std::string(field) + " has " + std::to_string(value->size()) +
                           " entries, but the batch has " + std::to_string(batch_size) +
                           " prompts");
  }
  return (*value)[i];
}

Status ReadIdList(const json& list, const std::string& field, std::vector<int32_t>* out) {
  if (!list.is_array()) return WrongType(field, "a list of token ids", list);
  out->reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    int64_t id = 0;
    RADIXLM_RETURN_IF_ERROR(ParseInt(list[i], field + "[" + std::to_string(i) + "]",
                                     std::numeric_limits<int32_t>::min(), kInt32Max, &id));
    out->push_back(static_cast<int32_t>(id));
  }
  return Status::Ok();
}

// Fills requests[i].text / input_ids; sets *batch.
Status ReadInputs(const json& body, std::vector<GenerateRequest>* requests, bool* batch) {
  const json* text = FindField(body, "text");
  const json* ids = FindField(body, "input_ids");
  if (text != nullptr && ids != nullptr) {
    return InvalidArgument("Only one of text and input_ids may be provided.");
  }
  if (text == nullptr && ids == nullptr) {
    return InvalidArgument("Either text or input_ids should be provided.");
  }
  if (text != nullptr) {
    if (text->is_string()) {
      requests->emplace_back().text = text->get<std::string>();
      *batch = false;
      return Status::Ok();
    }
    if (!text->is_array()) return WrongType("text", "a string or a list of strings", *text);
    if (text->empty()) return InvalidArgument("text is an empty list (a batch needs a prompt)");
    *batch = true;
    for (size_t i = 0; i < text->size(); ++i) {
      if (!(*text)[i].is_string()) {
        return WrongType("text[" + std::to_string(i) + "]", "a string", (*text)[i]);
      }
      requests->emplace_back().text = (*text)[i].get<std::string>();
    }
    return Status::Ok();
  }
  if (!ids->is_array()) return WrongType("input_ids", "a list of token ids", *ids);
  if (ids->empty()) return InvalidArgument("input_ids is empty");
  *batch = (*ids)[0].is_array();
  if (!*batch) {
    std::vector<int32_t> list;
    RADIXLM_RETURN_IF_ERROR(ReadIdList(*ids, "input_ids", &list));
    requests->emplace_back().input_ids = std::move(list);
    return Status::Ok();
  }
  for (size_t i = 0; i < ids->size(); ++i) {
    std::vector<int32_t> list;
    RADIXLM_RETURN_IF_ERROR(ReadIdList((*ids)[i], "input_ids[" + std::to_string(i) + "]", &list));
    requests->emplace_back().input_ids = std::move(list);
  }
  return Status::Ok();
}

// token_ids_logprob: a list of ids (every prompt of a batch asks for the same ids), or in a
// batch a list with one entry per prompt, each a list of ids or null (ragged across prompts).
Status ReadTokenIdsLogprob(const json& body, bool batch, size_t batch_size, size_t i,
                           std::vector<int32_t>* out) {
  const json* value = FindField(body, "token_ids_logprob");
  if (value == nullptr) return Status::Ok();
  if (!value->is_array()) return WrongType("token_ids_logprob", "a list of token ids", *value);
  const bool per_prompt = !value->empty() && ((*value)[0].is_array() || (*value)[0].is_null());
  if (!per_prompt) return ReadIdList(*value, "token_ids_logprob", out);
  if (!batch) {
    return InvalidArgument(
        "token_ids_logprob is a list of lists, but the input is a single prompt (give one list "
        "of token ids)");
  }
  if (value->size() != batch_size) {
    return InvalidArgument("token_ids_logprob has " + std::to_string(value->size()) +
                           " entries, but the batch has " + std::to_string(batch_size) +
                           " prompts");
  }
  const json& entry = (*value)[i];
  if (entry.is_null()) return Status::Ok();
  return ReadIdList(entry, "token_ids_logprob[" + std::to_string(i) + "]", out);
}

// SGLang's SamplingParams takes no keys it does not know, so a misspelt one ("temprature") is
// an error there; here too, rather than a setting silently left at its default. The known keys
// are the ones SamplingParams writes, and SGLang's custom_params (it goes with
// custom_logit_processor, refused above) and stream_interval (streaming cadence; radixlm sends
// every step's output).
Status CheckSamplingKeys(const json& params) {
  static const json known = SamplingParams().ToJson();
  for (auto it = params.begin(); it != params.end(); ++it) {
    const std::string& key = it.key();
    if (known.contains(key) || key == "custom_params" || key == "stream_interval") continue;
    return InvalidArgument("sampling_params." + key + " is not a sampling parameter");
  }
  return Status::Ok();
}

Status ReadPromptOptions(const json& body, bool batch, size_t i, size_t size,
                         const ServerConfig& limits, GenerateRequest* request) {
  RADIXLM_ASSIGN_OR_RETURN(json params, PerPrompt(body, "sampling_params", batch, size, i));
  if (!params.is_null() && !params.is_object()) {
    return WrongType("sampling_params", "an object (or a list of objects for a batch)", params);
  }
  if (params.is_object()) RADIXLM_RETURN_IF_ERROR(CheckSamplingKeys(params));
  RADIXLM_ASSIGN_OR_RETURN(request->sampling_params, SamplingParams::FromJson(params));
  RADIXLM_RETURN_IF_ERROR(ApplyServerLimits(FindField(params, "max_new_tokens") != nullptr, limits,
                                            &request->sampling_params));

  RADIXLM_ASSIGN_OR_RETURN(json rid, PerPrompt(body, "rid", batch, size, i));
  if (!rid.is_null()) {
    if (!rid.is_string()) return WrongType("rid", "a string (or a list of strings)", rid);
    if (batch && !body.at("rid").is_array()) {
      return InvalidArgument("rid must be a list with one id per prompt for a batch");
    }
    request->rid = rid.get<std::string>();
  }
  json holder = json::object();
  RADIXLM_ASSIGN_OR_RETURN(holder["return_logprob"],
                           PerPrompt(body, "return_logprob", batch, size, i));
  RADIXLM_ASSIGN_OR_RETURN(holder["logprob_start_len"],
                           PerPrompt(body, "logprob_start_len", batch, size, i));
  RADIXLM_ASSIGN_OR_RETURN(holder["top_logprobs_num"],
                           PerPrompt(body, "top_logprobs_num", batch, size, i));
  RADIXLM_RETURN_IF_ERROR(ReadBool(holder, "return_logprob", &request->return_logprob));
  RADIXLM_RETURN_IF_ERROR(
      ReadInt32(holder, "logprob_start_len", -1, kInt32Max, &request->logprob_start_len));
  RADIXLM_RETURN_IF_ERROR(
      ReadInt32(holder, "top_logprobs_num", 0, kInt32Max, &request->top_logprobs_num));
  RADIXLM_RETURN_IF_ERROR(ReadTokenIdsLogprob(body, batch, size, i, &request->token_ids_logprob));
  RADIXLM_RETURN_IF_ERROR(ReadInt32(body, "priority", std::numeric_limits<int32_t>::min(),
                                    kInt32Max, &request->priority));
  if (IsFieldSet(body, "lora_path")) {  // (null, "", [] ...: the base model)
    RADIXLM_ASSIGN_OR_RETURN(json lora_path, PerPrompt(body, "lora_path", batch, size, i));
    RADIXLM_ASSIGN_OR_RETURN(request->lora_path, ReadLoraPath(lora_path));
  }
  return Status::Ok();
}

}  // namespace

Status RejectHiddenStates(const json& body) {
  if (auto it = body.find("return_hidden_states");
      it != body.end() && it->is_boolean() && it->get<bool>()) {
    return Unimplemented("return_hidden_states: hidden states are not supported by radixlm");
  }
  return Status::Ok();
}

bool NativeGenerateCall::ReturnsList() const {
  if (batch) return true;
  for (const GenerateRequest& r : requests) {
    if (r.sampling_params.n > 1) return true;
  }
  return false;
}

Status ApplyServerLimits(bool max_new_tokens_given, const ServerConfig& limits,
                         SamplingParams* params) {
  if (limits.max_new_tokens_cap > 0) {
    if (max_new_tokens_given && params->max_new_tokens.has_value() &&
        *params->max_new_tokens > limits.max_new_tokens_cap) {
      return InvalidArgument("max_new_tokens must be at most " +
                             std::to_string(limits.max_new_tokens_cap) + " on this server, got " +
                             std::to_string(*params->max_new_tokens));
    }
    if (!params->max_new_tokens.has_value() ||
        *params->max_new_tokens > limits.max_new_tokens_cap) {
      params->max_new_tokens = limits.max_new_tokens_cap;  // a default, or "no limit"
    }
  }
  if (params->n < 1 || params->n > limits.max_batch_samples) {
    return InvalidArgument("n must be in [1, " + std::to_string(limits.max_batch_samples) +
                           "], got " + std::to_string(params->n));
  }
  return Status::Ok();
}

StatusOr<std::optional<SessionParams>> ReadSessionParams(const json& body, bool batch) {
  const json* value = FindField(body, "session_params");
  if (value == nullptr || IsUnsetValue(*value)) return std::optional<SessionParams>();
  if (!value->is_object()) return WrongType("session_params", "an object", *value);
  if (batch) return InvalidArgument("session_params takes a single prompt, not a batch");
  SessionParams params;
  const json* id = FindField(*value, "id");
  if (id == nullptr) return InvalidArgument("session_params.id is required");
  if (!id->is_string()) return WrongType("session_params.id", "a string", *id);
  params.id = id->get<std::string>();
  if (const json* rid = FindField(*value, "rid"); rid != nullptr) {
    if (!rid->is_string()) return WrongType("session_params.rid", "a string", *rid);
    if (!rid->get<std::string>().empty()) params.rid = rid->get<std::string>();
  }
  if (FindField(*value, "offset") != nullptr) {
    int64_t offset = 0;
    RADIXLM_RETURN_IF_ERROR(ParseInt(value->at("offset"), "session_params.offset",
                                     std::numeric_limits<int64_t>::min() / 2,
                                     std::numeric_limits<int64_t>::max() / 2, &offset));
    params.offset = offset;
  }
  json flags = json::object();
  for (const char* name : {"replace", "drop_previous_output"}) {
    if (auto it = value->find(name); it != value->end()) flags[name] = *it;
  }
  Status status = ReadBool(flags, "replace", &params.replace);
  if (status.ok()) status = ReadBool(flags, "drop_previous_output", &params.drop_previous_output);
  if (!status.ok()) return InvalidArgument("session_params." + status.message());
  return std::optional<SessionParams>(std::move(params));
}

// SGLang's image_data: for a single prompt, one image reference or a list of them; for a
// batch, one such entry (or null) per prompt.
Status ReadImageData(const json& body, NativeGenerateCall* call) {
  call->image_refs.assign(call->requests.size(), {});
  const json* data = FindField(body, "image_data");
  if (data == nullptr) return Status::Ok();
  auto read_one = [](const json& v, const std::string& name, std::vector<std::string>* out) {
    if (v.is_null()) return Status::Ok();
    if (v.is_string()) {
      out->push_back(v.get<std::string>());
      return Status::Ok();
    }
    if (!v.is_array()) return WrongType(name, "an image (a string) or a list of images", v);
    for (size_t j = 0; j < v.size(); ++j) {
      if (!v[j].is_string()) {
        return WrongType(name + "[" + std::to_string(j) + "]", "an image (a string)", v[j]);
      }
      out->push_back(v[j].get<std::string>());
    }
    return Status::Ok();
  };
  if (!call->batch) return read_one(*data, "image_data", &call->image_refs[0]);
  if (!data->is_array() || data->size() != call->requests.size()) {
    return InvalidArgument("image_data must have one entry per prompt of the batch (" +
                           std::to_string(call->requests.size()) + ")");
  }
  for (size_t i = 0; i < data->size(); ++i) {
    RADIXLM_RETURN_IF_ERROR(
        read_one((*data)[i], "image_data[" + std::to_string(i) + "]", &call->image_refs[i]));
  }
  return Status::Ok();
}

StatusOr<NativeGenerateCall> ParseNativeGenerate(const json& body, const ServerConfig& limits) {
  if (!body.is_object()) return WrongType("the request body", "a JSON object", body);
  RADIXLM_RETURN_IF_ERROR(RejectUnsupported(body));
  NativeGenerateCall call;
  RADIXLM_RETURN_IF_ERROR(ReadInputs(body, &call.requests, &call.batch));
  RADIXLM_RETURN_IF_ERROR(ReadImageData(body, &call));
  RADIXLM_RETURN_IF_ERROR(ReadBool(body, "stream", &call.stream));
  RADIXLM_RETURN_IF_ERROR(ReadBool(body, "return_text_in_logprobs", &call.return_text_in_logprobs));
  RADIXLM_ASSIGN_OR_RETURN(std::optional<SessionParams> session,
                           ReadSessionParams(body, call.batch));
  const size_t size = call.requests.size();
  int64_t samples = 0;
  for (size_t i = 0; i < size; ++i) {
    GenerateRequest& request = call.requests[i];
    RADIXLM_RETURN_IF_ERROR(ReadPromptOptions(body, call.batch, i, size, limits, &request));
    request.stream = call.stream;
    request.session_params = session;
    samples += request.sampling_params.n;
  }
  if (samples > limits.max_batch_samples) {
    return InvalidArgument("the request asks for " + std::to_string(samples) +
                           " samples (prompts x n); this server allows at most " +
                           std::to_string(limits.max_batch_samples));
  }
  return call;
}

}  // namespace radixlm::server
