#include "sampling/pooling.h"

#include <algorithm>
#include <cmath>

namespace radixlm {

StatusOr<Pooling> ParsePooling(const std::string& name) {
  if (name == "mean") return Pooling::kMean;
  if (name == "cls") return Pooling::kCls;
  if (name == "last") return Pooling::kLast;
  return InvalidArgument("pooling must be mean, cls or last, got '" + name + "'");
}

const char* PoolingName(Pooling pooling) {
  switch (pooling) {
    case Pooling::kMean:
      return "mean";
    case Pooling::kCls:
      return "cls";
    case Pooling::kLast:
      return "last";
    case Pooling::kNone:
      break;
  }
  return "none";
}

StatusOr<Pooling> PoolingFromGguf(int64_t pooling_type) {
  switch (pooling_type) {
    case 0:
      return Pooling::kNone;
    case 1:
      return Pooling::kMean;
    case 2:
      return Pooling::kCls;
    case 3:
      return Pooling::kLast;
    case 4:
      return Unimplemented("pooling_type 4 (rank: a reranker's classification head) is not built");
    default:
      return InvalidArgument("unknown pooling_type " + std::to_string(pooling_type));
  }
}

void L2Normalize(std::span<float> v) {
  double sum = 0;
  for (float x : v) sum += static_cast<double>(x) * x;
  if (sum <= 0) return;
  const auto scale = static_cast<float>(1.0 / std::sqrt(sum));
  for (float& x : v) x *= scale;
}

void PoolingAccumulator::Add(int64_t first_position, int64_t n, const float* rows) {
  if (n <= 0) return;
  switch (pooling_) {
    case Pooling::kMean:
      if (sum_.empty()) sum_.assign(static_cast<size_t>(width_), 0.0);
      for (int64_t r = 0; r < n; ++r) {
        const float* row = rows + r * width_;
        for (int64_t i = 0; i < width_; ++i) sum_[i] += row[i];
      }
      break;
    case Pooling::kCls:
      if (first_position == 0) row_.assign(rows, rows + width_);
      break;
    case Pooling::kLast:
      row_.assign(rows + (n - 1) * width_, rows + n * width_);
      break;
    case Pooling::kNone:
      break;
  }
}

std::vector<float> PoolingAccumulator::Finish(int64_t n_positions, bool normalize) {
  std::vector<float> out;
  if (pooling_ == Pooling::kMean) {
    out.assign(static_cast<size_t>(width_), 0.0f);
    for (int64_t i = 0; i < width_ && !sum_.empty(); ++i) {
      out[i] = static_cast<float>(sum_[i] / static_cast<double>(std::max<int64_t>(n_positions, 1)));
    }
  } else {
    out = std::move(row_);
    out.resize(static_cast<size_t>(width_), 0.0f);
  }
  if (normalize) L2Normalize(out);
  return out;
}

}  // namespace radixlm
