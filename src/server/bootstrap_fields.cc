#include "server/bootstrap_fields.h"

#include <limits>
#include <set>
#include <string>

namespace radixlm::server {

using nlohmann::json;

namespace {

StatusOr<uint64_t> ReadRoom(const json& value, const std::string& name) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    return static_cast<uint64_t>(value.get<int64_t>());
  }
  return InvalidArgument(name + " must be a non-negative integer");
}

// The room each prompt's KV travels under (bootstrap_fields.h). A list holds one room per
// prompt (a batch) or one per sample (smg sends n rooms for a chat request with n > 1); prompt
// p uses its entry p either way, and entries past the prompts are not used (as SGLang's
// servers index the list). One room for several prompts: prompt p uses room + p, as SGLang's
// servers expand it.
StatusOr<std::vector<uint64_t>> PromptRooms(const json& field,
                                            const std::vector<GenerateRequest>& requests) {
  const size_t prompts = requests.size();
  std::vector<uint64_t> rooms;
  if (!field.is_array()) {
    RADIXLM_ASSIGN_OR_RETURN(const uint64_t room, ReadRoom(field, "bootstrap_room"));
    for (size_t p = 0; p < prompts; ++p) rooms.push_back(room + p);  // wraps as SGLang's ints do
    return rooms;
  }
  if (field.size() < prompts) {
    return InvalidArgument("bootstrap_room has " + std::to_string(field.size()) +
                           " entries, fewer than the request's " + std::to_string(prompts) +
                           " prompts: give one room per prompt");
  }
  std::set<uint64_t> seen;
  for (size_t p = 0; p < prompts; ++p) {
    RADIXLM_ASSIGN_OR_RETURN(const uint64_t room,
                             ReadRoom(field[p], "bootstrap_room[" + std::to_string(p) + "]"));
    if (!seen.insert(room).second) {
      return InvalidArgument("bootstrap_room " + std::to_string(room) +
                             " is given to two prompts of one request: each prompt's KV needs a "
                             "room of its own");
    }
    rooms.push_back(room);
  }
  return rooms;
}

// bootstrap_host or bootstrap_port for prompt p: the value, or entry p of a list (one entry
// per room).
StatusOr<const json*> PromptEntry(const json& body, const char* name, size_t p) {
  const auto it = body.find(name);
  if (it == body.end() || !it->is_array()) return it == body.end() ? nullptr : &*it;
  if (p >= it->size()) {
    return InvalidArgument(std::string(name) + " has " + std::to_string(it->size()) +
                           " entries, fewer than the request's prompts");
  }
  return &(*it)[p];
}

struct PrefillAddress {
  std::string host;
  int port = 0;
};

StatusOr<PrefillAddress> ReadPrefillAddress(const json& body, size_t p) {
  PrefillAddress address;
  RADIXLM_ASSIGN_OR_RETURN(const json* host, PromptEntry(body, "bootstrap_host", p));
  if (host == nullptr || !host->is_string() || host->get<std::string>().empty()) {
    return InvalidArgument("bootstrap_host must name the prefill server's host");
  }
  address.host = host->get<std::string>();
  RADIXLM_ASSIGN_OR_RETURN(const json* port, PromptEntry(body, "bootstrap_port", p));
  if (port == nullptr || port->is_null()) {
    return InvalidArgument(
        "bootstrap_port is null: give the prefill server's bootstrap port to the gateway "
        "(smg launch --pd-disaggregation --prefill URL BOOTSTRAP_PORT)");
  }
  if (!port->is_number_integer() || port->get<int64_t>() < 1 || port->get<int64_t>() > 65535) {
    return InvalidArgument("bootstrap_port must be an integer in [1, 65535]");
  }
  address.port = static_cast<int>(port->get<int64_t>());
  return address;
}

}  // namespace

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
  RADIXLM_ASSIGN_OR_RETURN(const std::vector<uint64_t> rooms, PromptRooms(*room_it, *requests));
  if (mode == "prefill") {
    // The prefill server computes each prompt once, with its first token; the decode server
    // runs the n samples from the imported prompt (its response is the client's).
    for (size_t p = 0; p < requests->size(); ++p) {
      GenerateRequest& request = (*requests)[p];
      request.sampling_params.n = 1;
      request.sampling_params.max_new_tokens = 1;
      request.export_kv_room = rooms[p];
    }
    return Status::Ok();
  }
  if (!config.fetch_prefix_kv) {
    return Unimplemented("this decode server has no KV transfer configured");
  }
  // Every field is checked before the first fetch starts.
  std::vector<PrefillAddress> addresses;
  for (size_t p = 0; p < requests->size(); ++p) {
    RADIXLM_ASSIGN_OR_RETURN(PrefillAddress address, ReadPrefillAddress(body, p));
    addresses.push_back(std::move(address));
  }
  for (size_t p = 0; p < requests->size(); ++p) {
    (*requests)[p].import_kv =
        config.fetch_prefix_kv(addresses[p].host, addresses[p].port, rooms[p]);
  }
  return Status::Ok();
}

}  // namespace radixlm::server
