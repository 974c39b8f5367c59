#include "testing/fake_model_runner.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>

#include "util/split_mix.h"

namespace radixlm {

FakeModelRunner::FakeModelRunner(const FakeModelConfig& config)
    : config_(config),
      kv_(static_cast<size_t>(std::max<int64_t>(config.kv_slots, 1))),
      swa_kv_(static_cast<size_t>(std::max<int64_t>(config.swa_kv_slots, 0))) {}

Status FakeModelRunner::CheckWindowRows(const model::ForwardBatch& batch,
                                        const model::SequenceInput& seq,
                                        const std::string& where) const {
  const std::span<const int32_t> map = batch.swa_slot_map;
  auto row_of = [&](int32_t slot) -> int32_t {
    if (slot < 0 || static_cast<size_t>(slot) >= map.size()) return 0;
    const int32_t row = map[slot];
    return row > 0 && row < config_.swa_kv_slots ? row : 0;
  };
  const auto n_prefix = static_cast<int64_t>(seq.prefix_slots.size());
  const int64_t lo = std::max<int64_t>(0, n_prefix - config_.sliding_window + 1);
  for (int64_t j = lo; j < n_prefix; ++j) {
    const int32_t slot = seq.prefix_slots[j];
    const int32_t row = row_of(slot);
    const SlotKv& want = kv_[slot];
    if (row == 0 || swa_kv_[row].position != want.position || swa_kv_[row].hash != want.hash) {
      return Internal(where + "windowed KV of position " + std::to_string(j) + " (slot " +
                      std::to_string(slot) + ") is gone while position " +
                      std::to_string(n_prefix) + " still sees it");
    }
  }
  for (int32_t slot : seq.new_slots) {
    if (row_of(slot) == 0) return Internal(where + "a new token has no windowed row");
  }
  return Status::Ok();
}

namespace {

constexpr size_t kRecordBytes = sizeof(int32_t) + 2 * sizeof(uint64_t);

}  // namespace

int64_t FakeModelRunner::kv_token_bytes() const {
  return static_cast<int64_t>(kRecordBytes) * (config_.swa_kv_slots > 0 ? 2 : 1);
}

Status FakeModelRunner::ReadKv(std::span<const int32_t> slots, std::span<const int32_t> swa_slots,
                               std::span<uint8_t> out) {
  const bool swa = config_.swa_kv_slots > 0;
  if (out.size() != slots.size() * static_cast<size_t>(kv_token_bytes()) ||
      (swa && swa_slots.size() != slots.size())) {
    return InvalidArgument("fake KV read: size mismatch");
  }
  uint8_t* p = out.data();
  auto put = [&p](const SlotKv& r) {
    std::memcpy(p, &r.token, sizeof(int32_t));
    std::memcpy(p + 4, &r.position, sizeof(int64_t));
    std::memcpy(p + 12, &r.hash, sizeof(uint64_t));
    p += kRecordBytes;
  };
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i] <= 0 || static_cast<size_t>(slots[i]) >= kv_.size()) {
      return InvalidArgument("fake KV read: slot out of range");
    }
    put(kv_[slots[i]]);
    if (swa) {
      if (swa_slots[i] <= 0 || swa_slots[i] >= config_.swa_kv_slots) {
        return InvalidArgument("fake KV read: windowed row released");
      }
      put(swa_kv_[swa_slots[i]]);
    }
  }
  return Status::Ok();
}

Status FakeModelRunner::WriteKv(std::span<const int32_t> slots, std::span<const int32_t> swa_slots,
                                std::span<const uint8_t> in) {
  const bool swa = config_.swa_kv_slots > 0;
  if (in.size() != slots.size() * static_cast<size_t>(kv_token_bytes()) ||
      (swa && swa_slots.size() != slots.size())) {
    return InvalidArgument("fake KV write: size mismatch");
  }
  const uint8_t* p = in.data();
  auto get = [&p](SlotKv& r) {
    std::memcpy(&r.token, p, sizeof(int32_t));
    std::memcpy(&r.position, p + 4, sizeof(int64_t));
    std::memcpy(&r.hash, p + 12, sizeof(uint64_t));
    p += kRecordBytes;
  };
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i] <= 0 || static_cast<size_t>(slots[i]) >= kv_.size()) {
      return InvalidArgument("fake KV write: slot out of range");
    }
    get(kv_[slots[i]]);
    if (swa) {
      if (swa_slots[i] <= 0 || swa_slots[i] >= config_.swa_kv_slots) {
        return InvalidArgument("fake KV write: windowed row released");
      }
      get(swa_kv_[swa_slots[i]]);
    }
  }
  return Status::Ok();
}

uint64_t FakeModelRunner::InitialHash() { return 0x5eed5eed5eedULL; }

uint64_t FakeModelRunner::ExtendHash(uint64_t hash, int32_t token, int64_t position) {
  return SplitMix64(hash ^ (static_cast<uint64_t>(static_cast<uint32_t>(token)) << 20) ^
                    static_cast<uint64_t>(position));
}

void FakeModelRunner::FillLogits(uint64_t hash, float* logits) const {
  if (config_.logits_salt != 0 && SplitMix64(hash) % 3 == 0) hash ^= config_.logits_salt;
  for (int32_t t = 0; t < config_.vocab_size; ++t) {
    const uint64_t r = SplitMix64(hash + 0x1234567ULL * static_cast<uint64_t>(t + 1));
    logits[t] = static_cast<float>(r >> 40) * (8.0f / static_cast<float>(1 << 24));
  }
}

std::vector<int32_t> FakeModelRunner::ReferenceGreedy(std::span<const int32_t> prompt,
                                                      int64_t n) const {
  uint64_t h = InitialHash();
  int64_t pos = 0;
  for (int32_t t : prompt) h = ExtendHash(h, t, pos++);
  std::vector<float> logits(config_.vocab_size);
  std::vector<int32_t> out;
  for (int64_t i = 0; i < n; ++i) {
    FillLogits(h, logits.data());
    const auto best =
        static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    out.push_back(best);
    h = ExtendHash(h, best, pos++);
  }
  return out;
}

const model::EmbeddingSpan* FakeModelRunner::EmbeddingSpanAt(const model::SequenceInput& seq,
                                                             size_t i) {
  for (const model::EmbeddingSpan& e : seq.embedding_spans) {
    if (static_cast<int64_t>(i) >= e.begin && static_cast<int64_t>(i) < e.begin + e.n) return &e;
  }
  return nullptr;
}

Status FakeModelRunner::Forward(const model::ForwardBatch& batch, model::ForwardOutput* out) {
  if (config_.forward_delay.count() > 0) std::this_thread::sleep_for(config_.forward_delay);
  if (fail_next_ && fail_skip_ > 0) {
    --fail_skip_;
  } else if (fail_next_) {
    fail_next_ = false;
    return Internal("fake forward failure");
  }
  if (batch.sequences.empty()) return InvalidArgument("empty batch");
  const int64_t vocab = config_.vocab_size;
  int64_t n_tokens = 0, n_rows = 0;
  for (size_t s = 0; s < batch.sequences.size(); ++s) {
    const model::SequenceInput& seq = batch.sequences[s];
    const std::string where = "sequence " + std::to_string(s) + ": ";
    if (seq.tokens.empty() || seq.tokens.size() != seq.new_slots.size()) {
      return InvalidArgument(where + "tokens / new_slots mismatch");
    }
    const int64_t n_new = static_cast<int64_t>(seq.tokens.size());
    if (static_cast<int64_t>(seq.prefix_slots.size()) + n_new > config_.context_length) {
      return InvalidArgument(where + "beyond the context length");
    }
    for (size_t i = 0; i < seq.tokens.size(); ++i) {
      const int32_t t = seq.tokens[i];
      if ((t < 0 || t >= vocab) && EmbeddingSpanAt(seq, i) == nullptr) {
        return InvalidArgument(where + "token out of range");
      }
    }
    for (const model::EmbeddingSpan& e : seq.embedding_spans) {
      if (e.begin < 0 || e.n < 1 || e.begin + e.n > n_new || e.rows == nullptr) {
        return InvalidArgument(where + "bad embedding span");
      }
    }
    embedding_rows_ += [&] {
      int64_t n = 0;
      for (const model::EmbeddingSpan& e : seq.embedding_spans) n += e.n;
      return n;
    }();
    n_tokens += n_new;
    n_rows += seq.logits == model::LogitsMode::kAll    ? n_new
              : seq.logits == model::LogitsMode::kLast ? 1
                                                       : 0;
    max_chunk_tokens_ = std::max(max_chunk_tokens_, n_new);
  }
  if (n_tokens > config_.max_batch_tokens) return InvalidArgument("batch too large");
  ++forward_calls_;
  tokens_computed_ += n_tokens;
  max_tokens_per_batch_ = std::max(max_tokens_per_batch_, n_tokens);
  max_sequences_per_batch_ =
      std::max<int64_t>(max_sequences_per_batch_, static_cast<int64_t>(batch.sequences.size()));

  out->vocab_size = vocab;
  out->n_rows = n_rows;
  out->logits.resize(static_cast<size_t>(std::max<int64_t>(n_rows, 1) * vocab));
  out->row_offset.assign(batch.sequences.size(), 0);
  out->row_count.assign(batch.sequences.size(), 0);

  int64_t row = 0;
  for (size_t s = 0; s < batch.sequences.size(); ++s) {
    const model::SequenceInput& seq = batch.sequences[s];
    const std::string where = "sequence " + std::to_string(s) + ": ";
    uint64_t h = InitialHash();
    int64_t pos = 0;
    for (int32_t slot : seq.prefix_slots) {
      if (slot <= 0 || slot >= config_.kv_slots) return Internal(where + "bad prefix slot");
      const SlotKv& kv = kv_[slot];
      if (kv.position != pos || kv.hash != ExtendHash(h, kv.token, pos)) {
        return Internal(where + "prefix slot " + std::to_string(slot) + " at position " +
                        std::to_string(pos) + " holds someone else's KV");
      }
      h = kv.hash;
      ++pos;
    }
    if (config_.swa_kv_slots > 0) {
      RADIXLM_RETURN_IF_ERROR(CheckWindowRows(batch, seq, where));
    }
    out->row_offset[s] = row;
    const int64_t n_new = static_cast<int64_t>(seq.tokens.size());
    const bool tree = !seq.tree_depth.empty();
    if (tree && (seq.tree_depth.size() != seq.tokens.size() ||
                 seq.tree_mask.size() != seq.tokens.size() || n_new > 64)) {
      return InvalidArgument(where + "malformed draft tree");
    }
    std::vector<uint64_t> node_hash(tree ? n_new : 0);
    const uint64_t prefix_hash = h;
    const int64_t prefix_len = pos;
    for (int64_t i = 0; i < n_new; ++i) {
      const int32_t slot = seq.new_slots[i];
      if (slot <= 0 || slot >= config_.kv_slots) return Internal(where + "bad new slot");
      if (tree) {  // continue the parent's sequence (the highest other bit of the mask)
        const uint64_t ancestors = seq.tree_mask[i] & ~(uint64_t{1} << i);
        const int parent = ancestors == 0 ? -1 : 63 - __builtin_clzll(ancestors);
        h = parent < 0 ? prefix_hash : node_hash[parent];
        pos = prefix_len + seq.tree_depth[i];
      }
      // A given row stands for its token: the hash takes the row's first value's bits (so
      // different rows under the same id give different KV).
      int32_t token = seq.tokens[i];
      if (const model::EmbeddingSpan* e = EmbeddingSpanAt(seq, static_cast<size_t>(i))) {
        uint32_t bits = 0;
        std::memcpy(&bits, e->rows + (i - e->begin) * config_.hidden_size, sizeof(bits));
        token = static_cast<int32_t>(bits & 0x7fffffff) ^ token;
      }
      h = ExtendHash(h, token, pos);
      kv_[slot] = SlotKv{token, pos, h};
      if (config_.swa_kv_slots > 0) swa_kv_[batch.swa_slot_map[slot]] = kv_[slot];
      if (tree) node_hash[i] = h;
      ++pos;
      const bool want = seq.logits == model::LogitsMode::kAll ||
                        (seq.logits == model::LogitsMode::kLast && i == n_new - 1);
      if (want) FillLogits(h, out->logits.data() + (row++) * vocab);
    }
    out->row_count[s] = row - out->row_offset[s];
  }
  return Status::Ok();
}

}  // namespace radixlm
