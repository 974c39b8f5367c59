// SGLang's prefill/decode bootstrap fields on a generation request (docs/disaggregation.md):
// the gateway (smg --pd-disaggregation) injects bootstrap_host, bootstrap_port and
// bootstrap_room into the body it sends to both servers of a pair.
//
//   --disaggregation-mode null:    the fields are ignored (as SGLang's normal server does).
//   --disaggregation-mode prefill: the request runs for its first token only and its prompt's
//                                  KV is exported under bootstrap_room (export_kv_room).
//   --disaggregation-mode decode:  the prompt's KV is fetched from bootstrap_host:bootstrap_port
//                                  for bootstrap_room (import_kv) before the request runs.
//
// In prefill and decode mode a request without bootstrap_room is a 400 (it can only come from
// the gateway in PD mode); a malformed field is a 400; a batch (lists of rooms) or n > 1 is a
// 501 naming what is not built.
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
