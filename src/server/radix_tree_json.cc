#include "server/radix_tree_json.h"

#include <charconv>
#include <string_view>
#include <vector>

#include "scheduler/prompt_image.h"

namespace radixlm::server {
namespace {

std::string DecodeSnippet(const std::vector<int32_t>& ids, const TokenTextCodec& codec) {
  if (ids.empty()) return "";
  std::unique_ptr<TokenTextDecoder> decoder = codec.NewDecoder(/*skip_special_tokens=*/false);
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!IsImageId(ids[i])) {
      text += decoder->Append(ids[i]);
    } else if (i == 0 || !IsImageId(ids[i - 1])) {  // an image's span (its ids are no tokens)
      text += decoder->Flush() + "<image>";
    }
  }
  text += decoder->Flush();
  return text;
}

}  // namespace

bool ParseMaxNodes(const std::string& query, int32_t* max_nodes, ApiError* error) {
  *max_nodes = kDefaultTreeNodes;
  std::string_view rest(query);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view param = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    constexpr std::string_view kName = "max_nodes=";
    if (param.substr(0, kName.size()) != kName) continue;
    const std::string_view value = param.substr(kName.size());
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size() || n < 1 || n > kMaxTreeNodes) {
      *error = BadRequest("max_nodes must be an integer in [1, " + std::to_string(kMaxTreeNodes) +
                          "], got '" + std::string(value) + "'");
      return false;
    }
    *max_nodes = static_cast<int32_t>(n);
  }
  return true;
}

nlohmann::json RadixTreeCountersJson(const RadixTreeSnapshot& snap) {
  const int64_t admitted = snap.cache_hit_tokens + snap.prefill_tokens;
  return {
      {"version", snap.version},
      {"clock", snap.clock},
      {"disabled", snap.disabled},
      {"page_size", snap.page_size},
      {"num_nodes", snap.num_nodes},
      {"total_tokens", snap.total_tokens},
      {"evictable_tokens", snap.evictable_tokens},
      {"protected_tokens", snap.protected_tokens},
      {"pool",
       {{"size", snap.pool_size},
        {"free", snap.pool_free},
        {"used", snap.pool_size - snap.pool_free}}},
      {"cache_hit_tokens", snap.cache_hit_tokens},
      {"prefill_tokens", snap.prefill_tokens},
      {"cache_hit_rate",
       admitted > 0 ? static_cast<double>(snap.cache_hit_tokens) / static_cast<double>(admitted)
                    : 0.0},
      {"evictions_total", snap.evictions_total},
      {"evicted_tokens_total", snap.evicted_tokens_total},
  };
}

nlohmann::json RadixTreeJson(const RadixTreeSnapshot& snap, const TokenTextCodec& codec) {
  nlohmann::json out = RadixTreeCountersJson(snap);
  out["truncated"] = snap.truncated;
  out["build_ms"] = 1e3 * snap.build_seconds;  // scheduler-thread time of this snapshot
  nlohmann::json nodes = nlohmann::json::array();
  for (const RadixTreeEntry& e : snap.entries) {
    const bool others = e.kind == RadixTreeEntry::Kind::kOthers;
    nlohmann::json node = {
        {"kind", others ? "others" : "node"},
        {"id", others ? nlohmann::json(nullptr) : nlohmann::json(e.id)},
        {"parent", e.parent},
        {"tokens", e.tokens},
        {"prefix_tokens", e.prefix_tokens},
        {"lock_ref", e.lock_ref},
        {"hit_count", e.hit_count},
        {"last_access", e.last_access},
        {"priority", e.priority},
        {"children", e.children},
        {"collapsed", e.collapsed},
        {"subtree",
         {{"nodes", e.subtree_nodes},
          {"tokens", e.subtree_tokens},
          {"hits", e.subtree_hits},
          {"max_lock", e.subtree_max_lock}}},
        {"text", DecodeSnippet(e.snippet_ids, codec)},
        {"lora_namespace", e.lora_namespace},
        // The namespace's adapter by name; null for the base model.
        {"lora_adapter",
         e.lora_namespace == 0 ? nlohmann::json(nullptr) : nlohmann::json(e.lora_adapter)},
    };
    if (others) node["merged_subtrees"] = e.merged_subtrees;
    nodes.push_back(std::move(node));
  }
  out["nodes"] = std::move(nodes);
  nlohmann::json evictions = nlohmann::json::array();
  for (const RadixTreeEvictionEntry& ev : snap.evictions) {
    evictions.push_back({{"seq", ev.seq},
                         {"node_id", ev.node_id},
                         {"parent_id", ev.parent_id},
                         {"tokens", ev.tokens},
                         {"hit_count", ev.hit_count},
                         {"text", DecodeSnippet(ev.snippet_ids, codec)}});
  }
  out["evictions"] = std::move(evictions);
  return out;
}

}  // namespace radixlm::server
