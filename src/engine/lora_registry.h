// LoraRegistry: the LoRA adapters a server serves by name (SGLang's --lora-paths,
// /load_lora_adapter, /unload_lora_adapter), loaded against the base model.
//
// Each adapter gets a radix-tree namespace of its own (RadixCache "Namespaces"), never reused
// while the server runs, so KV computed under an unloaded adapter can never serve one loaded
// later under the same name. Resolve hands out a shared reference: a request keeps its adapter
// alive until it finishes, so unloading an adapter in use takes effect for new requests at
// once and frees its memory when its last request ends. A loaded adapter is not resident
// (model/lora_adapter.h) until a forward pass needs it: the runner's LoraPool keeps
// --max-loras-per-batch of them resident, least recently used out first.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/lora_adapter.h"
#include "util/mutex.h"
#include "util/status.h"

namespace radixlm {

struct LoraHandle {
  std::shared_ptr<const model::LoraAdapter> adapter;
  int32_t key_namespace = 0;
};

struct LoraAdapterInfo {
  std::string name;
  std::string path;
  int64_t max_rank = 0;
};

class LoraRegistry {
 public:
  // base must outlive the registry.
  LoraRegistry(const model::ModelConfig& config, const model::ModelWeights& weights,
               model::LoraLoadOptions options);

  // Loads the adapter at path under name. InvalidArgument: the name is taken, or the file is
  // not an adapter that fits the base (the message says why).
  Status Load(const std::string& name, const std::string& path);
  // NotFound when no adapter has that name.
  Status Unload(const std::string& name);
  // The adapter named name (InvalidArgument naming it and the loaded ones when there is none).
  StatusOr<LoraHandle> Resolve(const std::string& name) const;
  std::vector<LoraAdapterInfo> List() const;
  // The name of every namespace handed out (an adapter unloaded since: "NAME (unloaded)"), for
  // the tree view; the base model's 0 is not among them.
  std::map<int32_t, std::string> NamespaceNames() const;

 private:
  struct Entry {
    std::string path;
    LoraHandle handle;
  };
  const model::ModelConfig& config_;
  const model::ModelWeights& weights_;
  const model::LoraLoadOptions options_;
  mutable Mutex mu_;
  std::map<std::string, Entry> entries_ GUARDED_BY(mu_);
  std::map<int32_t, std::string> namespace_names_ GUARDED_BY(mu_);  // at most kMaxKeyNamespace
  int32_t next_namespace_ GUARDED_BY(mu_) = 1;
};

// SGLang's --lora-paths items: "name=path", a path alone (its name is the path), or
// {"lora_name": ..., "lora_path": ...} (other keys, such as "pinned", ignored).
StatusOr<std::pair<std::string, std::string>> ParseLoraPathItem(const std::string& item);

}  // namespace radixlm
