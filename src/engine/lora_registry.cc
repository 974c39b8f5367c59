#include "engine/lora_registry.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "cache/radix_cache.h"

namespace radixlm {

LoraRegistry::LoraRegistry(const model::ModelConfig& config, const model::ModelWeights& weights,
                           model::LoraLoadOptions options)
    : config_(config), weights_(weights), options_(options) {}

Status LoraRegistry::Load(const std::string& name, const std::string& path) {
  if (name.empty()) return InvalidArgument("lora_name must not be empty");
  {
    MutexLock lock(&mu_);
    if (entries_.count(name) != 0) {
      return InvalidArgument("a LoRA adapter named '" + name + "' is already loaded");
    }
  }
  // Read outside the lock: a large file must not hold up requests resolving other adapters.
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<model::LoraAdapter> adapter,
                           model::LoraAdapter::Load(path, config_, weights_, options_));
  MutexLock lock(&mu_);
  if (entries_.count(name) != 0) {
    return InvalidArgument("a LoRA adapter named '" + name + "' is already loaded");
  }
  if (next_namespace_ > RadixCache::kMaxKeyNamespace) {
    return InvalidArgument("this server has loaded " + std::to_string(next_namespace_ - 1) +
                           " LoRA adapters, the most one run can (restart it to load more)");
  }
  // Resident only once a forward pass needs it (the runner's LoraPool); until then it holds
  // its mapped file and no working memory. No request can reach it yet, so this is safe here.
  adapter->Release();
  namespace_names_[next_namespace_] = name;
  Entry e{path, {std::shared_ptr<const model::LoraAdapter>(std::move(adapter)), next_namespace_++}};
  entries_.emplace(name, std::move(e));
  return Status::Ok();
}

Status LoraRegistry::Unload(const std::string& name) {
  MutexLock lock(&mu_);
  auto it = entries_.find(name);
  if (it == entries_.end()) return NotFound("no LoRA adapter named '" + name + "' is loaded");
  namespace_names_[it->second.handle.key_namespace] = name + " (unloaded)";
  entries_.erase(it);
  return Status::Ok();
}

StatusOr<LoraHandle> LoraRegistry::Resolve(const std::string& name) const {
  MutexLock lock(&mu_);
  auto it = entries_.find(name);
  if (it != entries_.end()) return it->second.handle;
  std::string loaded;
  for (const auto& [n, e] : entries_) loaded += (loaded.empty() ? "" : ", ") + n;
  return InvalidArgument("unknown LoRA adapter '" + name +
                         "' (loaded: " + (loaded.empty() ? "none" : loaded) + ")");
}

std::vector<LoraAdapterInfo> LoraRegistry::List() const {
  MutexLock lock(&mu_);
  std::vector<LoraAdapterInfo> out;
  for (const auto& [n, e] : entries_) out.push_back({n, e.path, e.handle.adapter->max_rank()});
  return out;
}

std::map<int32_t, std::string> LoraRegistry::NamespaceNames() const {
  MutexLock lock(&mu_);
  return namespace_names_;
}

StatusOr<std::pair<std::string, std::string>> ParseLoraPathItem(const std::string& item) {
  if (item.empty()) return InvalidArgument("--lora-paths: an empty item");
  if (item.front() == '{') {  // SGLang's JSON form
    const nlohmann::json j = nlohmann::json::parse(item, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("lora_name") || !j.contains("lora_path") ||
        !j["lora_name"].is_string() || !j["lora_path"].is_string()) {
      return InvalidArgument("--lora-paths: '" + item +
                             "' is not {\"lora_name\": ..., "
                             "\"lora_path\": ...}");
    }
    return std::make_pair(j["lora_name"].get<std::string>(), j["lora_path"].get<std::string>());
  }
  const size_t eq = item.find('=');
  if (eq == std::string::npos) return std::make_pair(item, item);
  if (eq == 0 || eq + 1 == item.size()) {
    return InvalidArgument("--lora-paths: '" + item + "' is not name=path");
  }
  return std::make_pair(item.substr(0, eq), item.substr(eq + 1));
}

}  // namespace radixlm
