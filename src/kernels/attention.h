// Causal multi-head attention over a slot-indexed KV cache (one layer).
//
// KV storage: per layer, K and V are arrays of rows, one row per cache slot; a row holds
// row_elems = n_kv_heads * head_dim half-precision values (F16 or BF16), head-major
// ([n_kv_heads, head_dim]). Which slots belong to a sequence is given per call by kv_slots.
//
// Masking: query i (at absolute position q_pos[i]) sees the key at sequence position j
// (j in [0, n_kv), stored in slot kv_slots[j]) iff
//   j <= q_pos[i]                                   (causal)
//   and (window == 0 or q_pos[i] - j < window)      (sliding window)
// This covers prefill of new tokens after a cached prefix (store the new K/V first, then pass
// n_kv = prefix + new) and decode (n_q = 1). Every query must see at least one key
// (q_pos[i] < n_kv). GQA: query head h uses kv head h / (n_heads / n_kv_heads).
//
// Numerics (the same on every ISA, and for every batch, chunking, tiling and pool size):
//   q'    = q * scale if scale_query (Gemma graphs scale Q), else q; in float (an F16 or
//           fp8_e5m2 cache: as llama.cpp's batched flash attention, which keeps Q in F32, and
//           the exact math; llama.cpp's one-query kernel rounds Q to F16, which moved confident
//           next tokens of gpt-oss against llama.cpp's batch: tests/model/llama_cpp/README.md),
//           rounded to BF16 with a BF16 cache (llama.cpp's kernel for one does so)
//   s_j   = dot(q', k_j) (* scale unless scale_query); if logit_softcap > 0,
//           s_j = softcap * tanh(s_j / softcap)
// then a flash-style softmax over fixed chunks of kChunk = 256 key positions (chunk c covers
// positions [256 c, 256 c + 256), whatever the query): per chunk, over the keys the query sees,
//   m_c = max s_j,  l_c = sum_j ggml_v_expf(s_j - m_c),  o_c = sum_j ggml_v_expf(s_j - m_c) v_j
// and the chunk states are folded in chunk order (the first copied; then m = max(M, m_c),
// O = O e^(M - m) + o_c e^(m_c - m), L alike); out = O / L.
// The Q·K dot products and the sums l_c run in ggml's AVX2 order: 8 float lanes, lane l taking
// the terms whose index (head dim d, or key position j) is l mod 8, in ascending order with
// fused multiply-adds (dots) or in float per aligned group of 8 then in double (l_c), and the
// lanes reduced as ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)) (kernels/cpu/attention_impl.h). o_c
// keeps one fused multiply-add accumulator per output element over the keys in ascending order.
// (With an fp8_e5m2 cache each key and value is the E5M2 value, exact in F16.)
// Work is split across the pool over (sequence, kv head, query tile) and, for long contexts
// with few queries (decode), also over ranges of whole chunks, whose states are then folded in
// the same order. pool may be null.
#pragma once

#include <cstdint>
#include <span>

#include "util/thread_pool.h"

namespace radixlm::kernels {

// The KV cache's element type. kFp8E5M2 (SGLang's --kv-cache-dtype fp8_e5m2) stores each value
// as F16's top byte, rounded (kernels/fp16.h): half the memory of F16, with 2 mantissa bits.
// The integer values are part of the KV wire and disk formats: append only.
enum class KvDtype { kF16 = 0, kBF16 = 1, kFp8E5M2 = 2 };

// Bytes of one cached value.
constexpr int KvDtypeBytes(KvDtype dtype) { return dtype == KvDtype::kFp8E5M2 ? 1 : 2; }
// "f16", "bf16", "fp8_e5m2".
const char* KvDtypeName(KvDtype dtype);

struct KvLayerView {
  KvDtype dtype = KvDtype::kF16;
  void* k = nullptr;  // [n_slots, row_elems] values of dtype (KvDtypeBytes each)
  // [n_slots, row_elems], or null for a latent cache (multi-head latent attention): there is
  // no V plane, and V head h is the first AttentionParams::v_head_dim values of K head h.
  void* v = nullptr;
  int64_t row_elems = 0;  // n_kv_heads * head_dim
};

// Converts and writes one token's K and V rows (each [row_elems] floats) into `slot` (K only
// for a latent view: v_row is not read).
void StoreKv(const KvLayerView& kv, int32_t slot, const float* k_row, const float* v_row);
// Same for n tokens: k_rows, v_rows: [n, row_elems]; token i goes to slots[i].
void StoreKvRows(const KvLayerView& kv, const int32_t* slots, int64_t n, const float* k_rows,
                 const float* v_rows);

struct AttentionParams {
  int n_heads = 0;
  int n_kv_heads = 0;          // divides n_heads
  int head_dim = 0;            // K head size (and V's unless v_head_dim says otherwise)
  float scale = 1.0f;          // usually 1/sqrt(head_dim) (Gemma 3: query_pre_attn_scalar)
  int sliding_window = 0;      // 0 = none; key visible iff q_pos - k_pos < window
  float logit_softcap = 0.0f;  // 0 = none
  bool scale_query = false;    // apply scale to q itself, before Q·K (see above)
  // [n_heads] or null: a learned logit per query head that joins every row's softmax with no
  // value (gpt-oss's attention sinks): out = O e^(M - m') / (L e^(M - m') + e^(sink - m')),
  // m' = max(M, sink), after the chunks are folded (GgmlExp; the sums in double).
  const float* sinks = nullptr;
  // V head size; 0: head_dim. With a latent view (KvLayerView::v null) V is the first
  // v_head_dim values of each K head (multi-head latent attention), and out rows are
  // [n_heads * v_head_dim].
  int v_head_dim = 0;
};

// One sequence: q: [n_q, n_heads * head_dim], q_pos: [n_q], kv_slots: [n_kv],
// out: [n_q, n_heads * v_head_dim]. out must not overlap q.
void AttentionForSequence(const AttentionParams& params, const float* q, const int64_t* q_pos,
                          int n_q, const KvLayerView& kv, const int32_t* kv_slots, int n_kv,
                          float* out, ThreadPool* pool);

// Several sequences in one parallel region (a ragged batch: mixed prefill chunks and decodes).
struct AttentionSequence {
  const float* q = nullptr;        // [n_q, n_heads * head_dim]
  const int64_t* q_pos = nullptr;  // [n_q]
  int n_q = 0;
  const int32_t* kv_slots = nullptr;  // [n_kv]
  int n_kv = 0;
  float* out = nullptr;  // [n_q, n_heads * v_head_dim]
  // [n_q] or null: the last key position each query sees, >= its q_pos and < n_kv (null:
  // q_pos, the causal rule). Lets a span attend bidirectionally (an image's tokens see the
  // whole image); the sliding window still counts back from q_pos.
  const int64_t* q_last_key = nullptr;
};
void AttentionForBatch(const AttentionParams& params, const KvLayerView& kv,
                       std::span<const AttentionSequence> seqs, ThreadPool* pool);

}  // namespace radixlm::kernels
