#include "eval/speed.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>
#include <random>
#include <span>

#include "kernels/packed_weights.h"

namespace radixlm::eval {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

ThreadPool::Stats PoolStats(ThreadPool* pool) {
  return pool != nullptr ? pool->stats() : ThreadPool::Stats{};
}

ThreadingOverhead Overhead(const ThreadPool::Stats& before, const ThreadPool::Stats& after,
                           int64_t steps, double seconds) {
  ThreadingOverhead o;
  o.regions_per_step =
      static_cast<double>(after.regions - before.regions) / static_cast<double>(steps);
  o.barrier_fraction = 1e-9 * static_cast<double>(after.barrier_ns - before.barrier_ns) / seconds;
  return o;
}

std::vector<int32_t> RandomTokens(int64_t n, int64_t vocab, std::mt19937_64& rng) {
  // Skip the lowest ids (control tokens in most vocabularies); any id is valid input.
  std::uniform_int_distribution<int32_t> dist(std::min<int64_t>(1000, vocab / 2),
                                              static_cast<int32_t>(vocab - 1));
  std::vector<int32_t> ids(n);
  for (auto& id : ids) id = dist(rng);
  return ids;
}

// Bytes of one matrix a decode step streams: its packed copy where it has one, else its rows.
double MatrixBytes(const kernels::WeightMatrix& w) {
  if (w.packed != nullptr) {
    return static_cast<double>(w.packed->group_bytes) * static_cast<double>(w.packed->groups);
  }
  return static_cast<double>(w.row_bytes) * static_cast<double>(w.rows);
}

// What one batch-1 decode step reads of the weights: every matrix of every layer (attention of
// each kind, DeltaNet, latent attention, dense and shared FFNs, per-layer inputs) and the output
// head in the form the kernels read (packed or GGUF rows), the n_experts_used experts a token
// routes to, one row of each embedding, and the 1-D tensors.
double WeightBytesPerStep(const model::Model& model) {
  const model::ModelWeights& w = model.weights();
  double bytes = MatrixBytes(w.output) + MatrixBytes(w.per_layer_model_proj);
  bytes += static_cast<double>(w.token_embd.row_bytes + w.per_layer_token_embd.row_bytes);
  for (const model::LayerWeights& l : w.layers) {
    for (const kernels::WeightMatrix* m : {&l.wq,
                                           &l.wk,
                                           &l.wv,
                                           &l.wo,
                                           &l.wqkv,
                                           &l.gate,
                                           &l.up,
                                           &l.down,
                                           &l.per_layer_inp_gate,
                                           &l.per_layer_proj,
                                           &l.gate_inp,
                                           &l.attn_gate,
                                           &l.ssm_beta,
                                           &l.ssm_alpha,
                                           &l.ssm_beta_alpha,
                                           &l.ssm_out,
                                           &l.wq_a,
                                           &l.wq_b,
                                           &l.wkv_a,
                                           &l.gate_shexp,
                                           &l.up_shexp,
                                           &l.down_shexp}) {
      bytes += MatrixBytes(*m);
    }
    for (const auto* heads : {&l.wk_b, &l.wv_b}) {
      for (const kernels::WeightMatrix& m : *heads) bytes += MatrixBytes(m);
    }
    // A mixture of experts: the n_experts_used experts a token routes to (gate_up_exps, where
    // there, holds what gate_exps and up_exps view).
    double experts = 0.0;
    for (size_t e = 0; e < l.gate_exps.size(); ++e) {
      experts +=
          MatrixBytes(l.gate_exps[e]) + MatrixBytes(l.up_exps[e]) + MatrixBytes(l.down_exps[e]);
    }
    if (!l.gate_exps.empty()) {
      bytes += experts * static_cast<double>(model.config().n_experts_used) /
               static_cast<double>(l.gate_exps.size());
    }
  }
  for (const auto& t : model.gguf().tensors()) {
    if (t.shape.size() == 1) bytes += static_cast<double>(t.size_bytes);
  }
  return bytes;
}

}  // namespace

double MeasureReadBandwidth(ThreadPool* pool, size_t bytes) {
  // Read as the decode kernels read: every thread streams its own contiguous range of a buffer
  // far beyond the caches in 64-byte lines, asking for each line kernels::cpu::PrefetchAhead's
  // distances ahead (into L1 and into L2).
  constexpr size_t kNear = kernels::kPrefetchNear, kFar = kernels::kPrefetchFar;
  // On the pages the weights live on (kernels::AllocPacked: transparent huge pages).
  const size_t n = bytes / sizeof(uint64_t) / 8 * 8;
  const auto storage = kernels::AllocPacked(n * sizeof(uint64_t));
  const std::span<uint64_t> buffer(reinterpret_cast<uint64_t*>(storage.get()), n);
  std::iota(buffer.begin(), buffer.end(), 0);
  std::atomic<uint64_t> sink{0};
  const int threads = pool != nullptr ? pool->size() : 1;
  auto pass = [&] {
    const auto lines = static_cast<int64_t>(n / 8);
    ParallelFor(pool, threads, 1, [&](int64_t t0, int64_t t1, int) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t b = lines * t / threads, e = lines * (t + 1) / threads;
        uint64_t s[8] = {};
        for (int64_t line = b; line < e; ++line) {
          const uint64_t* p = buffer.data() + 8 * line;
          __builtin_prefetch(reinterpret_cast<const char*>(p) + kNear, 0, 3);
          __builtin_prefetch(reinterpret_cast<const char*>(p) + kFar, 0, 2);
          for (int k = 0; k < 8; ++k) s[k] += p[k];
        }
        sink.fetch_add(s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7],
                       std::memory_order_relaxed);
      }
    });
  };
  pass();  // warm up (page faults)
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = Clock::now();
    pass();
    best = std::min(best, SecondsSince(start));
  }
  return static_cast<double>(n * sizeof(uint64_t)) / best / 1e9;
}

StatusOr<SpeedResult> MeasureSpeed(model::Model& model, const SpeedOptions& options) {
  if (options.prompt_tokens < 1 || options.decode_tokens < 1 || options.decode_prefix < 1) {
    return InvalidArgument("prompt, decode and prefix token counts must be >= 1");
  }
  if (options.prefill_reps < 1) return InvalidArgument("prefill reps must be >= 1");
  const int64_t vocab = model.config().vocab_size;
  const int64_t max_batch =
      *std::max_element(options.batch_sizes.begin(), options.batch_sizes.end());
  const int64_t per_seq = options.decode_prefix + options.decode_tokens;
  model::KvCacheOptions cache_options;
  cache_options.n_slots = 1 + std::max(options.prompt_tokens, max_batch * per_seq);
  cache_options.n_state_slots = max_batch;  // a hybrid model's: one per decoded sequence
  RADIXLM_ASSIGN_OR_RETURN(auto cache, model.CreateKvCache(cache_options));
  std::mt19937_64 rng(options.seed);
  model::ForwardOutput out;
  SpeedResult result;

  // Prefill: one prompt in one call, as llama-bench's pp test runs it: one warm-up call of the
  // whole prompt, then prefill_reps timed calls (each rewrites the same cache slots), reported
  // as the mean of the calls' rates. A single timed call would carry this VM's drift whole.
  {
    const std::vector<int32_t> ids = RandomTokens(options.prompt_tokens, vocab, rng);
    std::vector<int32_t> slots(options.prompt_tokens);
    std::iota(slots.begin(), slots.end(), 1);
    model::ForwardBatch batch;
    batch.sequences.push_back({ids, slots, {}, model::LogitsMode::kLast});
    RADIXLM_RETURN_IF_ERROR(model.Forward(batch, *cache, &out));
    const ThreadPool::Stats before = PoolStats(model.pool());
    double total_seconds = 0.0;
    for (int64_t rep = 0; rep < options.prefill_reps; ++rep) {
      const auto start = Clock::now();
      RADIXLM_RETURN_IF_ERROR(model.Forward(batch, *cache, &out));
      const double seconds = SecondsSince(start);
      total_seconds += seconds;
      result.prefill_samples.push_back(static_cast<double>(options.prompt_tokens) / seconds);
    }
    result.prefill_tokens_per_second =
        std::accumulate(result.prefill_samples.begin(), result.prefill_samples.end(), 0.0) /
        static_cast<double>(options.prefill_reps);
    result.prefill_threading =
        Overhead(before, PoolStats(model.pool()), options.prefill_reps, total_seconds);
  }

  // Decode: B sequences, each prefilled with decode_prefix tokens, then decode_tokens steps of
  // one token per sequence in one batch (greedy: the argmax is fed back).
  for (int64_t b : options.batch_sizes) {
    std::vector<std::vector<int32_t>> tokens(b);
    std::vector<std::vector<int32_t>> slots(b);
    model::ForwardBatch prefill;
    for (int64_t s = 0; s < b; ++s) {
      tokens[s] = RandomTokens(options.decode_prefix, vocab, rng);
      slots[s].resize(per_seq);
      std::iota(slots[s].begin(), slots[s].end(), static_cast<int32_t>(1 + s * per_seq));
      prefill.sequences.push_back({tokens[s],
                                   std::span<const int32_t>(slots[s]).first(options.decode_prefix),
                                   {},
                                   model::LogitsMode::kLast});
      prefill.sequences.back().state_slot = static_cast<int32_t>(s);
    }
    RADIXLM_RETURN_IF_ERROR(model.Forward(prefill, *cache, &out));
    std::vector<int32_t> next(b);
    auto argmax_into_next = [&] {
      for (int64_t s = 0; s < b; ++s) {
        const float* row = out.LastRow(s);
        next[s] = static_cast<int32_t>(std::max_element(row, row + vocab) - row);
      }
    };
    argmax_into_next();
    const ThreadPool::Stats before = PoolStats(model.pool());
    const auto start = Clock::now();
    for (int64_t step = 0; step < options.decode_tokens; ++step) {
      const int64_t pos = options.decode_prefix + step;
      model::ForwardBatch batch;
      for (int64_t s = 0; s < b; ++s) {
        const std::span<const int32_t> seq_slots(slots[s]);
        batch.sequences.push_back({std::span<const int32_t>(&next[s], 1), seq_slots.subspan(pos, 1),
                                   seq_slots.first(pos), model::LogitsMode::kLast});
        batch.sequences.back().state_slot = static_cast<int32_t>(s);
      }
      RADIXLM_RETURN_IF_ERROR(model.Forward(batch, *cache, &out));
      argmax_into_next();
    }
    const double seconds = SecondsSince(start);
    result.decode.push_back(
        {b, static_cast<double>(b * options.decode_tokens) / seconds,
         1e3 * seconds / static_cast<double>(options.decode_tokens),
         Overhead(before, PoolStats(model.pool()), options.decode_tokens, seconds)});
  }

  result.weight_bytes_per_step = WeightBytesPerStep(model);
  result.read_bandwidth_gbps = MeasureReadBandwidth(model.pool(), options.bandwidth_bytes);
  result.bandwidth_bound_tokens_per_second =
      result.read_bandwidth_gbps * 1e9 / result.weight_bytes_per_step;
  return result;
}

}  // namespace radixlm::eval
