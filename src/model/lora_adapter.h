// LoraAdapter: a LoRA adapter in llama.cpp's GGUF form, checked against the base model it
// runs over.
//
// The file: general.type = "adapter", adapter.type = "lora", general.architecture equal to
// the base's, adapter.lora.alpha (absent or 0: scale 1), and for each adapted matrix W (named
// as in the base file, e.g. blk.3.attn_q.weight) the pair W.lora_a, shape [in, rank] in
// ggml order (rank rows of `in` values), and W.lora_b, [rank, out] (out rows of `rank` values),
// in F32, F16 or Q8_0 (converted to F32 at load). A row x of W's input then gets
// y += scale * B (A x), scale = alpha / rank (llama.cpp's, with its user scale 1.0).
//
// Adapted matrices: attn_q, attn_k, attn_v, attn_output, ffn_gate, ffn_up, ffn_down of layers
// that run the plain attention and dense FFN blocks. Anything else in the file (embeddings,
// the output head, fused QKV, experts, latent attention, a hybrid model's linear layers) is
// refused by name, as are shapes that do not match the base, a rank above max_rank, and
// targets outside allowed_targets.
//
// Owns its mapped file. Residency: the working form the forward pass reads (A as the file's
// F32 / F16 view or Q8_0 converted to F32, B transposed to F32) exists while the adapter is
// resident: after Load, and after MakeResident until Release, which frees the converted
// matrices and drops the file's pages from the resident set (the scheduler's LoraPool keeps
// --max-loras-per-batch adapters resident, least recently used out first). The checks made at
// load and Get's answers do not change with residency. MakeResident and Release are called
// only by the thread that runs forward passes (the scheduler's), never during one; everything
// else may be read from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "util/status.h"

namespace radixlm::model {

enum class LoraTarget { kQ, kK, kV, kO, kGate, kUp, kDown, kCount };
inline constexpr int kNumLoraTargets = static_cast<int>(LoraTarget::kCount);

// "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj" (SGLang's
// --lora-target-modules names) and the GGUF tensor stem ("attn_q", ..., "ffn_down").
const char* LoraTargetModuleName(LoraTarget t);
const char* LoraTargetTensorStem(LoraTarget t);

// One adapted matrix: y[out] += scale * B (A x[in]).
struct LoraMatrix {
  gguf::GgmlType type = gguf::GgmlType::kF32;  // of a as held: kF32 or kF16
  const void* a = nullptr;                     // [rank, in]; null while not resident
  const float* bt = nullptr;                   // B transposed, F32: [rank, out]; null likewise
  const gguf::TensorInfo* src_a = nullptr;     // the file's lora_a and lora_b
  const gguf::TensorInfo* src_b = nullptr;
  int64_t rank = 0;
  int64_t in = 0;
  int64_t out = 0;
  float scale = 1.0f;
};

struct LoraLoadOptions {
  int64_t max_rank = 0;  // > 0: a larger rank is refused (--max-lora-rank)
  // Targets the server allows (--lora-target-modules); all true by default.
  std::array<bool, kNumLoraTargets> allowed_targets = {true, true, true, true, true, true, true};
};

class LoraAdapter : public std::enable_shared_from_this<LoraAdapter> {
 public:
  // Reads and checks the adapter at path against the base model's config and weights.
  static StatusOr<std::unique_ptr<LoraAdapter>> Load(const std::string& path,
                                                     const ModelConfig& config,
                                                     const ModelWeights& weights,
                                                     const LoraLoadOptions& options = {});
  static StatusOr<std::unique_ptr<LoraAdapter>> FromGguf(std::unique_ptr<gguf::GgufFile> file,
                                                         const ModelConfig& config,
                                                         const ModelWeights& weights,
                                                         const LoraLoadOptions& options = {});
  LoraAdapter(const LoraAdapter&) = delete;
  LoraAdapter& operator=(const LoraAdapter&) = delete;

  // The matrix adapted at (layer, target), or null.
  const LoraMatrix* Get(int64_t layer, LoraTarget t) const {
    const LoraMatrix& m = layers_[layer][static_cast<int>(t)];
    return m.rank > 0 ? &m : nullptr;
  }
  int64_t max_rank() const { return max_rank_; }
  float alpha() const { return alpha_; }
  int64_t n_matrices() const { return n_matrices_; }
  int64_t bytes() const { return bytes_; }  // of A and B as held while resident
  // The adapter's content identity: a hash of alpha and every adapted matrix (name, type,
  // shape, bytes), never 0. The same file (or one with the same tensors and alpha) has the
  // same identity in every run, whatever name it is served under; the disk tier and the KV
  // records of prefill/decode disaggregation carry it, so KV computed under one adapter is
  // never used for another (or for the base model, identity 0).
  uint64_t identity() const { return identity_; }

  bool resident() const { return resident_; }
  void MakeResident() const;
  void Release() const;

 private:
  LoraAdapter() = default;

  std::unique_ptr<gguf::GgufFile> file_;
  // The working form (see above): Q8_0 A matrices as F32, every B transposed, and the
  // pointers into them and into the file. Mutable: residency is a cache of the file.
  mutable std::vector<std::vector<float>> converted_;
  mutable std::vector<std::array<LoraMatrix, kNumLoraTargets>> layers_;  // [n_layers]
  mutable bool resident_ = false;
  float alpha_ = 0.0f;
  uint64_t identity_ = 0;
  int64_t max_rank_ = 0;
  int64_t n_matrices_ = 0;
  int64_t bytes_ = 0;
};

}  // namespace radixlm::model
