#include "server/bootstrap_fields.h"

#include <limits>
#include <string>

namespace radixlm::server {

using nlohmann::json;

Status ApplyBootstrapFields(const json& body, const ServerConfig& config,
                            std::vector<GenerateRequest>* requests) {
  const std::string& mode = config.disaggregation_mode;
  if (mode != "prefill" && mode != "decode") return Status::Ok();
  const auto room_it = body.find("bootstrap_room");
  if (room_it == body.end() || room_it->is_null()) {
    return InvalidArgument("this is a " + mode + " server (--disaggregation-mode " + mode +
                           "): it serves requests the gateway sends in PD mode, which carry "
                           "bootstrap_room; this one has none");
  }
  if (room_it->is_array()) {
    return Unimplemented(
        "bootstrap_room: batched prefill/decode requests (one room per prompt) "
        "are not built in radixlm; send one prompt per request");
  }
  if (!room_it->is_number_unsigned() && !room_it->is_number_integer()) {
    return InvalidArgument("bootstrap_room must be a non-negative integer");
  }
  if (room_it->is_number_integer() && room_it->get<int64_t>() < 0) {
    return InvalidArgument("bootstrap_room must be a non-negative integer");
  }
  const uint64_t room = room_it->get<uint64_t>();
  if (requests->size() != 1) {
    return Unimplemented("prefill/decode disaggregation serves one prompt per request in radixlm");
  }
  GenerateRequest& request = requests->front();
  if (request.sampling_params.n != 1) {
    return Unimplemented("n > 1 with prefill/decode disaggregation is not built in radixlm");
  }
  if (mode == "prefill") {
    // The prefill server computes the prompt and the first token; the decode server does the
    // rest (its response is the client's).
    request.sampling_params.max_new_tokens = 1;
    request.export_kv_room = room;
    return Status::Ok();
  }
  const auto host_it = body.find("bootstrap_host");
  if (host_it == body.end() || !host_it->is_string() || host_it->get<std::string>().empty()) {
    return InvalidArgument("bootstrap_host must name the prefill server's host");
  }
  const auto port_it = body.find("bootstrap_port");
  if (port_it == body.end() || port_it->is_null()) {
    return InvalidArgument(
        "bootstrap_port is null: give the prefill server's bootstrap port to the gateway "
        "(smg launch --pd-disaggregation --prefill URL BOOTSTRAP_PORT)");
  }
  if (!port_it->is_number_integer() || port_it->get<int64_t>() < 1 ||
      port_it->get<int64_t>() > 65535) {
    return InvalidArgument("bootstrap_port must be an integer in [1, 65535]");
  }
  if (!config.fetch_prefix_kv) {
    return Unimplemented("this decode server has no KV transfer configured");
  }
  request.import_kv = config.fetch_prefix_kv(host_it->get<std::string>(),
                                             static_cast<int>(port_it->get<int64_t>()), room);
  return Status::Ok();
}

}  // namespace radixlm::server
