// SGLang's prefill/decode bootstrap fields on a generation request (docs/disaggregation.md):
// the gateway (smg --pd-disaggregation) injects bootstrap_host, bootstrap_port and
// bootstrap_room into the body it sends to both servers of a pair.
//
//   --disaggregation-mode null:    the fields are ignored (as SGLang's normal server does).
//   --disaggregation-mode prefill: each prompt runs once (n = 1) for its first token only, and
//                                  its KV is exported under its room (export_kv_room).
//   --disaggregation-mode decode:  each prompt's KV is fetched from bootstrap_host:bootstrap_port
//                                  for its room (import_kv) before it runs; its n samples share
//                                  the imported prompt, as samples share a cached one.
//
// Rooms: bootstrap_room is an integer (one prompt; for a batch, prompt p uses room + p, as
// SGLang's servers expand it) or a list with one room per prompt (a batch: /generate with a list
// of input_ids, /v1/completions with a list of prompts) or one per sample (smg sends n rooms for
// /v1/chat/completions with n > 1); prompt p uses entry p (later entries are not used).
// bootstrap_host and bootstrap_port are a value or a list indexed the same way.
//
// In prefill and decode mode a request without bootstrap_room is a 400 (it can only come from
// the gateway in PD mode); a malformed field, a list shorter than the prompts or a room given to
// two prompts is a 400, and no fetch starts.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "engine/api.h"
#include "server/server_config.h"
#include "util/status.h"

namespace radixlm::server {

Status ApplyBootstrapFields(const nlohmann::json& body, const ServerConfig& config,
                            std::vector<GenerateRequest>* requests);

}  // namespace radixlm::server
