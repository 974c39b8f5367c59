// GrammarCheckMemo: remembers whether a grammar's automaton could be built, so the handlers
// that must refuse an unbuildable grammar with a 400 before submitting it (forced tool calls)
// or must know whether "auto" tool calls can be constrained build each distinct grammar once,
// not once per request (a tool list's automaton takes a second or more to minimize, and the
// engine's own GrammarCache compiles the grammar again only the first time).
//
//   Status built = memo->Check("regex\n" + regex, [&] { return CompileRegex(regex, o).status(); });
//
// One memo serves one set of CompileOptions (a server has one). Thread-safe (the HTTP threads
// share one). Least recently used entries go beyond `capacity`; keys over kMaxKeyBytes are
// checked every time and never kept. Two threads that miss on the same key at once both build
// it (the check runs without the lock held).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "util/mutex.h"
#include "util/status.h"

namespace radixlm::server {

class GrammarCheckMemo {
 public:
  static constexpr size_t kMaxKeyBytes = size_t{1} << 20;

  explicit GrammarCheckMemo(size_t capacity = 256) : capacity_(capacity) {}
  GrammarCheckMemo(const GrammarCheckMemo&) = delete;
  GrammarCheckMemo& operator=(const GrammarCheckMemo&) = delete;

  // The status `build` returns for `key`: remembered, or built now and remembered.
  Status Check(const std::string& key, const std::function<Status()>& build);

  size_t size() const;
  int64_t builds() const;  // how many times a check ran `build`

 private:
  using Entry = std::pair<std::string, Status>;
  const size_t capacity_;
  mutable Mutex mu_;
  std::list<Entry> lru_ GUARDED_BY(mu_);  // most recently used first
  // Views of the keys held by lru_'s nodes (stable while the node lives).
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_ GUARDED_BY(mu_);
  int64_t builds_ GUARDED_BY(mu_) = 0;
};

}  // namespace radixlm::server
