#include "vision/clip_weights.h"

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

Status ClipWeights::Matrix(const std::string& name, int64_t cols, int64_t rows,
                           kernels::WeightMatrix* out) {
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
  *out = kernels::MakeWeightMatrix(t->type, t->data, rows, cols);
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

Status ClipWeights::Vector(const std::string& name, int64_t n, bool required, const float** out) {
  const gguf::TensorInfo* t = Find(name);
  if (t == nullptr) {
    return required ? InvalidArgument("projector: missing tensor '" + name + "'") : Status::Ok();
  }
  if (t->type != gguf::GgmlType::kF32 || t->num_elements() != n) {
    return InvalidArgument("projector: tensor '" + name + "' must be F32 of " + std::to_string(n) +
                           " values");
  }
  *out = reinterpret_cast<const float*>(t->data);
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
