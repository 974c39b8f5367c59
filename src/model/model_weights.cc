#include "model/model_weights.h"

#include <array>
#include <chrono>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <unordered_set>

#include "kernels/dot.h"
#include "kernels/quant.h"
#include "model/tensor_names.h"

namespace radixlm::model {

namespace {

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string ShapeString(const ExpectedShape& e) {
  return ShapeString(std::vector<int64_t>(e.dims, e.dims + e.n_dims));
}

// A layer's matrices, in the order they are prepared.
// (gemma4's per-layer input matrices last.)
std::array<kernels::WeightMatrix*, 23> LayerMatrices(LayerWeights& l) {
  return {&l.wq_a,
          &l.wq_b,
          &l.wkv_a,
          &l.gate_shexp,
          &l.up_shexp,
          &l.down_shexp,
          &l.wq,
          &l.wk,
          &l.wv,
          &l.wo,
          &l.wqkv,  // (a linear layer's; split into wq, wk, wv elsewhere)
          &l.attn_gate,
          &l.ssm_beta,
          &l.ssm_alpha,
          &l.ssm_beta_alpha,
          &l.ssm_out,
          &l.gate,
          &l.up,
          &l.down,
          &l.per_layer_inp_gate,
          &l.per_layer_proj,
          &l.nextn_eh_proj,
          &l.nextn_shared_head_head};
}

// The router and every expert's matrices of a layer (none for a dense one).
std::vector<kernels::WeightMatrix*> ExpertMatrices(LayerWeights& l) {
  if (l.gate_inp.data == nullptr) return {};
  std::vector<kernels::WeightMatrix*> out = {&l.gate_inp};
  for (auto* experts : {&l.gate_exps, &l.up_exps, &l.down_exps}) {
    for (kernels::WeightMatrix& m : *experts) out.push_back(&m);
  }
  return out;
}

// MLA's per-head matrices of a layer (none elsewhere).
std::vector<kernels::WeightMatrix*> HeadMatrices(LayerWeights& l) {
  std::vector<kernels::WeightMatrix*> out;
  for (auto* heads : {&l.wk_b, &l.wv_b}) {
    for (kernels::WeightMatrix& m : *heads) out.push_back(&m);
  }
  return out;
}

// The stacked per-expert (and MLA's per-head) tensors and the LayerWeights vector each one's
// views go to.
struct ExpertSlot {
  LayerTensor tensor;
  std::vector<kernels::WeightMatrix> LayerWeights::*experts;
};
constexpr ExpertSlot kExpertSlots[] = {
    {LayerTensor::kFfnGateExps, &LayerWeights::gate_exps},
    {LayerTensor::kFfnUpExps, &LayerWeights::up_exps},
    {LayerTensor::kFfnDownExps, &LayerWeights::down_exps},
    {LayerTensor::kAttnKB, &LayerWeights::wk_b},
    {LayerTensor::kAttnVB, &LayerWeights::wv_b},
    {LayerTensor::kFfnGateUpExps, &LayerWeights::gate_up_exps},
};

// Where each per-layer tensor goes in LayerWeights: a matrix or a float vector.
struct LayerSlot {
  LayerTensor tensor;
  kernels::WeightMatrix LayerWeights::*matrix;
  const float* LayerWeights::*vector;
};
constexpr LayerSlot kLayerSlots[] = {
    {LayerTensor::kAttnNorm, nullptr, &LayerWeights::attn_norm},
    {LayerTensor::kAttnQ, &LayerWeights::wq, nullptr},
    {LayerTensor::kAttnK, &LayerWeights::wk, nullptr},
    {LayerTensor::kAttnV, &LayerWeights::wv, nullptr},
    {LayerTensor::kAttnOutput, &LayerWeights::wo, nullptr},
    {LayerTensor::kAttnQBias, nullptr, &LayerWeights::bq},
    {LayerTensor::kAttnKBias, nullptr, &LayerWeights::bk},
    {LayerTensor::kAttnVBias, nullptr, &LayerWeights::bv},
    {LayerTensor::kAttnQNorm, nullptr, &LayerWeights::q_norm},
    {LayerTensor::kAttnKNorm, nullptr, &LayerWeights::k_norm},
    {LayerTensor::kPostAttnNorm, nullptr, &LayerWeights::post_attn_norm},
    {LayerTensor::kFfnNorm, nullptr, &LayerWeights::ffn_norm},
    {LayerTensor::kFfnGate, &LayerWeights::gate, nullptr},
    {LayerTensor::kFfnUp, &LayerWeights::up, nullptr},
    {LayerTensor::kFfnDown, &LayerWeights::down, nullptr},
    {LayerTensor::kPostFfnNorm, nullptr, &LayerWeights::post_ffn_norm},
    {LayerTensor::kAttnQkv, &LayerWeights::wqkv, nullptr},
    {LayerTensor::kAttnQkvBias, nullptr, &LayerWeights::bqkv},
    {LayerTensor::kFfnGateInp, &LayerWeights::gate_inp, nullptr},
    {LayerTensor::kAttnOutputBias, nullptr, &LayerWeights::bo},
    {LayerTensor::kAttnSinks, nullptr, &LayerWeights::attn_sinks},
    {LayerTensor::kFfnGateInpBias, nullptr, &LayerWeights::gate_inp_b},
    {LayerTensor::kFfnGateExpsBias, nullptr, &LayerWeights::gate_exps_b},
    {LayerTensor::kFfnUpExpsBias, nullptr, &LayerWeights::up_exps_b},
    {LayerTensor::kFfnDownExpsBias, nullptr, &LayerWeights::down_exps_b},
    {LayerTensor::kPerLayerInpGate, &LayerWeights::per_layer_inp_gate, nullptr},
    {LayerTensor::kPerLayerProj, &LayerWeights::per_layer_proj, nullptr},
    {LayerTensor::kPerLayerPostNorm, nullptr, &LayerWeights::per_layer_post_norm},
    {LayerTensor::kLayerOutScale, nullptr, &LayerWeights::out_scale},
    {LayerTensor::kAttnGate, &LayerWeights::attn_gate, nullptr},
    {LayerTensor::kSsmConv1d, nullptr, &LayerWeights::ssm_conv1d},
    {LayerTensor::kSsmDt, nullptr, &LayerWeights::ssm_dt},
    {LayerTensor::kSsmA, nullptr, &LayerWeights::ssm_a},
    {LayerTensor::kSsmBeta, &LayerWeights::ssm_beta, nullptr},
    {LayerTensor::kSsmAlpha, &LayerWeights::ssm_alpha, nullptr},
    {LayerTensor::kSsmNorm, nullptr, &LayerWeights::ssm_norm},
    {LayerTensor::kSsmOut, &LayerWeights::ssm_out, nullptr},
    {LayerTensor::kAttnQA, &LayerWeights::wq_a, nullptr},
    {LayerTensor::kAttnQANorm, nullptr, &LayerWeights::q_a_norm},
    {LayerTensor::kAttnQB, &LayerWeights::wq_b, nullptr},
    {LayerTensor::kAttnKvAMqa, &LayerWeights::wkv_a, nullptr},
    {LayerTensor::kAttnKvANorm, nullptr, &LayerWeights::kv_a_norm},
    {LayerTensor::kFfnGateShexp, &LayerWeights::gate_shexp, nullptr},
    {LayerTensor::kFfnUpShexp, &LayerWeights::up_shexp, nullptr},
    {LayerTensor::kFfnDownShexp, &LayerWeights::down_shexp, nullptr},
    {LayerTensor::kFfnExpProbsB, nullptr, &LayerWeights::exp_probs_b},
    {LayerTensor::kFfnGateInpScale, nullptr, &LayerWeights::gate_inp_scale},
    {LayerTensor::kFfnPreNorm2, nullptr, &LayerWeights::ffn_pre_norm_2},
    {LayerTensor::kFfnPostNorm1, nullptr, &LayerWeights::ffn_post_norm_1},
    {LayerTensor::kFfnPostNorm2, nullptr, &LayerWeights::ffn_post_norm_2},
    {LayerTensor::kFfnDownExpsScale, nullptr, &LayerWeights::down_exps_scale},
    {LayerTensor::kFfnGateInpShexp, nullptr, &LayerWeights::gate_inp_shexp},
    {LayerTensor::kSsmBetaAlpha, &LayerWeights::ssm_beta_alpha, nullptr},
    {LayerTensor::kNextnEhProj, &LayerWeights::nextn_eh_proj, nullptr},
    {LayerTensor::kNextnEnorm, nullptr, &LayerWeights::nextn_enorm},
    {LayerTensor::kNextnHnorm, nullptr, &LayerWeights::nextn_hnorm},
    {LayerTensor::kNextnSharedHeadNorm, nullptr, &LayerWeights::nextn_shared_head_norm},
    {LayerTensor::kNextnEmbedTokens, &LayerWeights::nextn_embed_tokens, nullptr},
    {LayerTensor::kNextnSharedHeadHead, &LayerWeights::nextn_shared_head_head, nullptr},
};
static_assert(std::size(kLayerSlots) + std::size(kExpertSlots) == kNumLayerTensors,
              "every layer tensor has a slot");

// Rows [first, first + rows) of m, as a matrix of their own (the rows are contiguous).
kernels::WeightMatrix RowRange(const kernels::WeightMatrix& m, int64_t first, int64_t rows) {
  return kernels::MakeWeightMatrix(
      m.type, static_cast<const uint8_t*>(m.data) + first * static_cast<int64_t>(m.row_bytes), rows,
      m.cols);
}

// Splits the fused matrices of layer `layer` into the views the forward pass reads.
void SplitFused(const ModelConfig& c, int64_t layer, LayerWeights& l) {
  if (c.post_attn_norm_is_ffn_norm) {
    l.ffn_norm = l.post_attn_norm;
    l.post_attn_norm = nullptr;
  }
  if (c.IsLinearLayer(layer)) return;  // its attn_qkv feeds the convolution whole
  const int64_t qs = c.LayerQSize(layer);
  const int64_t kvs = c.LayerKvSize(layer);
  const int64_t ffn = c.LayerFfnSize(layer);
  if (l.wqkv.data != nullptr) {
    l.wq = RowRange(l.wqkv, 0, qs);
    l.wk = RowRange(l.wqkv, qs, kvs);
    l.wv = RowRange(l.wqkv, qs + kvs, kvs);
    l.wqkv = {};
  }
  if (l.bqkv != nullptr) {
    l.bq = l.bqkv;
    l.bk = l.bqkv + qs;
    l.bv = l.bqkv + qs + kvs;
  }
  if (c.fused_gate_up && l.up.data != nullptr) {
    const kernels::WeightMatrix fused = l.up;
    l.gate = RowRange(fused, 0, ffn);
    l.up = RowRange(fused, ffn, ffn);
  }
  for (const kernels::WeightMatrix& fused : l.gate_up_exps) {  // each expert's two halves
    l.gate_exps.push_back(RowRange(fused, 0, c.expert_ffn_size));
    l.up_exps.push_back(RowRange(fused, c.expert_ffn_size, c.expert_ffn_size));
  }
}

bool ShapeMatches(const gguf::TensorInfo& t, const ExpectedShape& e) {
  if (static_cast<int>(t.shape.size()) != e.n_dims) return false;
  for (int i = 0; i < e.n_dims; ++i) {
    if (t.shape[i] != e.dims[i]) return false;
  }
  return true;
}

}  // namespace

// Resolves names to views; keeps converted vectors alive in the ModelWeights.
class WeightLoader {
 public:
  WeightLoader(const gguf::GgufFile& file, ModelWeights* weights)
      : file_(file), weights_(weights) {}

  StatusOr<const gguf::TensorInfo*> Find(const std::string& name, const ExpectedShape& shape) {
    const gguf::TensorInfo* t = file_.FindTensor(name);
    if (t == nullptr) return InvalidArgument("missing tensor '" + name + "'");
    read_.insert(t);
    if (!ShapeMatches(*t, shape)) {
      return InvalidArgument("tensor '" + name + "' has shape " + ShapeString(t->shape) +
                             ", expected " + ShapeString(shape));
    }
    return t;
  }

  StatusOr<kernels::WeightMatrix> Matrix(const std::string& name, const ExpectedShape& shape) {
    RADIXLM_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, Find(name, shape));
    const int64_t cols = shape.dims[0];
    const int64_t rows = shape.dims[1];
    if (!kernels::IsSupportedType(t->type) || kernels::GetVecDotFn(t->type) == nullptr) {
      return Unimplemented("tensor '" + name + "' has type " + TypeName(t->type) +
                           ", which the matmul kernels do not support");
    }
    if (!kernels::IsRowSizeValid(t->type, cols)) {
      return InvalidArgument("tensor '" + name + "': row length " + std::to_string(cols) +
                             " is not a multiple of the " + TypeName(t->type) + " block size");
    }
    if (kernels::RowBytes(t->type, cols) * static_cast<size_t>(rows) > t->size_bytes) {
      return InvalidArgument("tensor '" + name + "' is truncated");
    }
    return kernels::MakeWeightMatrix(t->type, t->data, rows, cols);
  }

  // One matrix per expert: views of the consecutive [rows, cols] slices of a 3-D tensor.
  StatusOr<std::vector<kernels::WeightMatrix>> Experts(const std::string& name,
                                                       const ExpectedShape& shape) {
    RADIXLM_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, Find(name, shape));
    const int64_t cols = shape.dims[0];
    const int64_t rows = shape.dims[1];
    const int64_t n = shape.dims[2];
    if (!kernels::IsSupportedType(t->type) || kernels::GetVecDotFn(t->type) == nullptr) {
      return Unimplemented("tensor '" + name + "' has type " + TypeName(t->type) +
                           ", which the matmul kernels do not support");
    }
    if (!kernels::IsRowSizeValid(t->type, cols)) {
      return InvalidArgument("tensor '" + name + "': row length " + std::to_string(cols) +
                             " is not a multiple of the " + TypeName(t->type) + " block size");
    }
    const size_t matrix_bytes = kernels::RowBytes(t->type, cols) * static_cast<size_t>(rows);
    if (matrix_bytes * static_cast<size_t>(n) > t->size_bytes) {
      return InvalidArgument("tensor '" + name + "' is truncated");
    }
    std::vector<kernels::WeightMatrix> out;
    out.reserve(n);
    for (int64_t e = 0; e < n; ++e) {
      out.push_back(kernels::MakeWeightMatrix(t->type, t->data + e * matrix_bytes, rows, cols));
    }
    return out;
  }

  // A 1-D tensor as floats (copied; converted from other types).
  StatusOr<const float*> Vector(const std::string& name, int64_t n) {
    ExpectedShape shape;
    shape.dims[0] = n;
    shape.n_dims = 1;
    return Vector(name, shape);
  }
  // A small tensor of any shape (a convolution's taps) as floats, the same way.
  StatusOr<const float*> Vector(const std::string& name, const ExpectedShape& shape) {
    int64_t n = 1;
    for (int d = 0; d < shape.n_dims; ++d) n *= shape.dims[d];
    RADIXLM_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, Find(name, shape));
    if (t->type == gguf::GgmlType::kF32) {
      if (t->size_bytes < static_cast<uint64_t>(n) * sizeof(float)) {
        return InvalidArgument("tensor '" + name + "' is truncated");
      }
      // Copied, like the converted types below: read through the mapping on every step, each
      // norm would fault its page back in, and with the page cache's large folios a whole
      // folio around it (megabytes of the file mapped for a few kilobytes of norms).
      auto owned = std::make_unique<float[]>(n);
      std::memcpy(owned.get(), t->data, static_cast<size_t>(n) * sizeof(float));
      const float* view = owned.get();
      weights_->owned_.push_back(std::move(owned));
      weights_->resident_bytes_ += n * static_cast<int64_t>(sizeof(float));
      file_.ReleasePages(t->data, t->size_bytes);
      return view;
    }
    if (!kernels::IsSupportedType(t->type) || !kernels::IsRowSizeValid(t->type, n) ||
        kernels::RowBytes(t->type, n) > t->size_bytes) {
      return InvalidArgument("tensor '" + name + "' has unsupported type " + TypeName(t->type) +
                             " for a vector");
    }
    auto owned = std::make_unique<float[]>(n);
    kernels::DequantizeRow(t->type, t->data, owned.get(), n);
    const float* view = owned.get();
    weights_->owned_.push_back(std::move(owned));
    weights_->resident_bytes_ += n * static_cast<int64_t>(sizeof(float));
    return view;
  }

 private:
  static std::string TypeName(gguf::GgmlType type) {
    auto traits = gguf::GetTypeTraits(type);
    if (traits) return std::string(traits->name);
    std::string id = "type ";
    id += std::to_string(static_cast<uint32_t>(type));
    return id;
  }

  const gguf::GgufFile& file_;
  ModelWeights* weights_;
  std::unordered_set<const gguf::TensorInfo*> read_;  // every tensor Find returned

 public:
  // Unimplemented naming the first "<matrix>.scale" tensor that was not read: llama.cpp
  // multiplies a matrix's product by it (per tensor, or per expert for a stacked one; its
  // NVFP4 and FP8 conversions write them), so a model run without it computes other values.
  Status RefuseUnreadScales(std::string_view arch) const {
    for (const gguf::TensorInfo& t : file_.tensors()) {
      if (!t.name.ends_with(".scale") || read_.contains(&t)) continue;
      return Unimplemented("tensor '" + t.name +
                           "' (a weight scale that llama.cpp multiplies the " +
                           "matrix's product by) is not supported for " + std::string(arch));
    }
    return Status::Ok();
  }
};

StatusOr<std::unique_ptr<ModelWeights>> ModelWeights::Load(const gguf::GgufFile& file,
                                                           const ModelConfig& c,
                                                           const kernels::KernelBackend& backend,
                                                           ThreadPool* pool,
                                                           const LoadProgressFn& on_progress) {
  auto w = std::make_unique<ModelWeights>();
  WeightLoader loader(file, w.get());
  ExpectedShape embd_shape;
  embd_shape.dims[0] = c.hidden_size;
  embd_shape.dims[1] = c.vocab_size;
  embd_shape.n_dims = 2;
  RADIXLM_ASSIGN_OR_RETURN(w->token_embd, loader.Matrix(std::string(kTokenEmbdName), embd_shape));
  if (file.FindTensor(kOutputName) != nullptr) {
    RADIXLM_ASSIGN_OR_RETURN(w->output, loader.Matrix(std::string(kOutputName), embd_shape));
  } else {
    w->output = w->token_embd;
    w->tied_output = true;
  }
  RADIXLM_ASSIGN_OR_RETURN(w->output_norm,
                           loader.Vector(std::string(kOutputNormName), c.hidden_size));
  if (c.has_rope_freq_factors) {
    RADIXLM_ASSIGN_OR_RETURN(w->rope_freqs,
                             loader.Vector(std::string(kRopeFreqsName), c.rope_dims / 2));
  }
  if (c.rope_original_context > 0) {  // LongRoPE: both sets, the model picks by its context
    RADIXLM_ASSIGN_OR_RETURN(w->rope_factors_long,
                             loader.Vector(std::string(kRopeFactorsLongName), c.rope_dims / 2));
    RADIXLM_ASSIGN_OR_RETURN(w->rope_factors_short,
                             loader.Vector(std::string(kRopeFactorsShortName), c.rope_dims / 2));
  }

  if (c.per_layer_input_size > 0) {
    const int64_t all = c.per_layer_input_size * c.n_layers;
    ExpectedShape shape;
    shape.n_dims = 2;
    shape.dims[0] = all;
    shape.dims[1] = c.vocab_size;
    RADIXLM_ASSIGN_OR_RETURN(w->per_layer_token_embd,
                             loader.Matrix(std::string(kPerLayerTokenEmbdName), shape));
    shape.dims[0] = c.hidden_size;
    shape.dims[1] = all;
    RADIXLM_ASSIGN_OR_RETURN(w->per_layer_model_proj,
                             loader.Matrix(std::string(kPerLayerModelProjName), shape));
    RADIXLM_ASSIGN_OR_RETURN(
        w->per_layer_proj_norm,
        loader.Vector(std::string(kPerLayerProjNormName), c.per_layer_input_size));
  }

  RADIXLM_RETURN_IF_ERROR(w->LoadLayers(file, c, /*first_block=*/0, loader));
  RADIXLM_RETURN_IF_ERROR(loader.RefuseUnreadScales(c.arch));
  w->PrepareMatrices(file, backend, pool, on_progress);
  return w;
}

StatusOr<std::unique_ptr<ModelWeights>> ModelWeights::LoadBlocks(
    const gguf::GgufFile& file, const ModelConfig& c, int64_t first_block,
    const kernels::KernelBackend& backend, ThreadPool* pool) {
  auto w = std::make_unique<ModelWeights>();
  WeightLoader loader(file, w.get());
  RADIXLM_RETURN_IF_ERROR(w->LoadLayers(file, c, first_block, loader));
  w->PrepareMatrices(file, backend, pool, nullptr);
  return w;
}

Status ModelWeights::LoadLayers(const gguf::GgufFile& file, const ModelConfig& c,
                                int64_t first_block, WeightLoader& loader) {
  ModelWeights* w = this;
  w->layers.resize(c.n_layers);
  for (int64_t i = 0; i < c.n_layers; ++i) {
    LayerWeights& l = w->layers[i];
    const LayerTensorNeeds needs = static_cast<int64_t>(c.layer_tensors.size()) == c.n_layers
                                       ? c.layer_tensors[i]
                                       : StandardLayerTensors(c);
    for (const LayerSlot& slot : kLayerSlots) {
      const TensorNeed need = needs[slot.tensor];
      if (need == TensorNeed::kAbsent) continue;
      const std::string name = LayerTensorName(first_block + i, slot.tensor);
      if (need == TensorNeed::kOptional && file.FindTensor(name) == nullptr) continue;
      const ExpectedShape shape = LayerTensorShape(c, slot.tensor, i);
      if (slot.matrix != nullptr) {
        RADIXLM_ASSIGN_OR_RETURN(l.*slot.matrix, loader.Matrix(name, shape));
      } else {
        RADIXLM_ASSIGN_OR_RETURN(l.*slot.vector, loader.Vector(name, shape));
      }
    }
    for (const ExpertSlot& slot : kExpertSlots) {
      if (needs[slot.tensor] == TensorNeed::kAbsent) continue;
      const std::string name = LayerTensorName(first_block + i, slot.tensor);
      if (needs[slot.tensor] == TensorNeed::kOptional && file.FindTensor(name) == nullptr) continue;
      RADIXLM_ASSIGN_OR_RETURN(l.*slot.experts,
                               loader.Experts(name, LayerTensorShape(c, slot.tensor, i)));
    }
    SplitFused(c, i, l);
  }
  return Status::Ok();
}

void ModelWeights::PrepareMatrices(const gguf::GgufFile& file,
                                   const kernels::KernelBackend& backend, ThreadPool* pool,
                                   const LoadProgressFn& on_progress) {
  const auto start = std::chrono::steady_clock::now();
  auto matrix_bytes = [](const kernels::WeightMatrix& m) {
    return static_cast<int64_t>(m.row_bytes) * m.rows;
  };
  LoadProgress progress;
  progress.layers_total = static_cast<int64_t>(layers.size());
  progress.bytes_total = matrix_bytes(output) + matrix_bytes(per_layer_model_proj);
  for (LayerWeights& l : layers) {
    for (kernels::WeightMatrix* m : LayerMatrices(l)) progress.bytes_total += matrix_bytes(*m);
    for (kernels::WeightMatrix* m : ExpertMatrices(l)) progress.bytes_total += matrix_bytes(*m);
    for (kernels::WeightMatrix* m : HeadMatrices(l)) progress.bytes_total += matrix_bytes(*m);
  }
  auto report = [&] {
    if (!on_progress) return;
    progress.elapsed_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    on_progress(progress);
  };
  auto prepare = [&](kernels::WeightMatrix& m, bool release = true) {
    if (m.data == nullptr) return;  // a tensor this layer does not have
    if (auto packed = backend.prepare_weights(&m, pool)) {
      resident_bytes_ += static_cast<int64_t>(packed->group_bytes) * packed->groups;
      prepared_.push_back(std::move(packed));
      // The forward pass reads the packed copy only: the source's pages can go.
      if (release) {
        released_bytes_ += static_cast<int64_t>(file.ReleasePages(m.data, matrix_bytes(m)));
      }
    } else {
      resident_bytes_ += matrix_bytes(m);  // read from the mapping on every step
    }
    progress.bytes_done += matrix_bytes(m);
  };
  // token_embd stays as it is: it is only read row by row (embed). A tied output head packed
  // from it releases its pages, and the rows are then read from the file (embed_reads_file):
  // read through the mapping, each lookup would map its page and its neighbours back in.
  prepare(output);
  embed_reads_file = tied_output && output.packed != nullptr && file.is_mapped();
  prepare(per_layer_model_proj);  // (per_layer_token_embd, like token_embd, is read by row)
  report();
  for (LayerWeights& l : layers) {
    for (kernels::WeightMatrix* m : ExpertMatrices(l)) {
      prepare(*m, /*release=*/m == &l.gate_inp);
      report();
    }
    // Each expert's slice is packed on its own, the stacked tensor's pages released at once
    // (neighbouring slices share the pages at their ends).
    // (Halves of a fused ffn_gate_up_exps: the whole stacked tensor once both are packed.)
    const bool fused = !l.gate_up_exps.empty();
    for (const auto* experts : {&l.gate_exps, &l.up_exps, &l.down_exps}) {
      if (experts->empty() || experts->front().packed == nullptr) continue;
      if (fused && experts != &l.down_exps) continue;
      const int64_t stacked = matrix_bytes(experts->front()) * std::ssize(*experts);
      released_bytes_ += static_cast<int64_t>(file.ReleasePages(experts->front().data, stacked));
    }
    if (fused && l.gate_exps.front().packed != nullptr && l.up_exps.front().packed != nullptr) {
      const int64_t stacked = matrix_bytes(l.gate_up_exps.front()) * std::ssize(l.gate_up_exps);
      released_bytes_ +=
          static_cast<int64_t>(file.ReleasePages(l.gate_up_exps.front().data, stacked));
    }
    // MLA's per-head slices, likewise (small: one report for all of them).
    for (kernels::WeightMatrix* m : HeadMatrices(l)) prepare(*m, /*release=*/false);
    for (const auto* heads : {&l.wk_b, &l.wv_b}) {
      if (heads->empty() || heads->front().packed == nullptr) continue;
      const int64_t stacked = matrix_bytes(heads->front()) * std::ssize(*heads);
      released_bytes_ += static_cast<int64_t>(file.ReleasePages(heads->front().data, stacked));
    }
    // One report per matrix the layer has (a family's optional ones are absent elsewhere).
    std::vector<kernels::WeightMatrix*> matrices;
    for (kernels::WeightMatrix* m : LayerMatrices(l)) {
      if (m->data != nullptr) matrices.push_back(m);
    }
    for (size_t i = 0; i < matrices.size(); ++i) {
      prepare(*matrices[i]);
      if (i + 1 == matrices.size()) ++progress.layers_done;
      report();
    }
    if (matrices.empty()) {
      ++progress.layers_done;
      report();
    }
  }
  progress.done = true;
  report();
}

}  // namespace radixlm::model
