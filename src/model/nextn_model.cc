#include "model/nextn_model.h"

#include <cstring>
#include <functional>
#include <string>

#include "kernels/backend.h"
#include "model/gated_attention.h"
#include "model/transformer_layer.h"

namespace radixlm::model {

namespace {

// The NextN layer as a model of one full-attention layer of the target's family.
ModelConfig NextnConfig(const ModelConfig& target) {
  ModelConfig c = target;
  c.n_layers = 1;
  c.linear_layers.clear();
  c.layer_tensors = {target.nextn_tensors};
  // Per-layer arrays describe the decoder's layers; the NextN layer has the scalar shapes.
  c.layer_n_kv_heads.clear();
  c.layer_ffn_size.clear();
  c.nextn_layers = 0;
  c.has_nextn_layer = false;
  return c;
}

}  // namespace

StatusOr<std::unique_ptr<NextnModel>> NextnModel::Create(Model& target) {
  const ModelConfig& tc = target.config();
  if (tc.nextn_layers < 1) {
    return Unimplemented("the model has no NextN (multi-token-prediction) layers (" + tc.arch +
                         ".nextn_predict_layers is 0 or absent)");
  }
  if (!tc.has_nextn_layer) {
    return Unimplemented("running the NextN layers of '" + tc.arch +
                         "' models is not supported (qwen35, qwen35moe and qwen3next are)");
  }
  if (tc.output_scale != 1.0f || tc.final_logit_softcap > 0.0f) {
    return Unimplemented("a NextN layer with scaled or capped logits is not supported");
  }
  std::unique_ptr<NextnModel> m(new NextnModel());
  m->target_ = &target;
  m->config_ = NextnConfig(tc);
  RADIXLM_ASSIGN_OR_RETURN(
      m->weights_,
      ModelWeights::LoadBlocks(target.gguf(), m->config_,
                               /*first_block=*/tc.n_layers, kernels::CpuBackend(), target.pool()));
  const ModelConfig& c = m->config_;
  const LayerAttentionConfig la = c.LayerAttention(0);
  if (la.use_rope) {
    RopeParams rp;
    rp.layout = c.rope_layout;
    rp.head_dim = la.head_dim;
    rp.rope_dims = la.rope_dims;
    rp.base = la.rope_base;
    rp.freq_scale = la.rope_freq_scale;
    rp.freq_factors = la.use_rope_freq_factors ? target.weights().rope_freqs : nullptr;
    rp.attn_factor = la.rope_attn_factor;
    rp.ext_factor = la.rope_ext_factor;
    if (rp.ext_factor != 0.0f) {
      YarnCorrDims(la.rope_dims, c.rope_yarn_original_context, la.rope_base, c.rope_yarn_beta_fast,
                   c.rope_yarn_beta_slow, rp.corr_dims);
    }
    m->rope_ = std::make_unique<RotaryEmbedding>(rp);
  }
  const int64_t max_tokens = target.options().max_batch_tokens;
  m->scratch_ = std::make_unique<ForwardScratch>(c, max_tokens);
  if (m->rope_ != nullptr) {
    m->scratch_->rope_cos.emplace_back(max_tokens * m->rope_->half());
    m->scratch_->rope_sin.emplace_back(max_tokens * m->rope_->half());
  }
  m->concat_.resize(static_cast<size_t>(max_tokens * 2 * c.hidden_size));
  return m;
}

Status NextnModel::Forward(const ForwardBatch& batch, KvCache& cache, ForwardOutput* out) {
  const ModelConfig& c = config_;
  if (cache.n_layers() != 1 || cache.row_elems() != c.MaxKvSize()) {
    return InvalidArgument("KV cache shape does not match the NextN layer");
  }
  const int64_t h = c.hidden_size;
  for (size_t i = 0; i < batch.sequences.size(); ++i) {
    const SequenceInput& in = batch.sequences[i];
    if (static_cast<int64_t>(in.nextn_hidden.size()) !=
        static_cast<int64_t>(in.tokens.size()) * h) {
      return InvalidArgument("sequence " + std::to_string(i) + ": nextn_hidden must hold " +
                             std::to_string(h) + " values per new token");
    }
  }
  RADIXLM_RETURN_IF_ERROR(
      plan_.Build(batch, c.vocab_size, cache.n_slots(), max_batch_tokens(), max_context()));
  ForwardScratch& s = *scratch_;
  const kernels::KernelBackend& k = kernels::CpuBackend();
  const ModelWeights& tw = target_->weights();
  const LayerWeights& lw = weights_->layers[0];
  ThreadPool* pool = target_->pool();
  const int64_t n = plan_.n_tokens;

  // concat = [enorm(embed(token)) | hnorm(hidden)] per row; x = concat · eh_projᵀ.
  if (lw.nextn_embed_tokens.data != nullptr) {
    k.embed(lw.nextn_embed_tokens, plan_.tokens.data(), n, s.xn.data());
  } else {
    RADIXLM_RETURN_IF_ERROR(target_->Embed(plan_.tokens.data(), n, s.xn.data()));
  }
  for (size_t i = 0; i < batch.sequences.size(); ++i) {
    const BatchPlan::Sequence& planned = plan_.sequences[i];
    std::memcpy(s.x.data() + planned.first_token * h, batch.sequences[i].nextn_hidden.data(),
                static_cast<size_t>(planned.n_new * h) * sizeof(float));
  }
  auto concat = [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      float* row = concat_.data() + r * 2 * h;
      k.rms_norm(s.xn.data() + r * h, lw.nextn_enorm, 1, h, c.rms_norm_eps, row);
      k.rms_norm(s.x.data() + r * h, lw.nextn_hnorm, 1, h, c.rms_norm_eps, row + h);
    }
  };
  const kernels::RowPrologue concat_fn = std::ref(concat);
  const kernels::MatMulOutput eh{&lw.nextn_eh_proj, s.x.data()};
  k.matmul(std::span<const kernels::MatMulOutput>(&eh, 1), concat_.data(), n, pool, &concat_fn);

  // The layer, as Model::Forward runs a last layer whose every row is wanted.
  if (rope_ != nullptr) {
    rope_->ComputeTables(plan_.positions.data(), n, s.rope_cos[0].data(), s.rope_sin[0].data());
  }
  const LayerAttentionConfig la = c.LayerAttention(0);
  PrepareAttentionSequences(plan_, c.n_heads * la.head_dim, s);
  LayerContext ctx;
  ctx.backend = &k;
  ctx.config = &c;
  ctx.layer = 0;
  ctx.weights = &lw;
  if (rope_ != nullptr) {
    ctx.rope = rope_.get();
    ctx.rope_cos = s.rope_cos[0].data();
    ctx.rope_sin = s.rope_sin[0].data();
  }
  ctx.attention = LayerAttentionParams(c, la);
  ctx.kv = cache.Layer(0);
  ctx.new_slots = plan_.new_slots.data();
  ctx.attn_seqs = s.attn_seqs;
  ctx.pool = pool;
  RunGatedAttentionBlock(ctx, plan_, s, {}, /*defer_residual=*/false);
  RunFfnBlock(ctx, n, s, {}, /*defer_residual=*/true);
  const PendingResidual pending{true, lw.post_ffn_norm};

  // hidden = shared_head_norm(x + the FFN's residual), every row.
  const float* head_norm =
      lw.nextn_shared_head_norm != nullptr ? lw.nextn_shared_head_norm : tw.output_norm;
  std::vector<float>& hidden = out->hidden;
  hidden.resize(static_cast<size_t>(n * h));
  ParallelRows(pool, n, 4 * h, [&](int64_t b, int64_t e) {
    ApplyPendingResidual(k, c, pending, s, b, e);
    k.rms_norm(s.x.data() + b * h, head_norm, e - b, h, c.rms_norm_eps, hidden.data() + b * h);
  });

  // logits = the wanted rows of hidden · headᵀ.
  const auto rows = static_cast<int64_t>(plan_.logit_rows.size());
  out->vocab_size = c.vocab_size;
  out->n_rows = rows;
  out->row_offset.resize(plan_.sequences.size());
  out->row_count.resize(plan_.sequences.size());
  for (size_t i = 0; i < plan_.sequences.size(); ++i) {
    out->row_offset[i] = plan_.sequences[i].first_logit;
    out->row_count[i] = plan_.sequences[i].n_logits;
  }
  if (rows == 0) return Status::Ok();
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(s.xn.data() + r * h, hidden.data() + plan_.logit_rows[r] * h, h * sizeof(float));
  }
  const size_t needed = static_cast<size_t>(rows * c.vocab_size);
  if (out->logits.size() < needed) out->logits.resize(needed);
  const kernels::WeightMatrix& head =
      lw.nextn_shared_head_head.data != nullptr ? lw.nextn_shared_head_head : tw.output;
  const kernels::MatMulOutput logits{&head, out->logits.data()};
  k.matmul(std::span<const kernels::MatMulOutput>(&logits, 1), s.xn.data(), rows, pool, nullptr);
  return Status::Ok();
}

}  // namespace radixlm::model
