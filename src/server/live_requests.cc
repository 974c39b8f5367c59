#include "server/live_requests.h"

namespace radixlm::server {

void LiveRequests::Add(const std::string& rid) {
  MutexLock lock(&mu_);
  ++counts_[rid];
}

void LiveRequests::Remove(const std::string& rid) {
  MutexLock lock(&mu_);
  auto it = counts_.find(rid);
  if (it != counts_.end() && --it->second <= 0) counts_.erase(it);
}

std::vector<std::string> LiveRequests::Snapshot() const {
  MutexLock lock(&mu_);
  std::vector<std::string> rids;
  rids.reserve(counts_.size());
  for (const auto& [rid, count] : counts_) rids.push_back(rid);
  return rids;
}

}  // namespace radixlm::server
