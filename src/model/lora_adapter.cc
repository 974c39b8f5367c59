#include "model/lora_adapter.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <string_view>
#include <utility>

#include "kernels/quant.h"

namespace radixlm::model {

namespace {

constexpr std::string_view kLoraSuffixA = ".lora_a";
constexpr std::string_view kLoraSuffixB = ".lora_b";

struct LoraTargetNames {
  const char* module;
  const char* stem;
};
constexpr LoraTargetNames kLoraTargets[kNumLoraTargets] = {
    {"q_proj", "attn_q"},      {"k_proj", "attn_k"},      {"v_proj", "attn_v"},
    {"o_proj", "attn_output"}, {"gate_proj", "ffn_gate"}, {"up_proj", "ffn_up"},
    {"down_proj", "ffn_down"},
};

const kernels::WeightMatrix& LoraBaseMatrix(const LayerWeights& w, LoraTarget t) {
  switch (t) {
    case LoraTarget::kQ:
      return w.wq;
    case LoraTarget::kK:
      return w.wk;
    case LoraTarget::kV:
      return w.wv;
    case LoraTarget::kO:
      return w.wo;
    case LoraTarget::kGate:
      return w.gate;
    case LoraTarget::kUp:
      return w.up;
    case LoraTarget::kDown:
    case LoraTarget::kCount:
      break;
  }
  return w.down;
}

// "blk.<layer>.<stem>.weight" → (layer, target); false for any other name.
bool ParseLoraBaseName(std::string_view name, int64_t* layer, LoraTarget* target) {
  constexpr std::string_view kBlk = "blk.";
  constexpr std::string_view kWeight = ".weight";
  if (name.substr(0, kBlk.size()) != kBlk || name.size() <= kBlk.size() + kWeight.size() ||
      name.substr(name.size() - kWeight.size()) != kWeight) {
    return false;
  }
  std::string_view rest = name.substr(kBlk.size(), name.size() - kBlk.size() - kWeight.size());
  const size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot > 6) return false;
  int64_t l = 0;
  for (char ch : rest.substr(0, dot)) {
    if (ch < '0' || ch > '9') return false;
    l = l * 10 + (ch - '0');
  }
  const std::string_view stem = rest.substr(dot + 1);
  for (int t = 0; t < kNumLoraTargets; ++t) {
    if (stem == kLoraTargets[t].stem) {
      *layer = l;
      *target = static_cast<LoraTarget>(t);
      return true;
    }
  }
  return false;
}

std::string LoraShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Why layer `layer` cannot take an adapter on target t, or "" when it can.
std::string LoraUnsupportedReason(const ModelConfig& c, const LayerWeights& w, int64_t layer,
                                  LoraTarget t) {
  const bool attention =
      t == LoraTarget::kQ || t == LoraTarget::kK || t == LoraTarget::kV || t == LoraTarget::kO;
  if (attention) {
    if (c.IsLinearLayer(layer)) return "a linear-attention layer";
    if (c.IsMla()) return "latent (MLA) attention";
    if (c.attn_output_gate) return "gated attention";
    if (t != LoraTarget::kO &&
        (w.wqkv.data != nullptr ||
         (static_cast<size_t>(layer) < c.layer_tensors.size() &&
          c.layer_tensors[layer][LayerTensor::kAttnQkv] != TensorNeed::kAbsent))) {
      return "fused attn_qkv";
    }
  } else if (!w.gate_exps.empty()) {
    return "a mixture-of-experts FFN";
  } else if (w.gate.data == nullptr ||
             (static_cast<size_t>(layer) < c.layer_tensors.size() &&
              c.layer_tensors[layer][LayerTensor::kFfnGate] == TensorNeed::kAbsent)) {
    return "a fused gate-up FFN (ffn_up holds the gate too)";
  }
  if (LoraBaseMatrix(w, t).data == nullptr) return "no such matrix in the base model";
  return "";
}

// A 64-bit hash of bytes, 8 at a time, chained from `h` (identity(): not cryptographic, only
// collision-resistant enough that two different adapters never share KV by accident).
uint64_t HashBytes(uint64_t h, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  auto mix = [&h](uint64_t w) {
    h = (h ^ (w * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, 8);
    mix(w);
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p + i, n - i);
  mix(tail ^ (static_cast<uint64_t>(n) << 56));
  return h;
}

// What the adapter computes: alpha, and every adapted matrix's name, types, shapes and bytes.
uint64_t LoraContentIdentity(
    double alpha,
    const std::map<std::string, std::pair<const gguf::TensorInfo*, const gguf::TensorInfo*>>&
        pairs) {
  uint64_t h = HashBytes(0x4c6f5241ull /* "LoRA" */, &alpha, sizeof(alpha));
  for (const auto& [name, pair] : pairs) {
    h = HashBytes(h, name.data(), name.size());
    for (const gguf::TensorInfo* t : {pair.first, pair.second}) {
      const auto type = static_cast<int64_t>(t->type);
      h = HashBytes(h, &type, sizeof(type));
      h = HashBytes(h, t->shape.data(), t->shape.size() * sizeof(int64_t));
      h = HashBytes(h, t->data, t->size_bytes);
    }
  }
  h ^= h >> 29;
  return h != 0 ? h : 1;  // 0 stands for the base model
}

}  // namespace

const char* LoraTargetModuleName(LoraTarget t) { return kLoraTargets[static_cast<int>(t)].module; }
const char* LoraTargetTensorStem(LoraTarget t) { return kLoraTargets[static_cast<int>(t)].stem; }

StatusOr<std::unique_ptr<LoraAdapter>> LoraAdapter::Load(const std::string& path,
                                                         const ModelConfig& config,
                                                         const ModelWeights& weights,
                                                         const LoraLoadOptions& options) {
  auto file = gguf::GgufFile::Open(path);
  if (!file.ok()) {
    return InvalidArgument("LoRA adapter '" + path + "': " + file.status().message());
  }
  auto adapter = FromGguf(std::move(file).value(), config, weights, options);
  if (!adapter.ok()) {
    return Status(adapter.status().code(),
                  "LoRA adapter '" + path + "': " + adapter.status().message());
  }
  return adapter;
}

StatusOr<std::unique_ptr<LoraAdapter>> LoraAdapter::FromGguf(std::unique_ptr<gguf::GgufFile> file,
                                                             const ModelConfig& config,
                                                             const ModelWeights& weights,
                                                             const LoraLoadOptions& options) {
  RADIXLM_ASSIGN_OR_RETURN(std::string general_type, file->GetStringOr("general.type", ""));
  if (general_type != "adapter") {
    return InvalidArgument("general.type is '" + general_type + "', expected 'adapter'");
  }
  RADIXLM_ASSIGN_OR_RETURN(std::string adapter_type, file->GetStringOr("adapter.type", ""));
  if (adapter_type != "lora") {
    return InvalidArgument("adapter.type is '" + adapter_type + "', expected 'lora'");
  }
  RADIXLM_ASSIGN_OR_RETURN(std::string arch, file->GetStringOr("general.architecture", ""));
  if (arch != config.arch) {
    return InvalidArgument("general.architecture is '" + arch + "' but the base model is '" +
                           config.arch + "'");
  }
  if (file->Has("adapter.alora.invocation_tokens")) {
    return Unimplemented("activated LoRA (adapter.alora.invocation_tokens) is not supported");
  }
  RADIXLM_ASSIGN_OR_RETURN(double alpha, file->GetFloatOr("adapter.lora.alpha", 0.0));

  auto adapter = std::unique_ptr<LoraAdapter>(new LoraAdapter());
  adapter->alpha_ = static_cast<float>(alpha);
  adapter->layers_.resize(static_cast<size_t>(config.n_layers));

  // Pair every lora_a with its lora_b by the base tensor's name.
  std::map<std::string, std::pair<const gguf::TensorInfo*, const gguf::TensorInfo*>> pairs;
  for (const gguf::TensorInfo& t : file->tensors()) {
    const std::string_view name = t.name;
    const bool is_a = name.ends_with(kLoraSuffixA);
    if (!is_a && !name.ends_with(kLoraSuffixB)) {
      return InvalidArgument("tensor '" + t.name + "' is neither a .lora_a nor a .lora_b");
    }
    auto& pair = pairs[std::string(name.substr(0, name.size() - kLoraSuffixA.size()))];
    (is_a ? pair.first : pair.second) = &t;
  }
  if (pairs.empty()) return InvalidArgument("the adapter has no lora_a / lora_b tensors");

  for (const auto& [base_name, pair] : pairs) {
    const std::string where = "'" + base_name + "': ";
    if (pair.first == nullptr || pair.second == nullptr) {
      return InvalidArgument(where + "has only one of lora_a and lora_b");
    }
    int64_t layer = 0;
    LoraTarget target = LoraTarget::kQ;
    if (!ParseLoraBaseName(base_name, &layer, &target)) {
      return Unimplemented(where +
                           "LoRA is applied to attn_q/k/v/output and ffn_gate/up/down "
                           "of the layers only");
    }
    if (layer >= config.n_layers) {
      return InvalidArgument(where + "layer " + std::to_string(layer) + " but the base model has " +
                             std::to_string(config.n_layers));
    }
    if (!options.allowed_targets[static_cast<int>(target)]) {
      return InvalidArgument(where + "target module " + LoraTargetModuleName(target) +
                             " is not among --lora-target-modules");
    }
    const LayerWeights& lw = weights.layers[static_cast<size_t>(layer)];
    const std::string reason = LoraUnsupportedReason(config, lw, layer, target);
    if (!reason.empty()) return Unimplemented(where + "cannot adapt " + reason);
    const gguf::TensorInfo& a = *pair.first;
    const gguf::TensorInfo& b = *pair.second;
    const kernels::WeightMatrix& base = LoraBaseMatrix(lw, target);
    if (a.shape.size() != 2 || b.shape.size() != 2 || a.shape[0] != base.cols ||
        b.shape[1] != base.rows || a.shape[1] != b.shape[0] || a.shape[1] <= 0) {
      return InvalidArgument(where + "lora_a " + LoraShapeString(a.shape) + " and lora_b " +
                             LoraShapeString(b.shape) + " do not fit the base matrix [" +
                             std::to_string(base.cols) + ", " + std::to_string(base.rows) +
                             "] (expected lora_a [in, rank], lora_b [rank, out])");
    }
    const int64_t rank = a.shape[1];
    if (options.max_rank > 0 && rank > options.max_rank) {
      return InvalidArgument(where + "rank " + std::to_string(rank) + " exceeds --max-lora-rank " +
                             std::to_string(options.max_rank));
    }
    if (a.type != b.type) return InvalidArgument(where + "lora_a and lora_b differ in type");
    if (a.type != gguf::GgmlType::kF32 && a.type != gguf::GgmlType::kF16 &&
        a.type != gguf::GgmlType::kQ8_0) {
      return Unimplemented(where + "type " + std::string(gguf::GgmlTypeName(a.type)) +
                           " (LoRA tensors must be F32, F16 or Q8_0)");
    }
    if (a.type == gguf::GgmlType::kQ8_0 && (base.cols % 32 != 0 || rank % 32 != 0)) {
      return InvalidArgument(where + "Q8_0 needs in and rank multiples of 32");
    }
    LoraMatrix m;
    m.rank = rank;
    m.in = base.cols;
    m.out = base.rows;
    m.scale = alpha != 0.0 ? static_cast<float>(alpha) / static_cast<float>(rank) : 1.0f;
    m.type = a.type == gguf::GgmlType::kF16 ? gguf::GgmlType::kF16 : gguf::GgmlType::kF32;
    m.src_a = &a;
    m.src_b = &b;
    adapter->bytes_ += static_cast<int64_t>(
        (a.type == gguf::GgmlType::kQ8_0 ? m.in * rank * sizeof(float) : a.size_bytes) +
        m.out * rank * sizeof(float));
    adapter->layers_[static_cast<size_t>(layer)][static_cast<int>(target)] = m;
    adapter->max_rank_ = std::max(adapter->max_rank_, rank);
    ++adapter->n_matrices_;
  }
  adapter->identity_ = LoraContentIdentity(alpha, pairs);
  adapter->file_ = std::move(file);
  adapter->MakeResident();
  return adapter;
}

void LoraAdapter::MakeResident() const {
  if (resident_) return;
  std::vector<float> row;
  for (auto& layer : layers_) {
    for (LoraMatrix& m : layer) {
      if (m.rank == 0) continue;
      const gguf::TensorInfo& a = *m.src_a;
      const gguf::TensorInfo& b = *m.src_b;
      if (a.type == gguf::GgmlType::kQ8_0) {
        std::vector<float>& f = converted_.emplace_back(a.num_elements());
        kernels::DequantizeRow(a.type, a.data, f.data(), a.num_elements());
        m.a = f.data();
      } else {
        m.a = a.data;
      }
      // B transposed to F32 [rank, out], so B t is rank row-by-scalar additions of contiguous
      // rows (lora_apply.cc) instead of one short dot product per output.
      row.resize(static_cast<size_t>(m.rank));
      std::vector<float>& bt = converted_.emplace_back(m.rank * m.out);
      const size_t b_row_bytes = kernels::RowBytes(b.type, m.rank);
      for (int64_t o = 0; o < m.out; ++o) {
        kernels::DequantizeRow(b.type, b.data + o * b_row_bytes, row.data(), m.rank);
        for (int64_t j = 0; j < m.rank; ++j) bt[j * m.out + o] = row[j];
      }
      m.bt = bt.data();
    }
  }
  resident_ = true;
}

void LoraAdapter::Release() const {
  if (!resident_) return;
  for (auto& layer : layers_) {
    for (LoraMatrix& m : layer) {
      if (m.rank == 0) continue;
      m.a = nullptr;
      m.bt = nullptr;
      for (const gguf::TensorInfo* t : {m.src_a, m.src_b})
        file_->ReleasePages(t->data, t->size_bytes);
    }
  }
  converted_.clear();
  converted_.shrink_to_fit();
  resident_ = false;
}

}  // namespace radixlm::model
