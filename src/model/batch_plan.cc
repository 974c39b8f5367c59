#include "model/batch_plan.h"

#include <algorithm>
#include <bit>
#include <string>

namespace radixlm::model {

namespace {

bool SlotsInRange(std::span<const int32_t> slots, int64_t n_slots) {
  for (int32_t s : slots) {
    if (s < 0 || s >= n_slots) return false;
  }
  return true;
}

// A draft tree: node 0 the root (depth 0, mask bit 0); node i's mask is its parent's (an
// earlier node, the highest other bit) plus bit i, and its depth is the parent's plus one.
Status CheckTree(const SequenceInput& in, const std::string& where) {
  const size_t n = in.tokens.size();
  if (in.tree_depth.size() != n || in.tree_mask.size() != n) {
    return InvalidArgument(where + "tree_depth and tree_mask must both have one entry per token");
  }
  if (n > 64) return InvalidArgument(where + "a draft tree has at most 64 nodes");
  for (size_t i = 0; i < n; ++i) {
    const uint64_t self = uint64_t{1} << i;
    const uint64_t mask = in.tree_mask[i];
    const uint64_t ancestors = mask & ~self;
    bool ok = (mask & self) != 0 && (mask >> i) == 1;  // itself, and no later node
    if (ok && i == 0) ok = ancestors == 0 && in.tree_depth[0] == 0;
    if (ok && i > 0) {
      const int parent = 63 - std::countl_zero(ancestors | 1);
      ok = ancestors != 0 && in.tree_mask[parent] == ancestors &&
           in.tree_depth[i] == in.tree_depth[parent] + 1;
    }
    if (!ok) return InvalidArgument(where + "tree node " + std::to_string(i) + " is malformed");
  }
  return Status::Ok();
}

}  // namespace

Status BatchPlan::Build(const ForwardBatch& batch, int64_t vocab_size, int64_t n_slots,
                        int64_t max_tokens, int64_t max_positions, int64_t n_swa_slots,
                        int64_t swa_window) {
  tokens.clear();
  swa_new_slots.clear();
  swa_kv_slots.clear();
  positions.clear();
  rope_positions.clear();
  new_slots.clear();
  kv_slots.clear();
  sequences.clear();
  attention.clear();
  logit_rows.clear();
  embedding_rows.clear();
  last_key.clear();
  n_tokens = 0;
  if (batch.sequences.empty()) return InvalidArgument("forward batch has no sequences");

  int64_t total_new = 0;
  for (size_t s = 0; s < batch.sequences.size(); ++s) {
    const SequenceInput& in = batch.sequences[s];
    const std::string where = "forward batch sequence " + std::to_string(s) + ": ";
    if (in.tokens.empty()) return InvalidArgument(where + "no new tokens");
    if (in.new_slots.size() != in.tokens.size()) {
      return InvalidArgument(where + std::to_string(in.tokens.size()) + " tokens but " +
                             std::to_string(in.new_slots.size()) + " new slots");
    }
    RADIXLM_RETURN_IF_ERROR(CheckEmbeddingSpans(in, where));
    size_t span = 0;
    for (size_t i = 0; i < in.tokens.size(); ++i) {
      while (span < in.embedding_spans.size() &&
             in.embedding_spans[span].begin + in.embedding_spans[span].n <=
                 static_cast<int64_t>(i)) {
        ++span;
      }
      if (span < in.embedding_spans.size() &&
          in.embedding_spans[span].begin <= static_cast<int64_t>(i)) {
        continue;  // the row is given; the id is not a vocabulary id
      }
      const int32_t t = in.tokens[i];
      if (t < 0 || t >= vocab_size) {
        return InvalidArgument(where + "token id " + std::to_string(t) + " outside [0, " +
                               std::to_string(vocab_size) + ")");
      }
    }
    if (!SlotsInRange(in.new_slots, n_slots) || !SlotsInRange(in.prefix_slots, n_slots)) {
      return InvalidArgument(where + "KV slot outside [0, " + std::to_string(n_slots) + ")");
    }
    if (!in.tree_depth.empty() || !in.tree_mask.empty()) {
      RADIXLM_RETURN_IF_ERROR(CheckTree(in, where));
    }
    if (!in.rope_positions.empty()) {
      if (in.rope_positions.size() != 3 * in.tokens.size()) {
        return InvalidArgument(where + std::to_string(in.tokens.size()) + " tokens but " +
                               std::to_string(in.rope_positions.size()) +
                               " rotary positions (3 per token)");
      }
      for (int64_t p : in.rope_positions) {
        if (p < 0 || p >= max_positions) {
          return InvalidArgument(where + "rotary position " + std::to_string(p) + " outside [0, " +
                                 std::to_string(max_positions) + ")");
        }
      }
    }
    const int64_t n_kv = static_cast<int64_t>(in.prefix_slots.size() + in.tokens.size());
    if (n_kv > max_positions) {
      return InvalidArgument(where + "sequence length " + std::to_string(n_kv) +
                             " exceeds the limit of " + std::to_string(max_positions));
    }
    total_new += static_cast<int64_t>(in.tokens.size());
  }
  if (total_new > max_tokens) {
    return InvalidArgument("forward batch has " + std::to_string(total_new) +
                           " new tokens; the limit (max_batch_tokens) is " +
                           std::to_string(max_tokens));
  }
  const bool any_rope_positions =
      std::any_of(batch.sequences.begin(), batch.sequences.end(),
                  [](const SequenceInput& in) { return !in.rope_positions.empty(); });

  for (const SequenceInput& in : batch.sequences) {
    Sequence seq;
    seq.first_token = n_tokens;
    seq.n_new = static_cast<int64_t>(in.tokens.size());
    const int64_t n_prefix = static_cast<int64_t>(in.prefix_slots.size());
    tokens.insert(tokens.end(), in.tokens.begin(), in.tokens.end());
    for (const EmbeddingSpan& e : in.embedding_spans) {
      std::fill_n(tokens.begin() + seq.first_token + e.begin, e.n, 0);
      embedding_rows.push_back({seq.first_token + e.begin, e.n, e.rows});
    }
    new_slots.insert(new_slots.end(), in.new_slots.begin(), in.new_slots.end());
    if (in.tree_depth.empty()) {
      const auto offset = static_cast<int64_t>(kv_slots.size());
      kv_slots.insert(kv_slots.end(), in.prefix_slots.begin(), in.prefix_slots.end());
      kv_slots.insert(kv_slots.end(), in.new_slots.begin(), in.new_slots.end());
      for (int64_t i = 0; i < seq.n_new; ++i) positions.push_back(n_prefix + i);
      attention.push_back({seq.first_token, seq.n_new, offset, n_prefix + seq.n_new});
    } else {
      for (int64_t i = 0; i < seq.n_new; ++i) {
        const int64_t depth = in.tree_depth[i];
        positions.push_back(n_prefix + depth);
        const auto offset = static_cast<int64_t>(kv_slots.size());
        kv_slots.insert(kv_slots.end(), in.prefix_slots.begin(), in.prefix_slots.end());
        for (int j = 0; j <= i; ++j) {  // ancestors in index order are in depth order
          if ((in.tree_mask[i] >> j) & 1) kv_slots.push_back(in.new_slots[j]);
        }
        attention.push_back({seq.first_token + i, 1, offset, n_prefix + depth + 1});
      }
    }

    if (any_rope_positions) {
      if (!in.rope_positions.empty()) {
        rope_positions.insert(rope_positions.end(), in.rope_positions.begin(),
                              in.rope_positions.end());
      } else {
        for (auto p = positions.end() - seq.n_new; p != positions.end(); ++p) {
          rope_positions.insert(rope_positions.end(), {*p, *p, *p});
        }
      }
    }

    bool bidirectional = false;
    for (const EmbeddingSpan& e : in.embedding_spans) bidirectional |= e.bidirectional;
    // last_key covers every token of the batch once any sequence has a bidirectional span
    // (those before it: their positions, the causal rule).
    if (bidirectional && last_key.size() < static_cast<size_t>(seq.first_token)) {
      last_key.assign(positions.begin(), positions.begin() + seq.first_token);
    }
    if (bidirectional || !last_key.empty()) {
      last_key.insert(last_key.end(), positions.end() - seq.n_new, positions.end());
      for (const EmbeddingSpan& e : in.embedding_spans) {
        if (!e.bidirectional) continue;
        const int64_t last = n_prefix + e.begin + e.n - 1;  // (a chain: position = index)
        std::fill_n(last_key.begin() + seq.first_token + e.begin, e.n, last);
      }
    }

    seq.first_logit = static_cast<int64_t>(logit_rows.size());
    switch (in.logits) {
      case LogitsMode::kLast:
        logit_rows.push_back(static_cast<int32_t>(n_tokens + seq.n_new - 1));
        break;
      case LogitsMode::kAll:
        for (int64_t i = 0; i < seq.n_new; ++i) {
          logit_rows.push_back(static_cast<int32_t>(n_tokens + i));
        }
        break;
      case LogitsMode::kNone:
        break;
    }
    seq.n_logits = static_cast<int64_t>(logit_rows.size()) - seq.first_logit;
    n_tokens += seq.n_new;
    sequences.push_back(seq);
  }
  if (n_swa_slots > 0) return TranslateSwa(batch.swa_slot_map, n_swa_slots, swa_window);
  return Status::Ok();
}

Status BatchPlan::CheckEmbeddingSpans(const SequenceInput& in, const std::string& where) const {
  if (in.embedding_spans.empty()) return Status::Ok();
  if (!in.tree_depth.empty()) {
    return InvalidArgument(where + "embedding spans are not supported in a draft tree");
  }
  int64_t end = 0;
  for (const EmbeddingSpan& e : in.embedding_spans) {
    if (e.n < 1 || e.begin < end || e.begin + e.n > static_cast<int64_t>(in.tokens.size()) ||
        e.rows == nullptr) {
      return InvalidArgument(where + "embedding span [" + std::to_string(e.begin) + ", " +
                             std::to_string(e.begin + e.n) +
                             ") is empty, out of order or outside the sequence's " +
                             std::to_string(in.tokens.size()) + " new tokens");
    }
    end = e.begin + e.n;
  }
  return Status::Ok();
}

Status BatchPlan::TranslateSwa(std::span<const int32_t> map, int64_t n_swa_slots,
                               int64_t swa_window) {
  constexpr int32_t kReleased = 0;  // the padding row: no windowed KV (KvPool::kPaddingSlot)
  if (map.empty()) {
    return InvalidArgument(
        "the KV cache keeps sliding-window layers apart but the batch has no "
        "swa_slot_map");
  }
  auto translate = [&](const std::vector<int32_t>& from, std::vector<int32_t>& to) -> Status {
    to.resize(from.size());
    for (size_t i = 0; i < from.size(); ++i) {
      const int32_t slot = from[i];
      if (slot >= static_cast<int64_t>(map.size()) || map[slot] < 0 || map[slot] >= n_swa_slots) {
        return InvalidArgument("KV slot " + std::to_string(slot) +
                               " has no valid sliding-window row in the batch's swa_slot_map");
      }
      to[i] = map[slot];
    }
    return Status::Ok();
  };
  RADIXLM_RETURN_IF_ERROR(translate(new_slots, swa_new_slots));
  RADIXLM_RETURN_IF_ERROR(translate(kv_slots, swa_kv_slots));
  for (const int32_t row : swa_new_slots) {
    if (row == kReleased) return InvalidArgument("a new token has no sliding-window KV row");
  }
  // Every key a windowed layer will read must still be there (its first query sees the most).
  for (const AttentionEntry& e : attention) {
    const int64_t q0 = positions[e.first_token];
    const int64_t lo = swa_window > 0 ? std::max<int64_t>(0, q0 - swa_window + 1) : 0;
    for (int64_t j = lo; j < e.n_kv; ++j) {
      if (swa_kv_slots[e.kv_offset + j] == kReleased) {
        return InvalidArgument("sliding-window KV of position " + std::to_string(j) +
                               " was released but position " + std::to_string(q0) +
                               " still attends to it");
      }
    }
  }
  return Status::Ok();
}

}  // namespace radixlm::model
