// RecurrentState: the per-sequence state of a hybrid model's linear (gated DeltaNet) layers.
//
// A linear layer keeps no K/V: per sequence it keeps the last conv_kernel - 1 inputs of its
// causal convolution and one [S, S] delta-rule matrix per value head, a fixed size however long
// the sequence is. The state lives in numbered slots (the engine uses a request's row of the
// request-to-token table), each holding every linear layer's state after the tokens the
// sequence has run so far. The forward pass zeroes a slot when a sequence starts at position 0
// and advances it with each step; nothing else writes it. Not thread-safe: one forward at a
// time (KvCache owns it).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "model/model_config.h"
#include "util/status.h"

namespace radixlm::model {

// One sequence of a step, as the linear layers see it: its rows of the flattened batch and
// its state slot.
struct LinearSequence {
  int64_t first_token = 0;
  int64_t n_new = 0;
  int32_t state_slot = 0;
  // [n_new] or null: after new token t the state is also copied into slot checkpoints[t]
  // (none where -1), so that a caller can go back to it (rejected speculative drafts).
  const int32_t* checkpoints = nullptr;
  // The sequence position of its first new token (the chunked prefill's chunks start at
  // multiples of the chunk size in positions).
  int64_t first_position = 0;
};

class RecurrentState {
 public:
  // n_slots slots of every linear layer of `config` (a hybrid model). Zero-filled; pages are
  // committed only when a slot is first used. InvalidArgument for n_slots < 1 or a model
  // without linear layers; ResourceExhausted if the allocation fails.
  static StatusOr<std::unique_ptr<RecurrentState>> Create(const ModelConfig& config,
                                                          int64_t n_slots);
  // Bytes of one slot of `config`'s linear layers (0 for a model without them).
  static int64_t SlotBytes(const ModelConfig& config);

  int64_t n_slots() const { return n_slots_; }
  int64_t conv_floats() const { return conv_floats_; }    // (conv_kernel - 1) * channels
  int64_t delta_floats() const { return delta_floats_; }  // heads * S * S
  int64_t slot_bytes() const { return slot_floats_ * static_cast<int64_t>(sizeof(float)); }
  int64_t bytes() const { return slot_bytes() * n_slots_; }
  int64_t linear_layers() const { return layer_floats_ > 0 ? slot_floats_ / layer_floats_ : 0; }

  // Layer `layer`'s (a linear one) state in `slot`:
  //   Conv: [conv_kernel - 1, channels], the latest inputs, oldest first;
  //   Delta: [heads, S (key), S (value)], head h's matrix M (output o = M q) stored
  //   transposed, key-major (kernels/gated_delta.h).
  float* Conv(int64_t layer, int64_t slot);
  float* Delta(int64_t layer, int64_t slot);
  // Zeroes every layer's state in `slot` (a sequence starting over).
  void Clear(int64_t slot);
  // Copies every layer's state in slot `from` to slot `to` (a snapshot taken or resumed).
  void Copy(int64_t from, int64_t to);
  // Every layer's state in `slot` as bytes ([slot_bytes()]: per linear layer, its Conv then its
  // Delta floats), copied out or in (a snapshot moved to another server or to disk).
  // InvalidArgument for a slot out of range or a span of another size.
  Status ReadSlot(int64_t slot, std::span<uint8_t> out) const;
  Status WriteSlot(int64_t slot, std::span<const uint8_t> in);

 private:
  RecurrentState() = default;
  float* Layer(int64_t layer, int64_t slot);

  int64_t n_slots_ = 0;
  int64_t conv_floats_ = 0;
  int64_t delta_floats_ = 0;
  int64_t layer_floats_ = 0;          // conv + delta
  int64_t slot_floats_ = 0;           // every linear layer's
  std::vector<int64_t> layer_index_;  // [n_layers]: the linear layer's index, -1 for the others
  struct FreeDeleter {
    void operator()(float* p) const;
  };
  std::unique_ptr<float, FreeDeleter> data_;  // [n_slots][linear layers][conv, delta]
};

}  // namespace radixlm::model
