#include "vision/clip_weights.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "kernels/backend.h"
#include "kernels/dot.h"
#include "kernels/quant.h"

namespace radixlm::vision {
namespace {

std::string Shape(const gguf::TensorInfo& t) {
  std::string s = "[";
  for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + "]";
}

}  // namespace

int64_t ClipWeights::PaddedCols(gguf::GgmlType type, int64_t cols) {
  const bool is_float =
      type == gguf::GgmlType::kF32 || type == gguf::GgmlType::kF16 || type == gguf::GgmlType::kBF16;
  return is_float ? (cols + 31) / 32 * 32 : cols;
}

Status ClipWeights::Matrix(const std::string& name, int64_t cols, int64_t rows,
                           kernels::WeightMatrix* out, int64_t padded_cols, int64_t padded_rows) {
  const gguf::TensorInfo* t = Find(name);
  if (t == nullptr) return InvalidArgument("projector: missing tensor '" + name + "'");
  if (t->shape.empty() || t->num_elements() != cols * rows || t->shape.back() != rows) {
    return InvalidArgument("projector: tensor '" + name + "' is " + Shape(*t) + ", expected " +
                           std::to_string(cols) + " x " + std::to_string(rows) + " values");
  }
  if (!kernels::IsSupportedType(t->type) || kernels::GetVecDotFn(t->type) == nullptr ||
      !kernels::IsRowSizeValid(t->type, cols)) {
    return Unimplemented("projector: tensor '" + name +
                         "' has a type the matmul kernels do not support");
  }
  padded_cols = std::max(padded_cols, cols);
  padded_rows = std::max(padded_rows, rows);
  if (padded_cols == cols && padded_rows == rows) {
    *out = kernels::MakeWeightMatrix(t->type, t->data, rows, cols);
  } else {
    if (padded_cols != cols && PaddedCols(t->type, cols) == cols) {
      return Unimplemented("projector: tensor '" + name + "' cannot be padded (not a float type)");
    }
    const size_t row_bytes = kernels::RowBytes(t->type, cols);
    const size_t padded_row_bytes = kernels::RowBytes(t->type, padded_cols);
    std::vector<uint8_t>& dst = owned_.emplace_back(padded_row_bytes * padded_rows, 0);
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(dst.data() + r * padded_row_bytes, t->data + r * row_bytes, row_bytes);
    }
    *out = kernels::MakeWeightMatrix(t->type, dst.data(), padded_rows, padded_cols);
  }
  matrices_.push_back(out);
  return Status::Ok();
}

Status ClipWeights::TransposedMatrix(const std::string& name, int64_t cols, int64_t rows,
                                     kernels::WeightMatrix* out) {
  const gguf::TensorInfo* t = Find(name);
  if (t == nullptr) return InvalidArgument("projector: missing tensor '" + name + "'");
  if (t->shape.size() != 2 || t->shape[0] != rows || t->shape[1] != cols) {
    return InvalidArgument("projector: tensor '" + name + "' is " + Shape(*t) + ", expected [" +
                           std::to_string(rows) + ", " + std::to_string(cols) + "]");
  }
  size_t elem = 0;
  if (t->type == gguf::GgmlType::kF32) elem = 4;
  if (t->type == gguf::GgmlType::kF16 || t->type == gguf::GgmlType::kBF16) elem = 2;
  if (elem == 0) {
    return Unimplemented("projector: tensor '" + name + "' must be F32, F16 or BF16");
  }
  std::vector<uint8_t>& dst = owned_.emplace_back(t->size_bytes);
  // Stored: cols rows of `rows` values; wanted: rows rows of `cols` values.
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(dst.data() + (r * cols + c) * elem, t->data + (c * rows + r) * elem, elem);
    }
  }
  *out = kernels::MakeWeightMatrix(t->type, dst.data(), rows, cols);
  matrices_.push_back(out);
  return Status::Ok();
}

Status ClipWeights::Vector(const std::string& name, int64_t n, bool required, const float** out,
                           int64_t padded_n) {
  const gguf::TensorInfo* t = Find(name);
  if (t == nullptr) {
    return required ? InvalidArgument("projector: missing tensor '" + name + "'") : Status::Ok();
  }
  if (t->type != gguf::GgmlType::kF32 || t->num_elements() != n) {
    return InvalidArgument("projector: tensor '" + name + "' must be F32 of " + std::to_string(n) +
                           " values");
  }
  *out = reinterpret_cast<const float*>(t->data);
  if (padded_n > n) {
    std::vector<uint8_t>& dst = owned_.emplace_back(padded_n * sizeof(float), 0);
    std::memcpy(dst.data(), t->data, n * sizeof(float));
    *out = reinterpret_cast<const float*>(dst.data());
  }
  return Status::Ok();
}

void ClipWeights::Pack(ThreadPool* pool) {
  const kernels::KernelBackend& backend = kernels::CpuBackend();
  std::unordered_set<const void*> matrices;
  for (const kernels::WeightMatrix* w : matrices_) matrices.insert(w->data);
  for (const gguf::TensorInfo& t : file_->tensors()) {
    if (matrices.count(t.data) == 0) resident_bytes_ += static_cast<int64_t>(t.size_bytes);
  }
  for (kernels::WeightMatrix* w : matrices_) {
    const size_t bytes = w->row_bytes * static_cast<size_t>(w->rows);
    if (std::unique_ptr<kernels::PackedWeights> p = backend.prepare_weights(w, pool)) {
      resident_bytes_ += static_cast<int64_t>(p->group_bytes) * p->groups;
      packed_.push_back(std::move(p));
      file_->ReleasePages(w->data, bytes);  // the GEMM reads the packed copy only
    } else {
      resident_bytes_ += static_cast<int64_t>(bytes);
    }
  }
}

}  // namespace radixlm::vision
