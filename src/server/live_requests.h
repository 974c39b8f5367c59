// LiveRequests: the rids of the generation requests the server has in flight, so that
// POST /abort_request {"abort_all": true} can abort them all. Thread-safe.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "util/mutex.h"

namespace radixlm::server {

class LiveRequests {
 public:
  void Add(const std::string& rid);
  void Remove(const std::string& rid);
  std::vector<std::string> Snapshot() const;

 private:
  mutable Mutex mu_;
  std::unordered_map<std::string, int> counts_ GUARDED_BY(mu_);
};

}  // namespace radixlm::server
