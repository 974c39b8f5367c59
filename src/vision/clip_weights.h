// The tensors of a projector GGUF as the forward pass reads them: matrices checked against the
// matmul kernels (kernels/matmul.h) and repacked for their GEMM at the end of loading, as the
// language model's and the text encoder's weights are; F32 vectors (norms, biases) read in
// place from the mapping. Errors name the tensor.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "kernels/matmul.h"
#include "kernels/packed_weights.h"
#include "util/status.h"
#include "util/thread_pool.h"

namespace radixlm::vision {

class ClipWeights {
 public:
  explicit ClipWeights(const gguf::GgufFile* file) : file_(file) {}  // file outlives this

  const gguf::TensorInfo* Find(const std::string& name) const { return file_->FindTensor(name); }

  // A [rows, cols] matrix (GGUF shape [cols, rows]; a conv kernel's [kw, kh, c, rows] is read
  // with cols = kw * kh * c). Registered for Pack(). With padded_cols > cols or padded_rows >
  // rows, a copy this object owns with zero columns (F32 / F16 / BF16 only) and zero rows
  // appended: the packed GEMM needs a multiple of 32 columns (PaddedCols), and zeros add
  // nothing to a dot product (0 * x = 0, and the sums keep their order).
  Status Matrix(const std::string& name, int64_t cols, int64_t rows, kernels::WeightMatrix* out,
                int64_t padded_cols = 0, int64_t padded_rows = 0);
  // `cols` rounded up to the packed GEMM's 32 for a float type (else `cols`).
  static int64_t PaddedCols(gguf::GgmlType type, int64_t cols);
  // The transpose of a stored [cols, rows] F32 / F16 / BF16 matrix (GGUF shape [rows, cols]),
  // copied into memory this object owns, in the same type (ggml_cont(ggml_transpose(w))).
  Status TransposedMatrix(const std::string& name, int64_t cols, int64_t rows,
                          kernels::WeightMatrix* out);
  // An F32 vector of n values, or null when absent and not required. padded_n > n: an owned
  // copy with zeros appended.
  Status Vector(const std::string& name, int64_t n, bool required, const float** out,
                int64_t padded_n = 0);

  // Repacks every registered matrix for the GEMM (kernels::KernelBackend::prepare_weights) and
  // releases the file pages of those that were repacked. Call once, after the last Matrix().
  void Pack(ThreadPool* pool);
  int64_t resident_bytes() const { return resident_bytes_; }

 private:
  const gguf::GgufFile* file_;
  std::vector<kernels::WeightMatrix*> matrices_;  // owned by the caller, stable addresses
  std::vector<std::unique_ptr<kernels::PackedWeights>> packed_;
  std::vector<std::vector<uint8_t>> owned_;  // transposed and padded copies
  int64_t resident_bytes_ = 0;
};

}  // namespace radixlm::vision
