#include "model/model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "kernels/backend.h"
#include "kernels/ops.h"
#include "kernels/quant.h"
#include "model/gated_attention.h"
#include "model/gated_delta_net.h"
#include "model/mla_attention.h"
#include "model/transformer_layer.h"

namespace radixlm::model {

StatusOr<LinearAttnPrefill> ParseLinearAttnPrefill(const std::string& name) {
  if (name == "recurrent") return LinearAttnPrefill::kRecurrent;
  if (name == "chunked") return LinearAttnPrefill::kChunked;
  return InvalidArgument("--linear-attn-prefill must be recurrent or chunked, not '" + name + "'");
}

StatusOr<std::unique_ptr<Model>> Model::Load(const std::string& path, const ModelOptions& options) {
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::Open(path));
  return FromGguf(std::move(file), options);
}

StatusOr<std::unique_ptr<Model>> Model::FromGguf(std::unique_ptr<gguf::GgufFile> file,
                                                 const ModelOptions& options) {
  if (options.max_batch_tokens < 1) {
    return InvalidArgument("max_batch_tokens must be at least 1");
  }
  std::unique_ptr<Model> m(new Model());
  m->file_ = std::move(file);
  RADIXLM_ASSIGN_OR_RETURN(m->config_, ModelConfig::FromGguf(*m->file_));
  m->pool_ = std::make_unique<ThreadPool>(options.n_threads);
  m->backend_ = &kernels::CpuBackend();
  LoadProgressThrottle throttle;
  LoadProgressFn progress;
  if (options.on_load_progress) {
    progress = [&](const LoadProgress& p) {
      if (throttle.ShouldReport(p)) options.on_load_progress(p);
    };
  }
  RADIXLM_ASSIGN_OR_RETURN(m->weights_, ModelWeights::Load(*m->file_, m->config_, *m->backend_,
                                                           m->pool_.get(), progress));
  m->options_ = options;
  m->options_.on_load_progress = nullptr;  // the load is over; options() outlives the caller's
  if (m->options_.max_context <= 0) m->options_.max_context = m->config_.context_length;

  // One RoPE variant per distinct layer attention config (none for layers without RoPE).
  const ModelConfig& c = m->config_;
  // Per-pair frequency factors: llama 3's, or LongRoPE's long ones when the context exceeds
  // the original one (llama.cpp's choice), else its short ones.
  const ModelWeights& w = *m->weights_;
  const float* freq_factors = w.rope_freqs;
  if (freq_factors == nullptr && c.rope_original_context > 0) {
    freq_factors = m->options_.max_context > c.rope_original_context ? w.rope_factors_long
                                                                     : w.rope_factors_short;
  }
  std::vector<LayerAttentionConfig> variants;
  for (int64_t i = 0; i < c.n_layers; ++i) {
    const LayerAttentionConfig la = c.LayerAttention(i);
    if (!la.use_rope) {
      m->layer_rope_variant_.push_back(-1);
      continue;
    }
    int found = -1;
    for (size_t v = 0; v < variants.size(); ++v) {
      const LayerAttentionConfig& o = variants[v];
      if (o.head_dim == la.head_dim && o.rope_dims == la.rope_dims && o.rope_base == la.rope_base &&
          o.rope_freq_scale == la.rope_freq_scale &&
          o.use_rope_freq_factors == la.use_rope_freq_factors &&
          o.rope_ext_factor == la.rope_ext_factor && o.rope_attn_factor == la.rope_attn_factor) {
        found = static_cast<int>(v);
      }
    }
    if (found < 0) {
      found = static_cast<int>(variants.size());
      variants.push_back(la);
      RopeParams rp;
      rp.layout = c.rope_layout;
      rp.head_dim = la.head_dim;
      rp.rope_dims = la.rope_dims;
      rp.base = la.rope_base;
      rp.freq_scale = la.rope_freq_scale;
      rp.freq_factors = la.use_rope_freq_factors ? freq_factors : nullptr;
      rp.attn_factor = la.rope_attn_factor;
      rp.ext_factor = la.rope_ext_factor;
      rp.mrope_sections = c.mrope_sections;
      rp.mrope_interleaved = c.mrope_interleaved;
      rp.mrope_section_e = c.mrope_section_e;
      if (rp.ext_factor != 0.0f) {
        YarnCorrDims(la.rope_dims, c.rope_yarn_original_context, la.rope_base,
                     c.rope_yarn_beta_fast, c.rope_yarn_beta_slow, rp.corr_dims);
      }
      m->rope_variants_.emplace_back(rp);
    }
    m->layer_rope_variant_.push_back(found);
  }

  m->scratch_ = std::make_unique<ForwardScratch>(c, options.max_batch_tokens);
  for (const RotaryEmbedding& rope : m->rope_variants_) {
    m->scratch_->rope_cos.emplace_back(options.max_batch_tokens * rope.half());
    m->scratch_->rope_sin.emplace_back(options.max_batch_tokens * rope.half());
  }
  return m;
}

Model::~Model() = default;

StatusOr<std::unique_ptr<KvCache>> Model::CreateKvCache(const KvCacheOptions& options) const {
  return KvCache::Create(config_, options);
}

Status Model::EmbedTokens(int64_t n, float* out) { return Embed(plan_.tokens.data(), n, out); }

Status Model::Embed(const int32_t* tokens, int64_t n, float* out) {
  const kernels::WeightMatrix& table = weights_->token_embd;
  if (!weights_->embed_reads_file) {
    backend_->embed(table, tokens, n, out);
    return Status::Ok();
  }
  // The same rows and dequantization as the backend's embed (kernels::GetRows).
  embed_row_.resize(table.row_bytes);
  const auto* base = static_cast<const uint8_t*>(table.data);
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* row = base + static_cast<int64_t>(tokens[i]) * table.row_bytes;
    RADIXLM_RETURN_IF_ERROR(file_->ReadBytes(row, table.row_bytes, embed_row_.data()));
    kernels::DequantizeRow(table.type, embed_row_.data(), out + i * table.cols, table.cols);
  }
  return Status::Ok();
}

Status Model::Forward(const ForwardBatch& batch, KvCache& cache, ForwardOutput* out) {
  const ModelConfig& c = config_;
  if (cache.n_layers() != c.n_layers || cache.row_elems() != c.MaxKvSize()) {
    return InvalidArgument("KV cache shape does not match the model");
  }
  int64_t swa_window = 0;
  for (int64_t layer = 0; layer < c.n_layers; ++layer) {
    if (cache.IsSwaLayer(layer)) {
      swa_window = std::max<int64_t>(swa_window, c.LayerAttention(layer).sliding_window);
    }
  }
  RADIXLM_RETURN_IF_ERROR(plan_.Build(batch, c.vocab_size, cache.n_slots(),
                                      options_.max_batch_tokens, options_.max_context,
                                      cache.n_swa_slots(), swa_window));
  if (!plan_.rope_positions.empty() && !c.mrope()) {
    return InvalidArgument("forward batch: rotary positions given to a model without M-RoPE");
  }
  if (c.IsHybrid()) RADIXLM_RETURN_IF_ERROR(PrepareRecurrentState(batch, cache));
  PrepareLoraRows(batch);
  ForwardScratch& s = *scratch_;
  const int64_t n = plan_.n_tokens;
  const int64_t h = c.hidden_size;
  ThreadPool* pool = pool_.get();

  // x = token_embd[tokens] [* embedding_scale]   [n, hidden]
  const kernels::KernelBackend& k = *backend_;
  RADIXLM_RETURN_IF_ERROR(EmbedTokens(n, s.x.data()));
  if (c.scale_embeddings) k.scale(s.x.data(), c.embedding_scale, s.x.data(), n * h);
  const int64_t row_size = c.EmbeddingRowSize();  // (deepstack slices after the first h)
  for (const BatchPlan::EmbeddingRows& e : plan_.embedding_rows) {  // (unscaled)
    for (int64_t r = 0; r < e.n; ++r) {
      std::memcpy(s.x.data() + (e.first_token + r) * h, e.rows + r * row_size, h * sizeof(float));
    }
  }
  for (size_t v = 0; v < rope_variants_.size(); ++v) {
    if (plan_.rope_positions.empty()) {
      rope_variants_[v].ComputeTables(plan_.positions.data(), n, s.rope_cos[v].data(),
                                      s.rope_sin[v].data());
    } else {
      rope_variants_[v].ComputeTablesMrope(plan_.rope_positions.data(), n, s.rope_cos[v].data(),
                                           s.rope_sin[v].data());
    }
  }
  if (c.per_layer_input_size > 0) ComputePerLayerInputs();
  prepared_q_size_ = 0;

  const auto n_logit_rows = static_cast<int64_t>(plan_.logit_rows.size());
  PendingResidual pending;  // the previous FFN block's residual add, not yet applied
  for (int64_t layer = 0; layer < c.n_layers; ++layer) {
    const LayerAttentionConfig la = c.LayerAttention(layer);
    const int variant = layer_rope_variant_[layer];
    // The sequences point into q / attn with the layer's row width.
    const int64_t q_size = c.n_heads * la.head_dim;
    if (q_size != prepared_q_size_) {
      PrepareAttentionSequences(plan_, q_size, s);
      prepared_q_size_ = q_size;
    }
    LayerContext ctx;
    ctx.backend = backend_;
    ctx.config = &c;
    ctx.layer = layer;
    ctx.weights = &weights_->layers[layer];
    if (variant >= 0) {
      ctx.rope = &rope_variants_[variant];
      ctx.rope_cos = s.rope_cos[variant].data();
      ctx.rope_sin = s.rope_sin[variant].data();
    }
    ctx.attention = LayerAttentionParams(c, la);
    ctx.attention.sinks = weights_->layers[layer].attn_sinks;  // (null: none)
    ctx.own_kv = la.kv_layer == layer;
    ctx.kv = cache.Layer(layer);  // (its source's, for a layer reading another's)
    const bool swa_rows = cache.IsSwaLayer(layer);
    ctx.new_slots = swa_rows ? plan_.swa_new_slots.data() : plan_.new_slots.data();
    ctx.attn_seqs = swa_rows ? s.swa_attn_seqs : s.attn_seqs;
    ctx.pool = pool;
    ctx.chunked_linear_prefill = options_.linear_attn_prefill == LinearAttnPrefill::kChunked;
    if (!lora_rows_.empty()) ctx.lora = {lora_rows_, &lora_scratch_};

    // Each block's closing residual add runs in the next block's first parallel region (its
    // input norm and quantization), except the last attention block's: the rows are compacted
    // after it.
    // A layer with an output block (gemma4's per-layer input, output scale) adds its FFN's
    // residual itself, before that block.
    const LayerWeights& lw = weights_->layers[layer];
    const bool last = layer + 1 == c.n_layers;
    const bool output_block = lw.per_layer_inp_gate.data != nullptr || lw.out_scale != nullptr;
    const int64_t p = c.per_layer_input_size;
    float* per_layer_input = p > 0 ? s.per_layer_inputs.data() + layer * n * p : nullptr;
    if (c.IsLinearLayer(layer)) {
      RunGatedDeltaNetBlock(ctx, n, linear_seqs_, *cache.recurrent(), s, pending,
                            /*defer_residual=*/!last);
    } else if (c.IsMla()) {
      RunMlaAttentionBlock(ctx, plan_, s, pending, /*defer_residual=*/!last);
    } else if (c.attn_output_gate) {
      RunGatedAttentionBlock(ctx, plan_, s, pending, /*defer_residual=*/!last);
    } else {
      RunAttentionBlock(ctx, plan_, s, pending, /*defer_residual=*/!last);
    }
    if (!last) {
      RunFfnBlock(ctx, n, s, {true, lw.post_attn_norm}, /*defer_residual=*/!output_block);
      if (output_block) RunLayerOutputBlock(ctx, n, s, per_layer_input);
    } else if (batch.output_hidden) {  // every row's hidden state is wanted
      RunFfnBlock(ctx, n, s, {}, /*defer_residual=*/!output_block);
      if (output_block) RunLayerOutputBlock(ctx, n, s, per_layer_input);
    } else {
      // Only rows whose logits are wanted matter after the last attention: compact them to
      // the front (logit_rows is increasing, so moving forward never overwrites a source).
      for (int64_t r = 0; r < n_logit_rows; ++r) {
        const int64_t src = plan_.logit_rows[r];
        if (src == r) continue;
        std::memcpy(s.x.data() + r * h, s.x.data() + src * h, h * sizeof(float));
        if (per_layer_input != nullptr) {
          std::memcpy(per_layer_input + r * p, per_layer_input + src * p, p * sizeof(float));
        }
      }
      if (!lora_rows_.empty()) ctx.lora.adapter = lora_logit_rows_;
      RunFfnBlock(ctx, n_logit_rows, s, {}, /*defer_residual=*/!output_block);
      if (output_block) RunLayerOutputBlock(ctx, n_logit_rows, s, per_layer_input);
    }
    pending = output_block ? PendingResidual{} : PendingResidual{true, lw.post_ffn_norm};
    if (layer < c.n_deepstack_layers) {
      // llama.cpp adds the deepstack slice to the layer's output; here x still lacks the FFN's
      // (pending) residual, and the two adds commute up to rounding.
      for (const BatchPlan::EmbeddingRows& e : plan_.embedding_rows) {
        for (int64_t r = 0; r < e.n; ++r) {
          float* x = s.x.data() + (e.first_token + r) * h;
          k.add(x, e.rows + r * row_size + (layer + 1) * h, x, h);
        }
      }
    }
  }
  if (batch.output_hidden) {
    OutputHidden(out, pending);
    pending = {};
  }
  ComputeLogits(out, pending);
  return Status::Ok();
}

void Model::OutputHidden(ForwardOutput* out, const PendingResidual& pending) {
  const ModelConfig& c = config_;
  ForwardScratch& s = *scratch_;
  const int64_t n = plan_.n_tokens;
  const int64_t h = c.hidden_size;
  out->hidden.resize(static_cast<size_t>(n * h));
  // x += the last FFN's residual; hidden = output_norm(x), the rows the LM head reads.
  ParallelRows(pool_.get(), n, 4 * h, [&](int64_t b, int64_t e) {
    ApplyPendingResidual(*backend_, c, pending, s, b, e);
    backend_->rms_norm(s.x.data() + b * h, weights_->output_norm, e - b, h, c.rms_norm_eps,
                       out->hidden.data() + b * h);
  });
  // The rows whose logits are wanted, to the front of x (as the last layer compacts them
  // without output_hidden; logit_rows is increasing).
  for (size_t r = 0; r < plan_.logit_rows.size(); ++r) {
    const int64_t src = plan_.logit_rows[r];
    if (src != static_cast<int64_t>(r)) {
      std::memcpy(s.x.data() + r * h, s.x.data() + src * h, h * sizeof(float));
    }
  }
}

void Model::PrepareLoraRows(const ForwardBatch& batch) {
  lora_rows_.clear();
  lora_logit_rows_.clear();
  bool any = false;
  for (const SequenceInput& in : batch.sequences) any = any || in.lora != nullptr;
  if (!any) return;
  lora_rows_.resize(static_cast<size_t>(plan_.n_tokens), nullptr);
  for (size_t i = 0; i < batch.sequences.size(); ++i) {
    const BatchPlan::Sequence& planned = plan_.sequences[i];
    std::fill_n(lora_rows_.begin() + planned.first_token, planned.n_new, batch.sequences[i].lora);
  }
  for (const int64_t r : plan_.logit_rows) lora_logit_rows_.push_back(lora_rows_[r]);
}

Status Model::PrepareRecurrentState(const ForwardBatch& batch, KvCache& cache) {
  RecurrentState* state = cache.recurrent();
  if (state == nullptr) return InvalidArgument("KV cache has no recurrent state for this model");
  linear_seqs_.clear();
  for (size_t i = 0; i < batch.sequences.size(); ++i) {
    const SequenceInput& in = batch.sequences[i];
    const std::string where = "sequence " + std::to_string(i) + ": ";
    // A draft chain (every node the child of the one before) runs as a sequence; a tree
    // would need a state per branch.
    for (size_t t = 0; t < in.tree_depth.size(); ++t) {
      if (in.tree_depth[t] != static_cast<int32_t>(t) ||
          in.tree_mask[t] != (t + 1 == 64 ? ~uint64_t{0} : (uint64_t{1} << (t + 1)) - 1)) {
        return Unimplemented(where +
                             "draft trees are not supported by hybrid "
                             "(linear-attention) models; chains are");
      }
    }
    if (!in.state_checkpoints.empty() && in.state_checkpoints.size() != in.tokens.size()) {
      return InvalidArgument(where + "state_checkpoints must have one entry per new token");
    }
    if (in.state_slot < 0 || in.state_slot >= state->n_slots()) {
      return InvalidArgument(where + "state_slot " + std::to_string(in.state_slot) +
                             " outside [0, " + std::to_string(state->n_slots()) + ")");
    }
    for (const LinearSequence& other : linear_seqs_) {
      if (other.state_slot == in.state_slot) {
        return InvalidArgument(where + "state_slot " + std::to_string(in.state_slot) +
                               " is used by another sequence of the batch");
      }
    }
    const BatchPlan::Sequence& planned = plan_.sequences[i];
    linear_seqs_.push_back({planned.first_token, planned.n_new, in.state_slot,
                            in.state_checkpoints.empty() ? nullptr : in.state_checkpoints.data(),
                            static_cast<int64_t>(in.prefix_slots.size())});
  }
  // Checkpoints are written during the step: none may be a state the batch reads.
  for (size_t i = 0; i < batch.sequences.size(); ++i) {
    for (const int32_t slot : batch.sequences[i].state_checkpoints) {
      if (slot < 0) continue;
      const std::string where = "sequence " + std::to_string(i) + ": ";
      if (slot >= state->n_slots()) {
        return InvalidArgument(where + "state checkpoint " + std::to_string(slot) +
                               " outside [0, " + std::to_string(state->n_slots()) + ")");
      }
      for (const LinearSequence& other : linear_seqs_) {
        if (other.state_slot == slot) {
          return InvalidArgument(where + "state checkpoint " + std::to_string(slot) +
                                 " is a sequence's state slot");
        }
      }
    }
  }
  // Checked first, so a refused batch leaves every state as it was.
  for (size_t i = 0; i < batch.sequences.size(); ++i) {
    if (batch.sequences[i].prefix_slots.empty()) state->Clear(batch.sequences[i].state_slot);
  }
  return Status::Ok();
}

void Model::ComputePerLayerInputs() {
  const ModelConfig& c = config_;
  ForwardScratch& s = *scratch_;
  const kernels::KernelBackend& k = *backend_;
  const int64_t n = plan_.n_tokens;
  const int64_t p = c.per_layer_input_size;
  const int64_t all = p * c.n_layers;
  // proj = x · per_layer_model_projᵀ ([n, n_layers * P]; x: the scaled embeddings), and each
  // token's row of per_layer_token_embd ([n, n_layers * P], token-major for now).
  const kernels::MatMulOutput proj{&weights_->per_layer_model_proj, s.per_layer_proj.data()};
  k.matmul(std::span<const kernels::MatMulOutput>(&proj, 1), s.x.data(), n, pool_.get(), nullptr);
  k.embed(weights_->per_layer_token_embd, plan_.tokens.data(), n, s.per_layer_inputs.data());
  const float proj_scale = 1.0f / std::sqrt(static_cast<float>(c.hidden_size));
  const float token_scale = std::sqrt(static_cast<float>(p));
  const float input_scale = 1.0f / std::sqrt(2.0f);
  // input = (norm(proj / sqrt(hidden)) + token row * sqrt(P)) / sqrt(2), per layer's P values.
  ParallelRows(pool_.get(), n, 4 * all, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      float* pr = s.per_layer_proj.data() + r * all;
      const float* tr = s.per_layer_inputs.data() + r * all;
      k.scale(pr, proj_scale, pr, all);
      k.rms_norm(pr, weights_->per_layer_proj_norm, c.n_layers, p, c.rms_norm_eps, pr);
      for (int64_t i = 0; i < all; ++i) {
        const float token = tr[i] * token_scale;
        pr[i] = (pr[i] + token) * input_scale;
      }
    }
  });
  // Layer by layer: layer l's inputs are rows [l * n, (l + 1) * n) of [*, P].
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t l = 0; l < c.n_layers; ++l) {
      std::memcpy(s.per_layer_inputs.data() + (l * n + r) * p,
                  s.per_layer_proj.data() + r * all + l * p, p * sizeof(float));
    }
  }
}

void Model::ComputeLogits(ForwardOutput* out, const PendingResidual& pending) {
  const ModelConfig& c = config_;
  ForwardScratch& s = *scratch_;
  const int64_t rows = static_cast<int64_t>(plan_.logit_rows.size());
  const int64_t h = c.hidden_size;
  const bool hidden = options_.output_hidden_states;
  out->vocab_size = hidden ? h : c.vocab_size;
  out->n_rows = rows;
  out->row_offset.resize(plan_.sequences.size());
  out->row_count.resize(plan_.sequences.size());
  for (size_t i = 0; i < plan_.sequences.size(); ++i) {
    out->row_offset[i] = plan_.sequences[i].first_logit;
    out->row_count[i] = plan_.sequences[i].n_logits;
  }
  if (rows == 0) return;
  const size_t needed = static_cast<size_t>(rows * out->vocab_size);
  if (out->logits.size() < needed) out->logits.resize(needed);
  // [x += the last FFN's residual]; xn = output_norm(x), in the region that quantizes xn.
  auto input = [&](int64_t b, int64_t e) {
    ApplyPendingResidual(*backend_, c, pending, s, b, e);
    backend_->rms_norm(s.x.data() + b * h, weights_->output_norm, e - b, h, c.rms_norm_eps,
                       s.xn.data() + b * h);
  };
  if (hidden) {  // an embedding model's rows: output_norm(x), no LM head
    ParallelRows(pool_.get(), rows, 4 * h, [&](int64_t b, int64_t e) {
      input(b, e);
      std::memcpy(out->logits.data() + b * h, s.xn.data() + b * h,
                  static_cast<size_t>((e - b) * h) * sizeof(float));
    });
    return;
  }
  const kernels::RowPrologue input_fn = std::ref(input);
  const kernels::MatMulOutput logits{&weights_->output, out->logits.data()};
  backend_->matmul(std::span<const kernels::MatMulOutput>(&logits, 1), s.xn.data(), rows,
                   pool_.get(), &input_fn);
  if (c.output_scale == 1.0f && c.final_logit_softcap <= 0.0f) return;
  // logits [* output_scale], then [cap * tanh(logits / cap)]: element-wise, split in blocks of
  // the flat [rows, vocab] array (a decode step has one long row).
  constexpr int64_t kBlock = 4096;
  float* values = out->logits.data();
  const int64_t total = rows * c.vocab_size;
  ParallelRows(pool_.get(), (total + kBlock - 1) / kBlock, kBlock * 16, [&](int64_t b, int64_t e) {
    const int64_t begin = b * kBlock;
    const int64_t n = std::min(total, e * kBlock) - begin;
    if (c.output_scale != 1.0f) backend_->scale(values + begin, c.output_scale, values + begin, n);
    if (c.final_logit_softcap > 0.0f) kernels::SoftCap(values + begin, c.final_logit_softcap, n);
  });
}

}  // namespace radixlm::model
