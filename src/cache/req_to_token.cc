#include "cache/req_to_token.h"

#include <algorithm>
#include <string>

#include "cache/kv_pool.h"
#include "util/check.h"

namespace radixlm {

namespace {
constexpr int64_t kMaxTableEntries = int64_t{1} << 32;  // 16 GiB of int32: surely a mistake
}  // namespace

StatusOr<ReqToTokenTable> ReqToTokenTable::Create(const ReqToTokenConfig& config) {
  if (config.max_requests < 1 || config.max_context_len < 1) {
    return InvalidArgument("ReqToTokenTable: max_requests (" + std::to_string(config.max_requests) +
                           ") and max_context_len (" + std::to_string(config.max_context_len) +
                           ") must be >= 1");
  }
  if (int64_t{config.max_requests} * config.max_context_len > kMaxTableEntries) {
    return InvalidArgument("ReqToTokenTable: " + std::to_string(config.max_requests) + " x " +
                           std::to_string(config.max_context_len) + " entries is too large");
  }
  return ReqToTokenTable(config.max_requests, config.max_context_len);
}

ReqToTokenTable::ReqToTokenTable(int32_t max_requests, int32_t max_context_len)
    : max_requests_(max_requests), max_context_len_(max_context_len) {
  Reset();
}

void ReqToTokenTable::Reset() {
  table_.assign(static_cast<size_t>(max_requests_) * max_context_len_, KvPool::kPaddingSlot);
  free_rows_.resize(max_requests_);
  for (int32_t i = 0; i < max_requests_; ++i) free_rows_[i] = max_requests_ - 1 - i;
  row_is_free_.assign(max_requests_, 1);
}

std::optional<int32_t> ReqToTokenTable::Allocate() {
  if (free_rows_.empty()) return std::nullopt;
  const int32_t row = free_rows_.back();
  free_rows_.pop_back();
  row_is_free_[row] = 0;
  return row;
}

std::optional<std::vector<int32_t>> ReqToTokenTable::Allocate(int32_t n) {
  if (n < 0 || n > available()) return std::nullopt;
  std::vector<int32_t> rows;
  rows.reserve(n);
  for (int32_t i = 0; i < n; ++i) rows.push_back(*Allocate());
  return rows;
}

void ReqToTokenTable::Free(int32_t row) {
  RADIXLM_CHECK(row >= 0 && row < max_requests_ && !row_is_free_[row])
      << "ReqToTokenTable::Free: bad or already-free row " << row;
  row_is_free_[row] = 1;
  free_rows_.push_back(row);
}

std::span<int32_t> ReqToTokenTable::Row(int32_t row) {
  RADIXLM_CHECK(row >= 0 && row < max_requests_) << "ReqToTokenTable: bad row " << row;
  return {table_.data() + static_cast<size_t>(row) * max_context_len_,
          static_cast<size_t>(max_context_len_)};
}

std::span<const int32_t> ReqToTokenTable::Row(int32_t row) const {
  RADIXLM_CHECK(row >= 0 && row < max_requests_) << "ReqToTokenTable: bad row " << row;
  return {table_.data() + static_cast<size_t>(row) * max_context_len_,
          static_cast<size_t>(max_context_len_)};
}

void ReqToTokenTable::Write(int32_t row, int64_t start, std::span<const int32_t> slots) {
  RADIXLM_CHECK(start >= 0 && start + static_cast<int64_t>(slots.size()) <= max_context_len_)
      << "ReqToTokenTable::Write: [" << start << ", " << start + static_cast<int64_t>(slots.size())
      << ") outside a row of " << max_context_len_;
  std::copy(slots.begin(), slots.end(), Row(row).begin() + start);
}

}  // namespace radixlm
