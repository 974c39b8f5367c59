#include "kernels/backend.h"

#include <string>

#include "kernels/dot.h"
#include "kernels/gated_delta.h"
#include "kernels/ops.h"
#include "kernels/rope.h"

namespace radixlm::kernels {
namespace {

std::unique_ptr<PackedWeights> PrepareCpuWeights(WeightMatrix* w, ThreadPool* pool) {
  if (!PackedGemmAvailable() || !IsPackableType(w->type) || w->cols % 32 != 0) return nullptr;
  std::unique_ptr<PackedWeights> packed = PackWeights(*w, pool);
  w->packed = packed.get();
  return packed;
}

}  // namespace

const KernelBackend& CpuBackend() {
  static const std::string name = std::string("cpu-") + IsaName(ActiveIsa());
  static const KernelBackend backend{
      .name = name.c_str(),
      .prepare_weights = PrepareCpuWeights,
      .matmul = MatMulMulti,
      .grouped_matmul = GroupedMatMul,
      .embed = GetRows,
      .rms_norm = RmsNorm,
      .add = Add,
      .scale = Scale,
      .geglu = GeGlu,
      .swiglu = SwiGlu,
      .swiglu_oai = SwiGluOai,
      .rope = ApplyRopeTables,
      .gated_delta_step = GatedDeltaStep,
      .gated_delta_chunk = GatedDeltaChunk,
      .store_kv = StoreKvRows,
      .attention = AttentionForBatch,
  };
  return backend;
}

}  // namespace radixlm::kernels
