#include "grammar/grammar_cache.h"

#include <chrono>
#include <functional>

namespace radixlm::grammar {

std::pair<std::shared_future<GrammarCache::Result>, std::function<void()>> GrammarCache::Lookup(
    GrammarKind kind, std::string_view text) {
  MutexLock lock(&mutex_);
  Key key(kind, std::string(text));
  ++lookups_;
  auto it = entries_.find(key);
  if (it != entries_.end()) return {it->second, nullptr};
  auto promise = std::make_shared<std::promise<Result>>();
  std::shared_future<Result> future = promise->get_future().share();
  entries_.emplace(key, future);
  ++num_compiles_;
  std::function<void()> task = [promise, kind, text = std::move(key.second), this] {
    const auto start = std::chrono::steady_clock::now();
    Result result = CompiledGrammar::Compile(kind, text, vocab_, options_);
    {
      MutexLock lock(&mutex_);
      compile_seconds_ +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    promise->set_value(std::move(result));
  };
  return {future, std::move(task)};
}

GrammarCache::Result GrammarCache::Get(GrammarKind kind, std::string_view text) {
  auto [future, task] = Lookup(kind, text);
  if (task) task();
  return future.get();
}

size_t GrammarCache::size() const {
  MutexLock lock(&mutex_);
  return entries_.size();
}

size_t GrammarCache::num_compiles() const {
  MutexLock lock(&mutex_);
  return num_compiles_;
}

GrammarCacheStats GrammarCache::stats() const {
  MutexLock lock(&mutex_);
  return {.lookups = lookups_,
          .compiles = static_cast<int64_t>(num_compiles_),
          .compile_seconds = compile_seconds_};
}

}  // namespace radixlm::grammar
