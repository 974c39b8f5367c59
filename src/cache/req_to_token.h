// ReqToTokenTable: request slot → the KV slot index of each of its tokens (SGLang's
// ReqToTokenPool). A running request owns one row; position i of the row holds the KV slot of
// its i-th token. Attention kernels read the table directly through data().
//
// Rows start (and are reset to) KvPool::kPaddingSlot, so an unwritten position points at the
// padding slot rather than at someone else's KV. Freeing a row does not clear it.
// Not thread-safe: only the scheduler thread touches it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "util/status.h"

namespace radixlm {

struct ReqToTokenConfig {
  int32_t max_requests = 0;     // rows
  int32_t max_context_len = 0;  // columns: the most tokens one request can hold
};

class ReqToTokenTable {
 public:
  // InvalidArgument when a dimension is < 1 or the table would not fit memory sanely.
  static StatusOr<ReqToTokenTable> Create(const ReqToTokenConfig& config);

  // A free row, or nullopt when all rows are taken.
  std::optional<int32_t> Allocate();
  // n free rows at once, or nullopt (table unchanged) when fewer than n are free.
  std::optional<std::vector<int32_t>> Allocate(int32_t n);
  // Returns a row taken by Allocate. Freeing a free or out-of-range row is a caller bug that
  // would hand one row to two requests: it aborts (RADIXLM_CHECK), in every build.
  void Free(int32_t row);
  // All rows free again, contents reset to the padding slot.
  void Reset();

  // The row's max_context_len entries.
  std::span<int32_t> Row(int32_t row);
  std::span<const int32_t> Row(int32_t row) const;
  // Row[start, start + slots.size()) = slots. Requires start + slots.size() <= max_context_len.
  void Write(int32_t row, int64_t start, std::span<const int32_t> slots);

  int32_t available() const { return static_cast<int32_t>(free_rows_.size()); }
  int32_t max_requests() const { return max_requests_; }
  int32_t max_context_len() const { return max_context_len_; }
  bool IsRowFree(int32_t row) const { return row_is_free_[row] != 0; }
  const int32_t* data() const { return table_.data(); }  // [max_requests, max_context_len]

 private:
  ReqToTokenTable(int32_t max_requests, int32_t max_context_len);

  int32_t max_requests_;
  int32_t max_context_len_;
  std::vector<int32_t> table_;        // [max_requests, max_context_len]
  std::vector<int32_t> free_rows_;    // stack; back() is handed out next
  std::vector<uint8_t> row_is_free_;  // [max_requests]
};

}  // namespace radixlm
