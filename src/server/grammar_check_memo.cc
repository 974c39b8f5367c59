#include "server/grammar_check_memo.h"

namespace radixlm::server {

Status GrammarCheckMemo::Check(const std::string& key, const std::function<Status()>& build) {
  {
    MutexLock lock(&mu_);
    if (auto it = index_.find(key); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->second;
    }
    ++builds_;
  }
  Status status = build();
  if (key.size() > kMaxKeyBytes || capacity_ == 0) return status;
  MutexLock lock(&mu_);
  if (index_.find(key) != index_.end()) return status;  // another thread kept it meanwhile
  lru_.emplace_front(key, status);
  index_.emplace(lru_.front().first, lru_.begin());
  while (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return status;
}

size_t GrammarCheckMemo::size() const {
  MutexLock lock(&mu_);
  return lru_.size();
}

int64_t GrammarCheckMemo::builds() const {
  MutexLock lock(&mu_);
  return builds_;
}

}  // namespace radixlm::server
