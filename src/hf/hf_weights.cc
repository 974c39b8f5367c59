#include "hf/hf_weights.h"

#include <cmath>
#include <cstring>
#include <regex>

#include "hf/hf_bert.h"
#include "hf/hf_nomic_bert.h"
#include "hf/reference_quant.h"
#include "kernels/quant.h"

namespace radixlm::hf {
namespace {

using gguf::GgmlType;

struct LayerName {
  const char* hf;
  const char* gguf;
};
// model.layers.N.<hf>.weight|bias -> blk.N.<gguf>.weight|bias
constexpr LayerName kLayerNames[] = {
    {"input_layernorm", "attn_norm"},
    {"self_attn.q_proj", "attn_q"},
    {"self_attn.k_proj", "attn_k"},
    {"self_attn.v_proj", "attn_v"},
    {"self_attn.o_proj", "attn_output"},
    {"self_attn.q_norm", "attn_q_norm"},
    {"self_attn.k_norm", "attn_k_norm"},
    {"mlp.gate_proj", "ffn_gate"},
    {"mlp.up_proj", "ffn_up"},
    {"mlp.down_proj", "ffn_down"},
    {"pre_feedforward_layernorm", "ffn_norm"},
    {"post_feedforward_layernorm", "post_ffw_norm"},
};

// Row `r` of the permuted matrix is row PermutedSource(r) of the HF one: the converter's
// reshape(n_head, 2, rows / n_head / 2, ...).swapaxes(1, 2), i.e. each head's two halves
// interleaved (interleaved-pair RoPE).
int64_t PermutedSource(int64_t r, int64_t rows, int64_t n_head) {
  const int64_t head_rows = rows / n_head;
  const int64_t half = head_rows / 2;
  const int64_t h = r / head_rows;
  const int64_t within = r % head_rows;
  return h * head_rows + (within % 2) * half + within / 2;
}

bool ToGgmlType(StDtype d, GgmlType* out) {
  switch (d) {
    case StDtype::kF32:
      *out = GgmlType::kF32;
      return true;
    case StDtype::kF16:
      *out = GgmlType::kF16;
      return true;
    case StDtype::kBF16:
      *out = GgmlType::kBF16;
      return true;
    default:
      return false;
  }
}

GgmlType QuantType(const std::string& q) {
  if (q == "q8_0") return GgmlType::kQ8_0;
  if (q == "q4_k") return GgmlType::kQ4_K;
  return GgmlType::kQ6_K;
}

// One row of `cols` floats quantized to `type` (a K-quant, Q8_0 or the F16 fallback).
void QuantizeRowAtLoad(GgmlType type, const float* row, uint8_t* dst, int64_t cols) {
  switch (type) {
    case GgmlType::kQ8_0:
      QuantizeRowQ8_0Reference(row, dst, cols);
      return;
    case GgmlType::kQ4_K:
      QuantizeRowQ4KReference(row, dst, cols);
      return;
    case GgmlType::kQ6_K:
      QuantizeRowQ6KReference(row, dst, cols);
      return;
    default:
      kernels::QuantizeRow(type, row, dst, cols);
  }
}

}  // namespace

StatusOr<std::string> GgufTensorName(const std::string& hf_name, const HfArchitecture& arch) {
  if (arch.arch == "bert") return BertTensorName(hf_name);
  if (arch.arch == "nomic-bert") return NomicBertTensorName(hf_name);
  if (hf_name == "model.embed_tokens.weight") return std::string("token_embd.weight");
  if (hf_name == "model.norm.weight") return std::string("output_norm.weight");
  if (hf_name == "lm_head.weight") return std::string("output.weight");
  static const std::regex kLayer(R"(model\.layers\.(\d+)\.(.+)\.(weight|bias))");
  std::smatch m;
  if (std::regex_match(hf_name, m, kLayer)) {
    const std::string part = m[2].str();
    if (part == "self_attn.rotary_emb") return std::string();
    std::string gguf;
    if (part == "post_attention_layernorm") {
      gguf = arch.gemma_naming ? "post_attention_norm" : "ffn_norm";
    } else {
      for (const LayerName& n : kLayerNames) {
        if (part == n.hf) gguf = n.gguf;
      }
    }
    if (!gguf.empty()) return "blk." + m[1].str() + "." + gguf + "." + m[3].str();
  }
  if (hf_name.find("rotary_emb.inv_freq") != std::string::npos) return std::string();
  return NotFound("tensor '" + hf_name + "' has no GGUF name for " + arch.hf_name);
}

StatusOr<HfWeights> MapWeights(const Checkpoint& ckpt, const HfArchitecture& arch,
                               const std::string& quantization, int64_t embed_rows,
                               ThreadPool* pool) {
  HfWeights out;
  int n_permuted = 0, n_vectors = 0, n_quantized = 0, n_fallback = 0;
  std::string source_types;
  for (const StTensor* t : ckpt.tensors()) {
    RADIXLM_ASSIGN_OR_RETURN(const std::string name, GgufTensorName(t->name, arch));
    if (name.empty()) continue;
    const std::string who = "tensor '" + t->name + "' (" + t->file + ")";
    GgmlType src_type;
    if (!ToGgmlType(t->dtype, &src_type)) {
      return InvalidArgument(who + ": dtype " + std::string(StDtypeName(t->dtype)) +
                             " is not a float type (F32, F16, BF16)");
    }
    const std::string dtype_name(StDtypeName(t->dtype));
    if (source_types.find(dtype_name) == std::string::npos) {
      source_types += (source_types.empty() ? "" : "+") + dtype_name;
    }
    if (t->shape.size() != 1 && t->shape.size() != 2) {
      return InvalidArgument(who + ": expected 1 or 2 dimensions, has " +
                             std::to_string(t->shape.size()));
    }
    const bool is_q = t->name.ends_with("q_proj.weight") || t->name.ends_with("q_proj.bias");
    const bool is_k = t->name.ends_with("k_proj.weight") || t->name.ends_with("k_proj.bias");
    const int64_t perm_heads = !arch.permute_qk ? 0
                               : is_q           ? arch.n_heads
                               : is_k           ? arch.n_kv_heads
                                                : 0;
    int64_t rows = t->shape[0];
    const int64_t cols = t->shape.size() == 2 ? t->shape[1] : 1;
    if (perm_heads > 0 && rows % (2 * perm_heads) != 0) {
      return InvalidArgument(who + ": " + std::to_string(rows) + " rows do not split into " +
                             std::to_string(perm_heads) + " heads of even size");
    }
    if (name == "token_embd.weight" && embed_rows > 0 && embed_rows < rows) rows = embed_rows;
    const size_t src_elem = static_cast<size_t>(StDtypeBytes(t->dtype));
    const uint8_t* first = t->data;  // the first row served
    if (name == "position_embd.weight" && arch.position_row_offset > 0) {
      if (t->shape.size() != 2 || rows <= arch.position_row_offset) {
        return InvalidArgument(who + ": has no rows past the " +
                               std::to_string(arch.position_row_offset) +
                               " that positions from pad_token_id + 1 skip");
      }
      rows -= arch.position_row_offset;
      first += static_cast<size_t>(arch.position_row_offset) * static_cast<size_t>(cols) * src_elem;
    }
    auto source_row = [&](int64_t r) {
      const int64_t s = perm_heads > 0 ? PermutedSource(r, rows, perm_heads) : r;
      return first + static_cast<size_t>(s) * static_cast<size_t>(cols) * src_elem;
    };
    gguf::TensorInfo info;
    info.name = name;
    const bool vector = t->shape.size() == 1 || name.ends_with("_norm.weight");
    if (vector) {
      // One F32 row of rows * cols values (norms are 1-D; biases too).
      info.type = GgmlType::kF32;
      const int64_t n = rows * cols;
      info.shape =
          t->shape.size() == 1 ? std::vector<int64_t>{n} : std::vector<int64_t>{cols, rows};
      auto buf = std::make_unique<uint8_t[]>(static_cast<size_t>(n) * 4);
      auto* f = reinterpret_cast<float*>(buf.get());
      for (int64_t r = 0; r < rows; ++r) {
        kernels::DequantizeRow(src_type, source_row(r), f + r * cols, cols);
      }
      const bool shift = arch.norm_plus_one && t->name.ends_with("norm.weight");
      if (shift) {
        for (int64_t i = 0; i < n; ++i) f[i] += 1.0f;
      }
      info.size_bytes = static_cast<uint64_t>(n) * 4;
      info.data = buf.get();
      out.owned_bytes += static_cast<int64_t>(info.size_bytes);
      out.owned.push_back(std::move(buf));
      ++n_vectors;
    } else if (quantization.empty()) {
      info.type = src_type;
      info.shape = {cols, rows};
      info.size_bytes = static_cast<uint64_t>(rows) * cols * src_elem;
      if (perm_heads > 0) {
        auto buf = std::make_unique<uint8_t[]>(info.size_bytes);
        for (int64_t r = 0; r < rows; ++r) {
          std::memcpy(buf.get() + r * cols * src_elem, source_row(r), cols * src_elem);
        }
        info.data = buf.get();
        out.owned_bytes += static_cast<int64_t>(info.size_bytes);
        out.owned.push_back(std::move(buf));
        ++n_permuted;
      } else {
        info.data = first;
      }
    } else {
      GgmlType q = QuantType(quantization);
      if (!kernels::IsRowSizeValid(q, cols)) {
        q = kernels::IsRowSizeValid(GgmlType::kQ8_0, cols) ? GgmlType::kQ8_0 : GgmlType::kF16;
        ++n_fallback;
      }
      info.type = q;
      info.shape = {cols, rows};
      const size_t row_bytes = kernels::RowBytes(q, cols);
      info.size_bytes = row_bytes * static_cast<size_t>(rows);
      auto buf = std::make_unique<uint8_t[]>(info.size_bytes);
      // Each row is quantized on its own, so splitting the rows over threads changes nothing.
      const int n_threads = pool != nullptr ? pool->size() : 1;
      std::vector<std::vector<float>> scratch(n_threads, std::vector<float>(cols));
      auto quantize_rows = [&](int64_t begin, int64_t end, int thread_id) {
        float* row = scratch[thread_id].data();
        for (int64_t r = begin; r < end; ++r) {
          kernels::DequantizeRow(src_type, source_row(r), row, cols);
          QuantizeRowAtLoad(q, row, buf.get() + static_cast<size_t>(r) * row_bytes, cols);
        }
      };
      if (pool != nullptr) {
        pool->ParallelFor(rows, quantize_rows);
      } else {
        quantize_rows(0, rows, 0);
      }
      info.data = buf.get();
      out.owned_bytes += static_cast<int64_t>(info.size_bytes);
      out.owned.push_back(std::move(buf));
      if (perm_heads > 0) ++n_permuted;
      ++n_quantized;
    }
    out.tensors.push_back(std::move(info));
  }
  out.summary = source_types + " (" + std::to_string(out.tensors.size()) + " tensors";
  if (!quantization.empty()) {
    out.summary += "; " + std::to_string(n_quantized) + " matrices quantized to " + quantization;
    if (n_fallback > 0) out.summary += " (" + std::to_string(n_fallback) + " fell back)";
  } else {
    out.summary += "; matrices served in their own type from the mapping";
  }
  if (n_permuted > 0) out.summary += "; " + std::to_string(n_permuted) + " Q/K permuted";
  out.summary += "; " + std::to_string(n_vectors) + " vectors as F32)";
  return out;
}

}  // namespace radixlm::hf
