#include "model/encoder/encoder_model.h"

#include <cmath>
#include <numeric>
#include <unordered_set>

#include "kernels/attention.h"
#include "kernels/backend.h"
#include "kernels/dot.h"
#include "kernels/ops.h"
#include "kernels/quant.h"
#include "kernels/rope.h"

namespace radixlm::model {

struct EncoderModel::Layer {
  kernels::WeightMatrix wq, wk, wv, wqkv, wo, up, gate, down;
  const float* bq = nullptr;  // biases: null where the file has none
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* bo = nullptr;
  const float* b_up = nullptr;
  const float* b_down = nullptr;
  const float* attn_norm_w = nullptr;  // attn_output_norm
  const float* attn_norm_b = nullptr;
  const float* out_norm_w = nullptr;  // layer_output_norm
  const float* out_norm_b = nullptr;
};

namespace {

constexpr std::string_view kEncoderArchitectures[] = {"bert", "nomic-bert"};

std::string Blk(int64_t layer, std::string_view suffix) {
  return "blk." + std::to_string(layer) + "." + std::string(suffix);
}

StatusOr<int64_t> PositiveKey(const gguf::GgufFile& f, const std::string& key) {
  auto v = f.GetInt(key);
  if (!v.ok())
    return InvalidArgument("model metadata: " + v.status().message() + " ('" + key + "')");
  if (*v <= 0) return InvalidArgument("model metadata: '" + key + "' must be positive");
  return *v;
}

// y[r, :] += b for n rows of width w (b may be null).
void AddBias(float* y, const float* b, int64_t n, int64_t w) {
  if (b == nullptr) return;
  for (int64_t r = 0; r < n; ++r) kernels::Add(y + r * w, b, y + r * w, w);
}

// ggml_norm then * w + b, per row: mean and variance in float as ggml's CPU norm (sums in
// ggml_float = double).
void LayerNorm(float* x, const float* w, const float* b, int64_t n, int64_t width, float eps) {
  for (int64_t r = 0; r < n; ++r) {
    float* row = x + r * width;
    double sum = 0.0;
    for (int64_t i = 0; i < width; ++i) sum += row[i];
    const float mean = static_cast<float>(sum / static_cast<double>(width));
    double sum2 = 0.0;
    for (int64_t i = 0; i < width; ++i) {
      row[i] -= mean;
      sum2 += static_cast<double>(row[i]) * row[i];
    }
    const float variance = static_cast<float>(sum2 / static_cast<double>(width));
    const float scale = 1.0f / std::sqrt(variance + eps);
    for (int64_t i = 0; i < width; ++i) row[i] = row[i] * scale * w[i] + b[i];
  }
}

}  // namespace

bool IsEncoderArchitecture(std::string_view architecture) {
  for (std::string_view a : kEncoderArchitectures) {
    if (a == architecture) return true;
  }
  return false;
}

EncoderModel::~EncoderModel() = default;

StatusOr<std::unique_ptr<EncoderModel>> EncoderModel::FromGguf(std::unique_ptr<gguf::GgufFile> file,
                                                               const Options& options) {
  std::unique_ptr<EncoderModel> m(new EncoderModel());
  m->file_ = std::move(file);
  const gguf::GgufFile& f = *m->file_;
  EncoderConfig& c = m->config_;
  RADIXLM_ASSIGN_OR_RETURN(c.arch, f.GetString("general.architecture"));
  if (!IsEncoderArchitecture(c.arch)) {
    return InvalidArgument("'" + c.arch + "' is not an encoder architecture (bert, nomic-bert)");
  }
  const std::string p = c.arch + ".";
  RADIXLM_ASSIGN_OR_RETURN(c.n_layers, PositiveKey(f, p + "block_count"));
  RADIXLM_ASSIGN_OR_RETURN(c.hidden_size, PositiveKey(f, p + "embedding_length"));
  RADIXLM_ASSIGN_OR_RETURN(c.ffn_size, PositiveKey(f, p + "feed_forward_length"));
  RADIXLM_ASSIGN_OR_RETURN(c.n_heads, PositiveKey(f, p + "attention.head_count"));
  RADIXLM_ASSIGN_OR_RETURN(c.context_length, PositiveKey(f, p + "context_length"));
  RADIXLM_ASSIGN_OR_RETURN(const int64_t kv_heads,
                           f.GetIntOr(p + "attention.head_count_kv", c.n_heads));
  if (kv_heads != c.n_heads) {
    return Unimplemented("'" + p +
                         "attention.head_count_kv' differs from head_count: grouped "
                         "attention in an encoder is not supported");
  }
  if (c.hidden_size % c.n_heads != 0) {
    return InvalidArgument("'" + p + "embedding_length' is not a multiple of the head count");
  }
  c.head_dim = c.hidden_size / c.n_heads;
  RADIXLM_ASSIGN_OR_RETURN(const double eps, f.GetFloat(p + "attention.layer_norm_epsilon"));
  c.norm_eps = static_cast<float>(eps);
  RADIXLM_ASSIGN_OR_RETURN(c.pooling_type, f.GetIntOr(p + "pooling_type", 0));
  c.rope = c.arch == "nomic-bert";
  c.gated_ffn = c.arch == "nomic-bert";
  if (c.rope) {
    RADIXLM_ASSIGN_OR_RETURN(const double base, f.GetFloatOr(p + "rope.freq_base", 10000.0));
    c.rope_base = static_cast<float>(base);
    m->rope_ = std::make_unique<RotaryEmbedding>(
        RopeParams{.layout = RopeLayout::kNeox, .head_dim = c.head_dim, .base = c.rope_base});
  }
  // llama.cpp refuses a BERT file that does not say how many token types it has.
  RADIXLM_ASSIGN_OR_RETURN(const int64_t n_types, f.GetIntOr("tokenizer.ggml.token_type_count", 0));
  if (n_types <= 0) {
    return InvalidArgument("model metadata: '" + c.arch +
                           "' needs tokenizer.ggml.token_type_count");
  }
  RADIXLM_RETURN_IF_ERROR(m->LoadWeights());
  m->pool_ = std::make_unique<ThreadPool>(options.n_threads);
  m->PrepareMatrices();
  return m;
}

Status EncoderModel::LoadWeights() {
  const gguf::GgufFile& f = *file_;
  const EncoderConfig& c = config_;
  auto matrix = [&](const std::string& name, int64_t cols, int64_t rows,
                    kernels::WeightMatrix* out) -> Status {
    const gguf::TensorInfo* t = f.FindTensor(name);
    if (t == nullptr) return InvalidArgument("missing tensor '" + name + "'");
    if (t->shape.size() != 2 || t->shape[0] != cols || t->shape[1] != rows) {
      return InvalidArgument("tensor '" + name + "' has the wrong shape (expected [" +
                             std::to_string(cols) + ", " + std::to_string(rows) + "])");
    }
    if (!kernels::IsSupportedType(t->type) || kernels::GetVecDotFn(t->type) == nullptr ||
        !kernels::IsRowSizeValid(t->type, cols)) {
      return Unimplemented("tensor '" + name + "' has a type the matmul kernels do not support");
    }
    *out = kernels::MakeWeightMatrix(t->type, t->data, rows, cols);
    return Status::Ok();
  };
  // 1-D F32 vectors (norm weights, biases); optional ones stay null when absent.
  auto vec = [&](const std::string& name, int64_t n, bool required, const float** out) -> Status {
    const gguf::TensorInfo* t = f.FindTensor(name);
    if (t == nullptr) {
      return required ? InvalidArgument("missing tensor '" + name + "'") : Status::Ok();
    }
    if (t->type != gguf::GgmlType::kF32 || t->num_elements() != n) {
      return InvalidArgument("tensor '" + name + "' must be F32 of " + std::to_string(n) +
                             " values");
    }
    *out = reinterpret_cast<const float*>(t->data);
    return Status::Ok();
  };
  const int64_t h = c.hidden_size;
  const gguf::TensorInfo* embd = f.FindTensor("token_embd.weight");
  if (embd == nullptr || embd->shape.size() != 2 || embd->shape[0] != h) {
    return InvalidArgument("tensor 'token_embd.weight' is missing or not [" + std::to_string(h) +
                           ", vocab]");
  }
  config_.vocab_size = embd->shape[1];
  RADIXLM_RETURN_IF_ERROR(matrix("token_embd.weight", h, config_.vocab_size, &token_embd_));
  if (const gguf::TensorInfo* types = f.FindTensor("token_types.weight"); types != nullptr) {
    if (types->shape.size() != 2 || types->shape[0] != h) {
      return InvalidArgument("tensor 'token_types.weight' is not [" + std::to_string(h) + ", n]");
    }
    RADIXLM_RETURN_IF_ERROR(matrix("token_types.weight", h, types->shape[1], &token_types_));
    has_token_types_ = true;
  }
  if (!c.rope) {
    RADIXLM_RETURN_IF_ERROR(matrix("position_embd.weight", h, c.context_length, &position_embd_));
  }
  RADIXLM_RETURN_IF_ERROR(vec("token_embd_norm.weight", h, true, &embd_norm_w_));
  RADIXLM_RETURN_IF_ERROR(vec("token_embd_norm.bias", h, true, &embd_norm_b_));
  layers_.resize(c.n_layers);
  for (int64_t i = 0; i < c.n_layers; ++i) {
    Layer& l = layers_[i];
    if (f.FindTensor(Blk(i, "attn_qkv.weight")) != nullptr) {
      RADIXLM_RETURN_IF_ERROR(matrix(Blk(i, "attn_qkv.weight"), h, 3 * h, &l.wqkv));
      if (f.FindTensor(Blk(i, "attn_qkv.bias")) != nullptr) {
        return Unimplemented("tensor '" + Blk(i, "attn_qkv.bias") + "' is not supported");
      }
    } else {
      RADIXLM_RETURN_IF_ERROR(matrix(Blk(i, "attn_q.weight"), h, h, &l.wq));
      RADIXLM_RETURN_IF_ERROR(matrix(Blk(i, "attn_k.weight"), h, h, &l.wk));
      RADIXLM_RETURN_IF_ERROR(matrix(Blk(i, "attn_v.weight"), h, h, &l.wv));
      RADIXLM_RETURN_IF_ERROR(vec(Blk(i, "attn_q.bias"), h, false, &l.bq));
      RADIXLM_RETURN_IF_ERROR(vec(Blk(i, "attn_k.bias"), h, false, &l.bk));
      RADIXLM_RETURN_IF_ERROR(vec(Blk(i, "attn_v.bias"), h, false, &l.bv));
    }
    for (std::string_view refused : {"attn_q_norm.weight", "attn_k_norm.weight",
                                     "attn_norm_2.weight", "ffn_gate_inp.weight"}) {
      if (f.FindTensor(Blk(i, refused)) != nullptr) {
        return Unimplemented("tensor '" + Blk(i, refused) + "' (" + c.arch + ") is not supported");
      }
    }
    RADIXLM_RETURN_IF_ERROR(matrix(Blk(i, "attn_output.weight"), h, h, &l.wo));
    RADIXLM_RETURN_IF_ERROR(vec(Blk(i, "attn_output.bias"), h, false, &l.bo));
    RADIXLM_RETURN_IF_ERROR(vec(Blk(i, "attn_output_norm.weight"), h, true, &l.attn_norm_w));
    RADIXLM_RETURN_IF_ERROR(vec(Blk(i, "attn_output_norm.bias"), h, true, &l.attn_norm_b));
    RADIXLM_RETURN_IF_ERROR(matrix(Blk(i, "ffn_up.weight"), h, c.ffn_size, &l.up));
    RADIXLM_RETURN_IF_ERROR(vec(Blk(i, "ffn_up.bias"), c.ffn_size, false, &l.b_up));
    RADIXLM_RETURN_IF_ERROR(matrix(Blk(i, "ffn_down.weight"), c.ffn_size, h, &l.down));
    RADIXLM_RETURN_IF_ERROR(vec(Blk(i, "ffn_down.bias"), h, false, &l.b_down));
    if (c.gated_ffn) {
      RADIXLM_RETURN_IF_ERROR(matrix(Blk(i, "ffn_gate.weight"), h, c.ffn_size, &l.gate));
    }
    RADIXLM_RETURN_IF_ERROR(vec(Blk(i, "layer_output_norm.weight"), h, true, &l.out_norm_w));
    RADIXLM_RETURN_IF_ERROR(vec(Blk(i, "layer_output_norm.bias"), h, true, &l.out_norm_b));
  }
  return Status::Ok();
}

void EncoderModel::PrepareMatrices() {
  const kernels::KernelBackend& backend = kernels::CpuBackend();
  const std::unordered_set<const void*> matrices = [&] {
    std::unordered_set<const void*> d;
    for (Layer& l : layers_) {
      for (kernels::WeightMatrix* w :
           {&l.wq, &l.wk, &l.wv, &l.wqkv, &l.wo, &l.up, &l.gate, &l.down}) {
        if (w->data != nullptr) d.insert(w->data);
      }
    }
    return d;
  }();
  for (const gguf::TensorInfo& t : file_->tensors()) {
    if (matrices.count(t.data) == 0) resident_bytes_ += static_cast<int64_t>(t.size_bytes);
  }
  for (Layer& l : layers_) {
    for (kernels::WeightMatrix* w :
         {&l.wq, &l.wk, &l.wv, &l.wqkv, &l.wo, &l.up, &l.gate, &l.down}) {
      if (w->data == nullptr) continue;
      const size_t bytes = w->row_bytes * static_cast<size_t>(w->rows);
      if (std::unique_ptr<kernels::PackedWeights> p = backend.prepare_weights(w, pool_.get())) {
        resident_bytes_ += static_cast<int64_t>(p->group_bytes) * p->groups;
        prepared_.push_back(std::move(p));
        file_->ReleasePages(w->data, bytes);  // the GEMM reads the packed copy only
      } else {
        resident_bytes_ += static_cast<int64_t>(bytes);
      }
    }
  }
}

int64_t EncoderModel::weights_bytes() const { return resident_bytes_; }

Status EncoderModel::Forward(std::span<const std::span<const int32_t>> sequences,
                             std::vector<float>* hidden) {
  const EncoderConfig& c = config_;
  const int64_t h = c.hidden_size;
  int64_t n = 0;
  for (std::span<const int32_t> s : sequences) {
    if (s.empty()) return InvalidArgument("an encoder sequence must have at least one token");
    if (static_cast<int64_t>(s.size()) > c.context_length) {
      return InvalidArgument("the input has " + std::to_string(s.size()) +
                             " tokens, more than the model's context of " +
                             std::to_string(c.context_length));
    }
    for (int32_t id : s) {
      if (id < 0 || id >= c.vocab_size) {
        return InvalidArgument("token id " + std::to_string(id) + " is outside the vocabulary");
      }
    }
    n += static_cast<int64_t>(s.size());
  }
  x_.resize(n * h);
  positions_.resize(n);
  ids_.clear();
  for (std::span<const int32_t> s : sequences) {
    for (size_t i = 0; i < s.size(); ++i) {
      ids_.push_back(s[i]);
      positions_[ids_.size() - 1] = static_cast<int64_t>(i);
    }
  }
  kernels::GetRows(token_embd_, ids_.data(), n, x_.data());
  std::vector<float>& row = row_;
  row.resize(h);
  if (has_token_types_) {  // token type 0 ("sentence A") for every token, as llama.cpp
    const int32_t zero = 0;
    kernels::GetRows(token_types_, &zero, 1, row.data());
    for (int64_t t = 0; t < n; ++t)
      kernels::Add(x_.data() + t * h, row.data(), x_.data() + t * h, h);
  }
  if (!c.rope) {
    for (int64_t t = 0; t < n; ++t) {
      const int32_t pos = static_cast<int32_t>(positions_[t]);
      kernels::GetRows(position_embd_, &pos, 1, row.data());
      // llama.cpp adds the position row to (token + type): pos + inp.
      kernels::Add(row.data(), x_.data() + t * h, x_.data() + t * h, h);
    }
  } else {
    cos_.resize(n * (c.head_dim / 2));
    sin_.resize(n * (c.head_dim / 2));
    rope_->ComputeTables(positions_.data(), n, cos_.data(), sin_.data());
  }
  LayerNorm(x_.data(), embd_norm_w_, embd_norm_b_, n, h, c.norm_eps);
  for (const Layer& layer : layers_) RunLayer(layer, sequences, n);
  hidden->assign(x_.begin(), x_.begin() + n * h);
  return Status::Ok();
}

void EncoderModel::RunLayer(const Layer& l, std::span<const std::span<const int32_t>> sequences,
                            int64_t n) {
  const EncoderConfig& c = config_;
  const int64_t h = c.hidden_size;
  ThreadPool* pool = pool_.get();
  q_.resize(n * h);
  k_.resize(n * h);
  v_.resize(n * h);
  if (l.wqkv.data != nullptr) {
    qkv_.resize(n * 3 * h);
    kernels::MatMul(l.wqkv, x_.data(), n, qkv_.data(), pool);
    for (int64_t t = 0; t < n; ++t) {
      const float* r = qkv_.data() + t * 3 * h;
      std::copy(r, r + h, q_.data() + t * h);
      std::copy(r + h, r + 2 * h, k_.data() + t * h);
      std::copy(r + 2 * h, r + 3 * h, v_.data() + t * h);
    }
  } else {
    const kernels::MatMulOutput outs[] = {
        {&l.wq, q_.data()}, {&l.wk, k_.data()}, {&l.wv, v_.data()}};
    kernels::MatMulMulti(outs, x_.data(), n, pool);
    AddBias(q_.data(), l.bq, n, h);
    AddBias(k_.data(), l.bk, n, h);
    AddBias(v_.data(), l.bv, n, h);
  }
  if (c.rope) {
    kernels::ApplyRopeTables(q_.data(), 0, n, c.n_heads, c.head_dim, true, cos_.data(),
                             sin_.data());
    kernels::ApplyRopeTables(k_.data(), 0, n, c.n_heads, c.head_dim, true, cos_.data(),
                             sin_.data());
  }
  // Attention per sequence over its own K/V (F16 rows, as the decoder's cache), every query
  // placed at the sequence's last position so that the causal kernel masks nothing.
  attn_.resize(n * h);
  k_cache_.resize(n * h);
  v_cache_.resize(n * h);
  kernels::KvLayerView kv{
      .dtype = kernels::KvDtype::kF16, .k = k_cache_.data(), .v = v_cache_.data(), .row_elems = h};
  std::vector<int32_t>& slots = slots_;
  slots.resize(n);
  std::iota(slots.begin(), slots.end(), 0);
  kernels::StoreKvRows(kv, slots.data(), n, k_.data(), v_.data());
  std::vector<int64_t>& last_pos = last_pos_;
  last_pos.resize(n);
  std::vector<kernels::AttentionSequence>& seqs = seqs_;
  seqs.clear();
  int64_t begin = 0;
  for (std::span<const int32_t> s : sequences) {
    const int64_t len = static_cast<int64_t>(s.size());
    std::fill(last_pos.begin() + begin, last_pos.begin() + begin + len, len - 1);
    seqs.push_back(kernels::AttentionSequence{.q = q_.data() + begin * h,
                                              .q_pos = last_pos.data() + begin,
                                              .n_q = static_cast<int>(len),
                                              .kv_slots = slots.data() + begin,
                                              .n_kv = static_cast<int>(len),
                                              .out = attn_.data() + begin * h});
    begin += len;
  }
  const kernels::AttentionParams params{.n_heads = static_cast<int>(c.n_heads),
                                        .n_kv_heads = static_cast<int>(c.n_heads),
                                        .head_dim = static_cast<int>(c.head_dim),
                                        .scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim))};
  kernels::AttentionForBatch(params, kv, seqs, pool);

  proj_.resize(n * h);
  kernels::MatMul(l.wo, attn_.data(), n, proj_.data(), pool);
  AddBias(proj_.data(), l.bo, n, h);
  kernels::Add(proj_.data(), x_.data(), x_.data(), n * h);
  LayerNorm(x_.data(), l.attn_norm_w, l.attn_norm_b, n, h, c.norm_eps);

  up_.resize(n * c.ffn_size);
  if (c.gated_ffn) {
    gate_.resize(n * c.ffn_size);
    const kernels::MatMulOutput outs[] = {{&l.gate, gate_.data()}, {&l.up, up_.data()}};
    kernels::MatMulMulti(outs, x_.data(), n, pool);
    kernels::SwiGlu(gate_.data(), up_.data(), up_.data(), n * c.ffn_size);
  } else {
    kernels::MatMul(l.up, x_.data(), n, up_.data(), pool);
    AddBias(up_.data(), l.b_up, n, c.ffn_size);
    kernels::GeluTanh(up_.data(), up_.data(), n * c.ffn_size);
  }
  kernels::MatMul(l.down, up_.data(), n, proj_.data(), pool);
  AddBias(proj_.data(), l.b_down, n, h);
  kernels::Add(proj_.data(), x_.data(), x_.data(), n * h);
  LayerNorm(x_.data(), l.out_norm_w, l.out_norm_b, n, h, c.norm_eps);
}

}  // namespace radixlm::model
