// Model: a loaded decoder-only transformer of any registered family (model/families/) and its
// CPU forward pass over ragged batches.
//
// Ownership: the Model owns the mapped GgufFile (weights are views into it), a persistent
// ThreadPool and the activation scratch. The KV cache is a separate KvCache object (sized by
// the cache module) passed to each Forward().
//
// Thread-safety: Forward() mutates the scratch and the cache; call it from one thread at a time
// (the engine's scheduler thread). Accessors are const and safe from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "model/batch_plan.h"
#include "model/forward_batch.h"
#include "model/forward_scratch.h"
#include "model/kv_cache.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "model/rotary.h"
#include "util/status.h"
#include "util/thread_pool.h"

namespace radixlm::model {

struct PendingResidual;  // model/transformer_layer.h

// How a hybrid model's gated DeltaNet layers run a sequence's new tokens (model/gated_delta_net.h).
enum class LinearAttnPrefill {
  kRecurrent,  // token by token: a row's outputs never depend on how its prompt was split
  kChunked,    // several new tokens in chunks of kernels::kGatedDeltaChunk positions: faster,
               // outputs depend (within float rounding) on where the prompt's chunks start
};

// "recurrent" | "chunked" (--linear-attn-prefill); InvalidArgument naming the flag otherwise.
StatusOr<LinearAttnPrefill> ParseLinearAttnPrefill(const std::string& name);

struct ModelOptions {
  int n_threads = 0;                // <= 0: one per hardware thread
  int64_t max_batch_tokens = 2048;  // new tokens per Forward() (sum over sequences)
  int64_t max_context = 0;          // positions per sequence; <= 0: config.context_length
  // Hears the weights' load progress (load_progress.h) on the loading thread, throttled by a
  // LoadProgressThrottle with its defaults: nothing for a load under 2 s, else an update every
  // 2 s and 10 % at most, then the done one. Null: no reports.
  LoadProgressFn on_load_progress = nullptr;
  // An embedding model (--is-embedding): Forward()'s output rows are the final-normed hidden
  // states ([rows, hidden_size]; ForwardOutput::vocab_size is hidden_size), not logits; the
  // LM head is never applied.
  bool output_hidden_states = false;
  // --linear-attn-prefill (hybrid models; ignored by the others).
  LinearAttnPrefill linear_attn_prefill = LinearAttnPrefill::kRecurrent;
};

class Model {
 public:
  // Opens and maps the GGUF file, reads the config, checks every tensor.
  static StatusOr<std::unique_ptr<Model>> Load(const std::string& path,
                                               const ModelOptions& options = {});
  static StatusOr<std::unique_ptr<Model>> FromGguf(std::unique_ptr<gguf::GgufFile> file,
                                                   const ModelOptions& options = {});
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return *weights_; }
  const gguf::GgufFile& gguf() const { return *file_; }
  const ModelOptions& options() const { return options_; }
  ThreadPool* pool() { return pool_.get(); }
  // Resident bytes by kind: the weights the forward pass reads (ModelWeights::resident_bytes)
  // and the activation scratch (ForwardScratch, sized at load). Fixed after load.
  int64_t weights_bytes() const { return weights_->resident_bytes(); }
  int64_t scratch_bytes() const { return scratch_->bytes(); }

  // A cache shaped for this model.
  StatusOr<std::unique_ptr<KvCache>> CreateKvCache(const KvCacheOptions& options) const;

  // out = token_embd[tokens] ([n, hidden]), as the forward pass reads it (through the
  // mapping, or from the file where the table's pages were released). Forward()'s thread only.
  Status Embed(const int32_t* tokens, int64_t n, float* out);

  // Runs every sequence of `batch` one step: writes the new tokens' K/V into `cache` and
  // fills `out` with the requested logits. InvalidArgument for a malformed batch (see
  // BatchPlan::Build) or a cache of another shape; nothing is written then.
  Status Forward(const ForwardBatch& batch, KvCache& cache, ForwardOutput* out);

 private:
  Model() = default;
  // scratch per_layer_inputs for this step's tokens (gemma4; ModelConfig::
  // per_layer_input_size), from the scaled embeddings in scratch x.
  void ComputePerLayerInputs();
  // out = token_embd[plan_.tokens] [n, hidden]: through the backend's embed, or read from the
  // file where the table's pages were released (ModelWeights::embed_reads_file).
  Status EmbedTokens(int64_t n, float* out);
  void ComputeLogits(ForwardOutput* out, const PendingResidual& pending);
  // ForwardBatch::output_hidden: applies `pending` to every row, writes out->hidden, and
  // moves the logit rows of x to its front (what ComputeLogits then reads).
  void OutputHidden(ForwardOutput* out, const PendingResidual& pending);
  // A hybrid model's: checks the batch's state slots, fills linear_seqs_ and zeroes the state
  // of sequences starting at position 0.
  Status PrepareRecurrentState(const ForwardBatch& batch, KvCache& cache);
  // Each row's LoRA adapter this step (lora_rows_ [n_tokens], lora_logit_rows_ for the rows
  // kept after the last attention); both empty when no sequence has one.
  void PrepareLoraRows(const ForwardBatch& batch);

  std::unique_ptr<gguf::GgufFile> file_;
  ModelConfig config_;
  ModelOptions options_;
  std::unique_ptr<ModelWeights> weights_;
  std::unique_ptr<ThreadPool> pool_;
  const kernels::KernelBackend* backend_ = nullptr;  // chosen at load; every kernel goes here

  // RoPE variants (gemma3: local and global) and the variant of each layer (-1: no RoPE).
  std::vector<RotaryEmbedding> rope_variants_;
  std::vector<int> layer_rope_variant_;  // [n_layers]

  std::unique_ptr<ForwardScratch> scratch_;
  BatchPlan plan_;
  int64_t prepared_q_size_ = 0;              // the row width the attention sequences point with
  std::vector<LinearSequence> linear_seqs_;  // a hybrid model's sequences, this step
  std::vector<const LoraAdapter*> lora_rows_;
  std::vector<uint8_t> embed_row_;  // EmbedTokens: one row's bytes read from the file
  std::vector<const LoraAdapter*> lora_logit_rows_;
  std::vector<float> lora_scratch_;  // LoraRows::scratch
};

}  // namespace radixlm::model
