// GrammarCache: compile-once cache of CompiledGrammar keyed by (kind, text), for one
// vocabulary.
//
// Thread-safe. The first caller for a key compiles (outside the cache lock); concurrent
// callers for the same key wait for that compilation instead of repeating it, and later
// callers get the stored result at once. Errors are cached too: the same text fails the same
// way. GetFuture() lets the engine hand the compilation to a worker pool and poll for it.
#pragma once

#include <cstddef>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "grammar/compiled_grammar.h"
#include "util/mutex.h"
#include "util/status.h"

namespace radixlm::grammar {

struct GrammarCacheStats {
  int64_t lookups = 0;         // Get / GetFuture calls
  int64_t compiles = 0;        // cache misses: compilations started
  double compile_seconds = 0;  // wall time of the compilations finished
  double hit_rate() const {
    return lookups > 0 ? static_cast<double>(lookups - compiles) / static_cast<double>(lookups)
                       : 0.0;
  }
};

class GrammarCache {
 public:
  using Result = StatusOr<std::shared_ptr<const CompiledGrammar>>;

  GrammarCache(std::shared_ptr<const TokenVocab> vocab, CompileOptions options = {})
      : vocab_(std::move(vocab)), options_(std::move(options)) {}

  // Compiles on the calling thread if nobody has started this key yet; otherwise waits for
  // (or returns) the result of the compilation already started.
  Result Get(GrammarKind kind, std::string_view text);

  // Like Get, but never compiles on the calling thread: if the key is new, a compilation is
  // registered and `run` is called with the task (e.g. to post it to a thread pool); the
  // returned future becomes ready when that task has run. The runner must run the task
  // exactly once, before the cache is destroyed (the task uses the cache's vocabulary and
  // options); a dropped task leaves every waiter on that key blocked.
  template <typename Runner>
  std::shared_future<Result> GetFuture(GrammarKind kind, std::string_view text, Runner run) {
    auto [future, task] = Lookup(kind, text);
    if (task) run(std::move(task));
    return future;
  }

  size_t size() const;
  // Number of compilations actually run (cache misses).
  size_t num_compiles() const;
  GrammarCacheStats stats() const;

 private:
  using Key = std::pair<GrammarKind, std::string>;
  // The future for the key and, if this call created the entry, the task that fulfils it.
  std::pair<std::shared_future<Result>, std::function<void()>> Lookup(GrammarKind kind,
                                                                      std::string_view text);

  const std::shared_ptr<const TokenVocab> vocab_;
  const CompileOptions options_;
  mutable Mutex mutex_;
  std::map<Key, std::shared_future<Result>> entries_ GUARDED_BY(mutex_);
  size_t num_compiles_ GUARDED_BY(mutex_) = 0;
  int64_t lookups_ GUARDED_BY(mutex_) = 0;
  double compile_seconds_ GUARDED_BY(mutex_) = 0;
};

}  // namespace radixlm::grammar
