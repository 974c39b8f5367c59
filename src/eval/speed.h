// Forward-pass speed measurements on synthetic token ids (no sampling, no scheduler):
// prefill tokens/s of one long prompt (the mean over several timed calls after a warm-up call,
// as llama-bench measures pp), decode tokens/s at several batch sizes, and the
// memory-bandwidth bound of decode (weight bytes read per step ÷ measured read bandwidth).
// Used by `radixlm speed` and the forward benchmark in bench/.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.h"
#include "util/status.h"

namespace radixlm::eval {

struct SpeedOptions {
  int64_t prompt_tokens = 512;  // prefill measurement: one prompt of this length
  int64_t prefill_reps = 3;     // timed prefill calls of that prompt (after one warm-up call)
  int64_t decode_tokens = 128;  // decode steps per batch size
  int64_t decode_prefix = 32;   // tokens each decode sequence is prefilled with first
  std::vector<int64_t> batch_sizes = {1};
  uint64_t seed = 1234;
  size_t bandwidth_bytes = size_t{1} << 30;  // buffer MeasureReadBandwidth sums
};

// Threading overhead of a measured phase (ThreadPool::Stats over it).
struct ThreadingOverhead {
  double regions_per_step = 0.0;  // parallel regions (fork/join) per forward call
  double barrier_fraction = 0.0;  // time the main thread waited at joins / wall time
};

struct DecodeSpeed {
  int64_t batch = 0;
  double tokens_per_second = 0.0;  // batch * steps / wall time of the steps
  double ms_per_step = 0.0;
  ThreadingOverhead threading;
};

struct SpeedResult {
  double prefill_tokens_per_second = 0.0;  // mean of prefill_samples (llama-bench's avg_ts)
  std::vector<double> prefill_samples;     // tokens/s of each timed prefill call
  ThreadingOverhead prefill_threading;
  std::vector<DecodeSpeed> decode;
  // Bytes of weights one decode step streams, in the form the kernels read them: every matmul
  // weight (packed or GGUF rows; the output projection included, tied or not), one embedding
  // row, and the 1-D tensors.
  double weight_bytes_per_step = 0.0;
  // Measured: every pool thread streams its own range of a buffer far beyond the caches in
  // 64-byte lines with the kernels' prefetch distance.
  double read_bandwidth_gbps = 0.0;
  double bandwidth_bound_tokens_per_second = 0.0;  // batch-1 ceiling: bandwidth / bytes
};

// The model must have been loaded with max_batch_tokens >= max(prompt_tokens, batches) and
// max_context >= prompt_tokens and >= decode_prefix + decode_tokens.
StatusOr<SpeedResult> MeasureSpeed(model::Model& model, const SpeedOptions& options);

// Read bandwidth in GB/s (1e9 bytes/s): each pool thread sums its contiguous share of a buffer
// of `bytes`, prefetching ahead as the decode kernels do; the best of 5 passes.
double MeasureReadBandwidth(ThreadPool* pool, size_t bytes);

}  // namespace radixlm::eval
