// HybridReference's NextN layer (llama.cpp's src/models/qwen35.cpp, graph_mtp): for token t
// beside the target's hidden state h_in[t],
//   x = eh_proj · [enorm(embed(t)) | hnorm(h_in[t])]
//   x += attention(attn_norm(x)) (gated, as the decoder's full-attention layers), over the
//        layer's own earlier positions
//   x += ffn(post_attention_norm(x))
//   hidden = shared_head_norm(x) (else output_norm), logits = hidden · head.
#include <cassert>
#include <string>

#include "hybrid_reference.h"

namespace radixlm::model::testing {

namespace nextn_reference {
namespace {

std::vector<float> Floats(const gguf::GgufFile& file, const std::string& name) {
  const gguf::TensorInfo* t = file.FindTensor(name);
  assert(t != nullptr && t->type == gguf::GgmlType::kF32);
  int64_t n = 1;
  for (int64_t d : t->shape) n *= d;
  const auto* p = reinterpret_cast<const float*>(t->data);
  return std::vector<float>(p, p + n);
}

}  // namespace
}  // namespace nextn_reference

void HybridReference::LoadNextn(const gguf::GgufFile& file) {
  using nextn_reference::Floats;
  const int64_t block = config_.n_layers;
  const std::string p = "blk." + std::to_string(block) + ".nextn.";
  nextn_.layer = LoadLayer(file, block, /*linear=*/false);
  nextn_.eh_proj.cols = 2 * config_.hidden_size;
  nextn_.eh_proj.rows = config_.hidden_size;
  nextn_.eh_proj.w = Floats(file, p + "eh_proj.weight");
  nextn_.enorm = Floats(file, p + "enorm.weight");
  nextn_.hnorm = Floats(file, p + "hnorm.weight");
  nextn_.head_norm = file.FindTensor(p + "shared_head_norm.weight") != nullptr
                         ? Floats(file, p + "shared_head_norm.weight")
                         : output_norm_;
  if (file.FindTensor(p + "shared_head_head.weight") != nullptr) {
    nextn_.head.cols = config_.hidden_size;
    nextn_.head.rows = config_.vocab_size;
    nextn_.head.w = Floats(file, p + "shared_head_head.weight");
  } else {
    nextn_.head = output_;
  }
  nextn_.present = true;
}

HybridReference::NextnOutput HybridReference::NextnForward(
    const std::vector<int32_t>& tokens, const std::vector<std::vector<float>>& hidden_in) const {
  assert(nextn_.present && hidden_in.size() == tokens.size());
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t h = config_.hidden_size;
  const Layer& l = nextn_.layer;
  std::vector<std::vector<float>> x(n), xn(n);
  for (int64_t t = 0; t < n; ++t) {
    std::vector<float> cat = RmsNorm(token_embd_.w.data() + tokens[t] * h, h, nextn_.enorm);
    const std::vector<float> hn = RmsNorm(hidden_in[t].data(), h, nextn_.hnorm);
    cat.insert(cat.end(), hn.begin(), hn.end());
    x[t] = MatVec(nextn_.eh_proj, cat);
    xn[t] = RmsNorm(x[t].data(), h, l.attn_norm);
  }
  const auto mixed = Attention(l, xn);
  NextnOutput out;
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t e = 0; e < h; ++e) x[t][e] += mixed[t][e];
    const std::vector<float> down = Ffn(l, RmsNorm(x[t].data(), h, l.post_attn_norm));
    for (int64_t e = 0; e < h; ++e) x[t][e] += down[e];
    out.hidden.push_back(RmsNorm(x[t].data(), h, nextn_.head_norm));
    out.logits.push_back(MatVec(nextn_.head, out.hidden.back()));
  }
  return out;
}

}  // namespace radixlm::model::testing
