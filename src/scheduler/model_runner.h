// ModelRunner: the forward pass as the scheduler sees it. One virtual call per batch.
//
// Implementations: ModelBackedRunner (the real Model plus its KvCache, model_backed_runner.h)
// and FakeModelRunner (a deterministic stand-in for tests, testing/fake_model_runner.h).
//
// Contract: Forward() runs every sequence of the batch one step, writing the K/V of the new
// tokens into the slots the batch names (which the scheduler took from its KvPool) and filling
// `out` with the logits the batch asks for (see model/forward_batch.h). The runner owns the KV
// storage; it has at least kv_slots() slots, which must cover KvPool::storage_slots().
// Called only from the scheduler thread.
#pragma once

#include <cstdint>
#include <span>

#include "model/forward_batch.h"
#include "util/status.h"
#include "util/thread_pool.h"

namespace radixlm {

namespace model {
class KvCache;
}  // namespace model

// Bytes a runner holds in memory, by kind (the server's /get_server_info and /metrics).
struct RunnerMemory {
  int64_t weights_bytes = 0;  // what the forward pass reads of the weights (packed copies, ...)
  int64_t kv_bytes = 0;       // the KV storage allocated for kv_slots()
  int64_t scratch_bytes = 0;  // activation buffers of the forward pass
  // A hybrid model's linear-layer state slots as allocated (running requests' and the radix
  // tree's snapshots; pages never written cost nothing yet).
  int64_t state_bytes = 0;
};

class ModelRunner {
 public:
  virtual ~ModelRunner() = default;

  virtual int32_t vocab_size() const = 0;
  // Most positions one sequence may have (the model's context length, or less).
  virtual int64_t context_length() const = 0;
  // Most new tokens one Forward() accepts, summed over its sequences.
  virtual int64_t max_batch_tokens() const = 0;
  // KV slots the runner's storage has.
  virtual int64_t kv_slots() const = 0;
  // Rows its sliding-window layers have of their own (addressed through the batch's
  // swa_slot_map); 0: those layers use kv_slots() rows like the rest.
  virtual int64_t swa_kv_slots() const { return 0; }

  virtual Status Forward(const model::ForwardBatch& batch, model::ForwardOutput* out) = 0;
  // True for an encoder (engine/encoder_runner.h): every prompt must reach Forward() whole, in
  // one sequence with no prefix, so the scheduler never cuts one into chunks.
  virtual bool runs_whole_prompts() const { return false; }

  // KV export and import, for the disk tier (cache/disk_store.h). kv_token_bytes(): bytes of
  // one token's KV over every layer; 0 when the runner cannot move KV (no disk tier then).
  // ReadKv copies the KV of `slots` into out ([slots.size()][kv_token_bytes()], token-major);
  // WriteKv stores such bytes into `slots`. swa_slots names, per slot, the row its
  // sliding-window layers use when the runner keeps them apart (swa_kv_slots() > 0; then
  // every entry must be a held row), else it is ignored. InvalidArgument on a size mismatch.
  virtual int64_t kv_token_bytes() const { return 0; }
  virtual Status ReadKv(std::span<const int32_t> /*slots*/, std::span<const int32_t> /*swa_slots*/,
                        std::span<uint8_t> /*out*/) {
    return Unimplemented("this model runner cannot export KV");
  }
  virtual Status WriteKv(std::span<const int32_t> /*slots*/, std::span<const int32_t> /*swa_slots*/,
                         std::span<const uint8_t> /*in*/) {
    return Unimplemented("this model runner cannot import KV");
  }
  // The KV storage itself, for copying a prefix's rows between servers (prefill/decode
  // disaggregation, engine/prefix_kv.h); null: the runner does not expose it.
  virtual model::KvCache* kv_cache() { return nullptr; }

  // A hybrid model's linear-layer state (model/recurrent_state.h): how many slots the runner
  // keeps (0: the model has no such layers), the bytes of one, and a copy of every layer's
  // state from slot `from` to slot `to` (the radix cache's snapshots, taken and resumed).
  // A sequence's SequenceInput::state_slot names its slot.
  virtual int64_t state_slots() const { return 0; }
  virtual int64_t state_slot_bytes() const { return 0; }
  virtual Status CopyState(int32_t /*from*/, int32_t /*to*/) {
    return Unimplemented("this model runner keeps no recurrent state");
  }
  // A slot's state as state_slot_bytes() bytes, copied out or in (the disk tier's snapshots).
  // InvalidArgument for a slot out of range or a span of another size.
  virtual Status ReadState(int32_t /*slot*/, std::span<uint8_t> /*out*/) {
    return Unimplemented("this model runner keeps no recurrent state");
  }
  virtual Status WriteState(int32_t /*slot*/, std::span<const uint8_t> /*in*/) {
    return Unimplemented("this model runner keeps no recurrent state");
  }

  // A NextN draft runner's (engine/nextn_runner.h): the width of the target's hidden states
  // each new token of its sequences takes (SequenceInput::nextn_hidden); 0 for the others.
  virtual int64_t nextn_hidden_size() const { return 0; }
  // The width of rows given in place of token embeddings (model/forward_batch.h EmbeddingSpan):
  // the model's hidden size, times 1 + its deepstack layers (qwen3vl); 0: the runner does not
  // say.
  virtual int64_t hidden_size() const { return 0; }

  // Worker threads the scheduler may borrow between forwards (for sampling); null: none.
  virtual ThreadPool* thread_pool() { return nullptr; }

  // What the runner holds (zeros: it does not say, e.g. a fake).
  virtual RunnerMemory memory() const { return {}; }
};

}  // namespace radixlm
