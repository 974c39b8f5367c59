// FakeModelRunner: a deterministic stand-in for the model, for scheduler / engine / server
// tests.
//
// Its "KV cache" stores, per slot, the token, its position and a rolling hash of the whole
// sequence up to it. Forward() checks every prefix slot it is given (right position, hash
// chain intact — so a slot freed and reused while still referenced, or a prefix pointing at
// another sequence's KV, is an Internal error), appends the new tokens, and returns logits that
// are a pseudo-random function of the full token sequence. The greedy output therefore depends
// on every prefix token being right, and ReferenceGreedy() gives the expected output of any
// prompt without batching or caching.
//
// Sliding-window rows (swa_kv_slots > 0): like a model whose windowed layers keep rows of
// their own, it also stores each new token's record in the row batch.swa_slot_map names, and
// checks, for every key the first query of a sequence can see within sliding_window
// positions, that its row still holds that very record — so windowed KV released or reused
// while a window still needs it is an Internal error.
//
// It also counts what it computed (forwards, tokens, per-batch maxima) for tests.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "scheduler/model_runner.h"

namespace radixlm {

struct FakeModelConfig {
  int32_t vocab_size = 64;
  int64_t context_length = 4096;
  int64_t max_batch_tokens = 1 << 20;
  int64_t kv_slots = 0;        // >= the pool's storage_slots()
  int64_t swa_kv_slots = 0;    // > 0: sliding-window rows (>= the pool's swa_storage_slots())
  int64_t sliding_window = 0;  // the window those rows serve
  // Wall time each Forward() takes at least (tests that must act while a request runs).
  std::chrono::microseconds forward_delay{0};
  // Non-zero: after one sequence in three (by its hash) the logits are another pseudo-random
  // function, so this runner is a second model that agrees with the default one on most
  // contexts (a draft model for speculative decoding tests).
  uint64_t logits_salt = 0;
  // Width of rows given in place of token embeddings (model::EmbeddingSpan; images): a given
  // row's first value stands for its position's token in the hash.
  int64_t hidden_size = 8;
};

class FakeModelRunner : public ModelRunner {
 public:
  explicit FakeModelRunner(const FakeModelConfig& config);

  int32_t vocab_size() const override { return config_.vocab_size; }
  int64_t context_length() const override { return config_.context_length; }
  int64_t max_batch_tokens() const override { return config_.max_batch_tokens; }
  int64_t hidden_size() const override { return config_.hidden_size; }
  int64_t kv_slots() const override { return config_.kv_slots; }
  int64_t swa_kv_slots() const override { return config_.swa_kv_slots; }
  Status Forward(const model::ForwardBatch& batch, model::ForwardOutput* out) override;
  // KV export / import: a slot's record (token, position, hash; 20 bytes), then, with
  // sliding-window rows, its windowed row's record.
  int64_t kv_token_bytes() const override;
  Status ReadKv(std::span<const int32_t> slots, std::span<const int32_t> swa_slots,
                std::span<uint8_t> out) override;
  Status WriteKv(std::span<const int32_t> slots, std::span<const int32_t> swa_slots,
                 std::span<const uint8_t> in) override;

  // The logits after a sequence whose rolling hash is `hash` ([vocab] values in [0, 8)).
  void FillLogits(uint64_t hash, float* logits) const;
  static uint64_t InitialHash();
  static uint64_t ExtendHash(uint64_t hash, int32_t token, int64_t position);
  // Greedy continuation of `prompt` by n tokens (argmax, ties to the lowest id), computed
  // directly — what any correct schedule must produce for a greedy request.
  std::vector<int32_t> ReferenceGreedy(std::span<const int32_t> prompt, int64_t n) const;

  // The next Forward() fails with Internal (to test error handling); with skip > 0, the one
  // after `skip` more successful calls.
  void FailNextForward(int64_t skip = 0) {
    fail_next_ = true;
    fail_skip_ = skip;
  }

  int64_t forward_calls() const { return forward_calls_; }
  int64_t tokens_computed() const { return tokens_computed_; }
  int64_t max_tokens_per_batch() const { return max_tokens_per_batch_; }
  int64_t max_sequences_per_batch() const { return max_sequences_per_batch_; }
  // Most new tokens of one sequence in one forward (the largest prefill chunk).
  int64_t max_chunk_tokens() const { return max_chunk_tokens_; }
  // Positions computed from given rows (embedding spans), over every Forward().
  int64_t embedding_rows() const { return embedding_rows_; }

 private:
  struct SlotKv {
    int32_t token = -1;
    int64_t position = -1;
    uint64_t hash = 0;
  };

  FakeModelConfig config_;
  // Sliding-window rows: checks sequence s's windowed keys and stores its new tokens' records.
  Status CheckWindowRows(const model::ForwardBatch& batch, const model::SequenceInput& seq,
                         const std::string& where) const;

  // The span of seq covering new token i, or null.
  static const model::EmbeddingSpan* EmbeddingSpanAt(const model::SequenceInput& seq, size_t i);

  std::vector<SlotKv> kv_;
  std::vector<SlotKv> swa_kv_;
  bool fail_next_ = false;
  int64_t fail_skip_ = 0;
  int64_t forward_calls_ = 0;
  int64_t tokens_computed_ = 0;
  int64_t max_tokens_per_batch_ = 0;
  int64_t max_sequences_per_batch_ = 0;
  int64_t max_chunk_tokens_ = 0;
  int64_t embedding_rows_ = 0;
};

}  // namespace radixlm
