// Micro-benchmarks of the CPU kernels (Google Benchmark). Built as `kernels_bench` when
// libbenchmark is installed (see tests/kernels/CMakeLists.txt).
//
//   kernels_bench --benchmark_filter=Dot         single-row dot products per weight type
//   kernels_bench --benchmark_filter=ModelDecode every 2-D weight of the default model
//                                                (gemma-3-270m Q4_K_M) applied to one token:
//                                                the matmul cost of one decode step
//   kernels_bench --benchmark_filter=PeakInt8    the core's int8 multiply-add ceiling (no
//                                                loads, no scales: the bound for any Q8 GEMM)
// Environment: RADIXLM_ISA=scalar|avx2|avx_vnni|avx512|amx caps the dispatch level.
#include <benchmark/benchmark.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include <sys/mman.h>

#include "gguf/gguf_file.h"
#include "kernels/attention.h"
#include "kernels/dot.h"
#include "kernels/matmul.h"
#include "kernels/packed_codebook.h"
#include "kernels/packed_weights.h"
#include "kernels/quant.h"
#include "util/model_path.h"
#include "util/thread_pool.h"

namespace radixlm::kernels {
namespace {

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

void BM_Dot(benchmark::State& state) {
  const auto t = static_cast<GgmlType>(state.range(0));
  const int64_t n = 4096;
  const auto wf = Random(n, 1);
  std::vector<uint8_t> w(RowBytes(t, n));
  QuantizeRow(t, wf.data(), w.data(), n);
  const auto xf = Random(n, 2);
  const GgmlType act = ActivationType(t);
  std::vector<uint8_t> x(RowBytes(act, n));
  QuantizeRow(act, xf.data(), x.data(), n);
  const VecDotFn fn = GetVecDotFn(t);
  for (auto _ : state) benchmark::DoNotOptimize(fn(n, w.data(), x.data()));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(w.size()));
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_Dot)
    ->ArgName("type")
    ->Arg(static_cast<int>(GgmlType::kF16))
    ->Arg(static_cast<int>(GgmlType::kQ4_0))
    ->Arg(static_cast<int>(GgmlType::kQ5_0))
    ->Arg(static_cast<int>(GgmlType::kQ8_0))
    ->Arg(static_cast<int>(GgmlType::kQ4_K))
    ->Arg(static_cast<int>(GgmlType::kQ5_K))
    ->Arg(static_cast<int>(GgmlType::kQ6_K));

// Synthetic matmul: [rows x cols] weights of a type, n_tokens tokens, threads.
void BM_MatMul(benchmark::State& state) {
  const auto t = static_cast<GgmlType>(state.range(0));
  const int64_t rows = state.range(1), cols = state.range(2), n_tok = state.range(3);
  ThreadPool pool(static_cast<int>(state.range(4)));
  std::vector<uint8_t> w(RowBytes(t, cols) * rows);
  const auto row = Random(cols, 3);
  for (int64_t r = 0; r < rows; ++r) {
    QuantizeRow(t, row.data(), w.data() + r * RowBytes(t, cols), cols);
  }
  WeightMatrix wm = MakeWeightMatrix(t, w.data(), rows, cols);
  // As the model loads them: repacked for the int8 GEMM (kernels/packed_weights.h).
  const std::unique_ptr<PackedWeights> packed =
      IsPackableType(t) ? PackWeights(wm, &pool) : nullptr;
  wm.packed = packed.get();
  const auto x = Random(cols * n_tok, 4);
  std::vector<float> y(rows * n_tok);
  for (auto _ : state) MatMul(wm, x.data(), n_tok, y.data(), &pool);
  state.SetItemsProcessed(state.iterations() * rows * cols * n_tok);  // MACs
}
BENCHMARK(BM_MatMul)
    ->ArgNames({"type", "rows", "cols", "tok", "thr"})
    // One token against a matrix resident in L2 (the kernel's compute, not the memory's).
    ->Args({static_cast<int>(GgmlType::kQ4_K), 256, 2048, 1, 1})
    ->Args({static_cast<int>(GgmlType::kQ6_K), 256, 2048, 1, 1})
    ->Args({static_cast<int>(GgmlType::kQ5_0), 2048, 640, 1, 1})
    ->Args({static_cast<int>(GgmlType::kQ5_0), 2048, 640, 1, 2})
    ->Args({static_cast<int>(GgmlType::kQ5_0), 2048, 640, 64, 2})
    ->Args({static_cast<int>(GgmlType::kQ6_K), 640, 2048, 1, 2})
    ->Args({static_cast<int>(GgmlType::kQ6_K), 640, 2048, 64, 2})
    ->Args({static_cast<int>(GgmlType::kQ4_K), 640, 2048, 1, 2})
    ->Args({static_cast<int>(GgmlType::kQ4_K), 640, 2048, 64, 2})
    ->Args({static_cast<int>(GgmlType::kQ8_0), 16384, 640, 1, 1})
    ->Args({static_cast<int>(GgmlType::kQ8_0), 262144, 640, 1, 1})
    ->Args({static_cast<int>(GgmlType::kQ8_0), 262144, 640, 1, 2})
    // Batched decode (4 / 8 / 16 tokens): the shapes of gemma-3-270m's matmuls.
    ->Args({static_cast<int>(GgmlType::kQ8_0), 32768, 640, 4, 1})
    ->Args({static_cast<int>(GgmlType::kQ5_0), 2048, 640, 4, 1})
    ->Args({static_cast<int>(GgmlType::kQ8_0), 32768, 640, 8, 1})
    ->Args({static_cast<int>(GgmlType::kQ5_0), 2048, 640, 8, 1})
    ->Args({static_cast<int>(GgmlType::kQ4_K), 640, 1024, 8, 1})
    ->Args({static_cast<int>(GgmlType::kQ8_0), 32768, 640, 16, 1})
    ->Args({static_cast<int>(GgmlType::kQ5_0), 2048, 640, 16, 1})
    ->Args({static_cast<int>(GgmlType::kQ4_K), 640, 1024, 16, 1})
    ->Args({static_cast<int>(GgmlType::kQ6_K), 640, 2048, 16, 1})
    ->Args({static_cast<int>(GgmlType::kQ8_0), 32768, 640, 16, 2})
    ->Args({static_cast<int>(GgmlType::kQ5_0), 2048, 640, 16, 2})
    ->Args({static_cast<int>(GgmlType::kQ4_K), 640, 1024, 16, 2})
    ->Args({static_cast<int>(GgmlType::kQ6_K), 640, 2048, 16, 2})
    // Float weights (the float GEMM): a vision encoder's F16 matrices over 256 patches.
    ->Args({static_cast<int>(GgmlType::kF16), 1152, 1152, 256, 2})
    ->Args({static_cast<int>(GgmlType::kF16), 4304, 1152, 256, 2})
    ->UseRealTime();

// The low-bit types packed since issue 41 (Q2_K, Q3_K, IQ4_NL, IQ4_XS, MXFP4) through MatMul,
// packed (packed:1, as the model loads them) or read in their GGUF bytes by the dot kernels
// (packed:0, how they ran before they were packable): the A/B of one binary. rows x cols
// 1024 x 2048 sits in L2, 32768 x 4096 (44-75 MB) streams from memory or L3. Weights are random
// blocks (every quant, index and scale bit random, half scales 1e-2; MXFP4 through its
// quantizer). BM_MatMulCodebook: the same for the codebook types.
void BM_MatMulLowbit(benchmark::State& state) {
  const auto t = static_cast<GgmlType>(state.range(0));
  const int64_t rows = state.range(1), cols = state.range(2), n_tok = state.range(3);
  ThreadPool pool(static_cast<int>(state.range(4)));
  const size_t row_bytes = RowBytes(t, cols);
  std::vector<uint8_t> w(row_bytes * rows);
  if (t == GgmlType::kMXFP4) {
    const auto row = Random(cols, 3);
    for (int64_t r = 0; r < rows; ++r) QuantizeRow(t, row.data(), w.data() + r * row_bytes, cols);
  } else {
    std::mt19937 rng(3);
    for (auto& b : w) b = static_cast<uint8_t>(rng());
    const size_t block = RowBytes(t, t == GgmlType::kIQ4_NL ? 32 : 256);
    // The half scales: d first in the IQ types, d and dmin last in Q2_K, d last in Q3_K.
    const size_t d_at = t == GgmlType::kQ2_K ? 80 : t == GgmlType::kQ3_K ? 108 : 0;
    const uint16_t d = 0x211f;  // 0.01 as a half
    for (size_t o = 0; o < w.size(); o += block) {
      if (t == GgmlType::kIQ1_M) {
        // The half is the top nibbles of the 4 scale words (bytes 48..55).
        for (int k = 0; k < 4; ++k) {
          uint8_t& hi = w[o + 48 + 2 * k + 1];
          hi = static_cast<uint8_t>((hi & 0x0F) | (((d >> (4 * k)) & 0xF) << 4));
        }
        continue;
      }
      std::memcpy(w.data() + o + d_at, &d, 2);
      if (t == GgmlType::kQ2_K) std::memcpy(w.data() + o + 82, &d, 2);
    }
  }
  WeightMatrix wm = MakeWeightMatrix(t, w.data(), rows, cols);
  const std::unique_ptr<PackedWeights> packed =
      state.range(5) != 0 && PackedGemmAvailable() && IsPackableType(t) ? PackWeights(wm, &pool)
                                                                        : nullptr;
  wm.packed = packed.get();
  const auto x = Random(cols * n_tok, 4);
  std::vector<float> y(rows * n_tok);
  for (auto _ : state) MatMul(wm, x.data(), n_tok, y.data(), &pool);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(w.size()));
  state.SetItemsProcessed(state.iterations() * rows * cols * n_tok);  // MACs
}
void LowbitArgs(benchmark::internal::Benchmark* b) {
  for (GgmlType t :
       {GgmlType::kQ2_K, GgmlType::kQ3_K, GgmlType::kIQ4_NL, GgmlType::kIQ4_XS, GgmlType::kMXFP4}) {
    for (auto [rows, cols] : {std::pair{1024, 2048}, std::pair{32768, 4096}}) {
      for (int tok : {1, 8, 16}) {
        for (int packed : {0, 1}) b->Args({static_cast<int>(t), rows, cols, tok, 2, packed});
      }
    }
    b->Args({static_cast<int>(t), 1024, 2048, 64, 2, 1});  // prefill-sized: AMX tiles at amx
  }
}
BENCHMARK(BM_MatMulLowbit)
    ->ArgNames({"type", "rows", "cols", "tok", "thr", "packed"})
    ->Apply(LowbitArgs)
    ->UseRealTime();
// The codebook types (IQ3 / IQ2 / IQ1), read in their GGUF bytes by the dot kernels: 1 token
// (the single-row kernels), 8 and 16 (the 8-row kernels), 13 (8 + 4 + 1), 64; the types with a
// packed layout also packed (packed_codebook.h; where the CPU packs them, else the same dot
// kernels). On one thread (thr:1, the caller runs everything) the CPU time is the kernels' own,
// the measure to read on a loaded machine; on two, the wall time.
void CodebookArgs(benchmark::internal::Benchmark* b) {
  for (GgmlType t : {GgmlType::kIQ3_XXS, GgmlType::kIQ3_S, GgmlType::kIQ2_XXS, GgmlType::kIQ2_XS,
                     GgmlType::kIQ2_S, GgmlType::kIQ1_S, GgmlType::kIQ1_M}) {
    for (int tok : {1, 8, 13, 16, 64}) {
      for (int thr : {1, 2}) {
        for (int packed : {0, 1}) {
          if (packed == 0 || FindCodebookLayout(t) != nullptr) {
            b->Args({static_cast<int>(t), 1024, 2048, tok, thr, packed});
          }
        }
      }
    }
  }
}
BENCHMARK(BM_MatMulLowbit)
    ->Name("BM_MatMulCodebook")
    ->ArgNames({"type", "rows", "cols", "tok", "thr", "packed"})
    ->Apply(CodebookArgs)
    ->UseRealTime();

// The default model's file, or null with the benchmark marked skipped when it is absent.
std::unique_ptr<gguf::GgufFile> OpenDefaultModel(benchmark::State& state) {
  auto path = ResolveModelPath("");
  if (!path.ok()) {
    state.SkipWithError("default model not found");
    return nullptr;
  }
  auto file = gguf::GgufFile::Open(*path);
  if (!file.ok()) {
    state.SkipWithError("cannot open model");
    return nullptr;
  }
  return std::move(*file);
}

// All 2-D weights of the real model, one token each (what a decode step spends in matmuls,
// output head included). Skipped when the model file is absent.
void BM_ModelDecode(benchmark::State& state) {
  const std::unique_ptr<gguf::GgufFile> file = OpenDefaultModel(state);
  if (file == nullptr) return;
  std::vector<WeightMatrix> ws;
  int64_t bytes = 0;
  for (const auto& t : file->tensors()) {
    if (t.shape.size() != 2) continue;
    ws.push_back(MakeWeightMatrix(t.type, t.data, t.shape[1], t.shape[0]));
    bytes += static_cast<int64_t>(t.size_bytes);
  }
  ThreadPool pool(static_cast<int>(state.range(0)));
  const int64_t n_tok = state.range(1);
  std::vector<float> x = Random(4096 * n_tok, 5), y(262144 * n_tok);
  for (auto _ : state) {
    for (const WeightMatrix& w : ws) MatMul(w, x.data(), n_tok, y.data(), &pool);
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["tok/s"] = benchmark::Counter(static_cast<double>(n_tok) * state.iterations(),
                                               benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ModelDecode)
    ->ArgNames({"thr", "tok"})
    ->Args({1, 1})
    ->Args({2, 1})
    ->Args({2, 8})
    ->Args({2, 16})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// As BM_ModelDecode, but with the weights repacked as the model loads them (the int8 GEMM that
// decode runs), in the model's order; layers:1 leaves out token_embd (the output head), so the
// bandwidth counter shows what the per-layer matrices reach on their own.
void BM_ModelDecodePacked(benchmark::State& state) {
  const std::unique_ptr<gguf::GgufFile> file = OpenDefaultModel(state);
  if (file == nullptr) return;
  ThreadPool pool(static_cast<int>(state.range(0)));
  const bool layers_only = state.range(2) != 0;
  std::vector<WeightMatrix> ws;
  std::vector<std::unique_ptr<PackedWeights>> packed;
  int64_t bytes = 0;
  for (const auto& t : file->tensors()) {
    if (t.shape.size() != 2 || (layers_only && t.name == "token_embd.weight")) continue;
    ws.push_back(MakeWeightMatrix(t.type, t.data, t.shape[1], t.shape[0]));
    if (!IsPackableType(t.type)) continue;
    packed.push_back(PackWeights(ws.back(), &pool));
    ws.back().packed = packed.back().get();
    bytes += static_cast<int64_t>(t.size_bytes);
  }
  const int64_t n_tok = state.range(1);
  std::vector<float> x = Random(4096 * n_tok, 5), y(262144 * n_tok);
  for (auto _ : state) {
    for (const WeightMatrix& w : ws) MatMul(w, x.data(), n_tok, y.data(), &pool);
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["matrices"] = static_cast<double>(ws.size());
}
BENCHMARK(BM_ModelDecodePacked)
    ->ArgNames({"thr", "tok", "layers"})
    ->Args({2, 1, 0})
    ->Args({2, 1, 1})
    ->Args({1, 1, 1})
    ->Args({2, 2, 0})
    ->Args({2, 2, 1})
    ->Args({1, 2, 1})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// Decode's weight stream: 48 matrices of 8192 x 2048 (Q4_K: 453 MB, beyond the caches) at one
// token, one after another as a step runs a model's layers, on 1 or 2 threads; GB/s of the
// GGUF bytes (the prefetch distances in kernels/cpu/gemm_packed.h were set on it).
void BM_DecodeStream(benchmark::State& state) {
  const auto t = static_cast<GgmlType>(state.range(0));
  const int64_t rows = 8192, cols = 2048, n_mat = 48;
  ThreadPool pool(static_cast<int>(state.range(1)));
  std::vector<uint8_t> w(RowBytes(t, cols) * rows);
  const auto row = Random(cols, 3);
  for (int64_t r = 0; r < rows; ++r) {
    QuantizeRow(t, row.data(), w.data() + r * RowBytes(t, cols), cols);
  }
  std::vector<std::unique_ptr<PackedWeights>> packed;
  std::vector<WeightMatrix> ws;
  for (int64_t i = 0; i < n_mat; ++i) {
    ws.push_back(MakeWeightMatrix(t, w.data(), rows, cols));
    packed.push_back(PackWeights(ws.back(), &pool));
    ws.back().packed = packed.back().get();
  }
  const auto x = Random(cols, 4);
  std::vector<float> y(rows);
  for (auto _ : state) {
    for (const WeightMatrix& wm : ws) MatMul(wm, x.data(), 1, y.data(), &pool);
  }
  state.SetBytesProcessed(state.iterations() * n_mat * static_cast<int64_t>(w.size()));
}
BENCHMARK(BM_DecodeStream)
    ->ArgNames({"type", "thr"})
    ->Args({static_cast<int>(GgmlType::kQ4_K), 1})
    ->Args({static_cast<int>(GgmlType::kQ4_K), 2})
    ->Args({static_cast<int>(GgmlType::kQ6_K), 1})
    ->Args({static_cast<int>(GgmlType::kQ6_K), 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Attention at the gemma-3-270m layer's shape (4 heads, 1 kv head of 256, F16 cache) for the
// last n_q of n_kv positions, causal: n_q 1 is decode, more a prefill chunk after a cached
// prefix.
void RunGemmaAttention(benchmark::State& state, int n_kv, int n_q, int threads) {
  ThreadPool pool(threads);
  AttentionParams p{4, 1, 256, 0.0625f, 0, 0.0f};
  std::vector<uint16_t> k(n_kv * 256), v(n_kv * 256);
  KvLayerView kv{KvDtype::kF16, k.data(), v.data(), 256};
  const auto rows = Random(n_kv * 256, 6);
  std::vector<int32_t> slots(n_kv);
  for (int i = 0; i < n_kv; ++i) slots[i] = i;
  StoreKvRows(kv, slots.data(), n_kv, rows.data(), rows.data());
  const auto q = Random(n_q * 4 * 256, 7);
  std::vector<float> out(n_q * 4 * 256);
  std::vector<int64_t> pos(n_q);
  for (int i = 0; i < n_q; ++i) pos[i] = n_kv - n_q + i;
  for (auto _ : state) {
    AttentionForSequence(p, q.data(), pos.data(), n_q, kv, slots.data(), n_kv, out.data(), &pool);
  }
}

void BM_AttentionDecode(benchmark::State& state) {
  RunGemmaAttention(state, static_cast<int>(state.range(0)), 1, static_cast<int>(state.range(1)));
}
BENCHMARK(BM_AttentionDecode)
    ->ArgNames({"n_kv", "thr"})
    ->Args({512, 1})
    ->Args({4096, 1})
    ->Args({4096, 2})
    ->Args({16384, 1})
    ->Args({16384, 2})
    ->UseRealTime();

void BM_AttentionPrefill(benchmark::State& state) {
  RunGemmaAttention(state, static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
                    static_cast<int>(state.range(2)));
}
BENCHMARK(BM_AttentionPrefill)
    ->ArgNames({"n_kv", "n_q", "thr"})
    ->Args({4096, 256, 2})
    ->UseRealTime();

// Decode attention at a Llama-3.2-1B layer's shape (32 query heads, 8 kv heads of 64), the
// cache's slots contiguous: one query over n_kv cached tokens.
void BM_AttentionDecodeGqa(benchmark::State& state) {
  const int n_kv = static_cast<int>(state.range(0));
  ThreadPool pool(static_cast<int>(state.range(1)));
  const AttentionParams p{32, 8, 64, 0.125f, 0, 0.0f};
  const int64_t row = 8 * 64;
  // The cache on transparent huge pages when range(2) is 1, as the KV pool is.
  const size_t bytes = (static_cast<size_t>(n_kv) * row * 2 + (2u << 20) - 1) / (2u << 20) * (2u << 20);
  auto* k = static_cast<uint16_t*>(std::aligned_alloc(2u << 20, bytes));
  auto* v = static_cast<uint16_t*>(std::aligned_alloc(2u << 20, bytes));
  if (state.range(2) == 1) {
    madvise(k, bytes, MADV_HUGEPAGE);
    madvise(v, bytes, MADV_HUGEPAGE);
  }
  KvLayerView kv{KvDtype::kF16, k, v, row};
  const auto rows = Random(n_kv * row, 6);
  std::vector<int32_t> slots(n_kv);
  for (int i = 0; i < n_kv; ++i) slots[i] = i;
  StoreKvRows(kv, slots.data(), n_kv, rows.data(), rows.data());
  const auto q = Random(32 * 64, 7);
  std::vector<float> out(32 * 64);
  const int64_t pos = n_kv - 1;
  for (auto _ : state) {
    AttentionForSequence(p, q.data(), &pos, 1, kv, slots.data(), n_kv, out.data(), &pool);
  }
  state.counters["GB/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * 2.0 * n_kv * row * 2, benchmark::Counter::kIsRate);
  std::free(k);
  std::free(v);
}
BENCHMARK(BM_AttentionDecodeGqa)
    ->ArgNames({"n_kv", "thr", "huge"})
    ->Args({4096, 2, 0})
    ->Args({16384, 1, 0})
    ->Args({16384, 2, 0})
    ->Args({16384, 2, 1})
    ->UseRealTime();

// Prefill attention at the same shape: the last n_q tokens of an n_kv-token prompt (one chunk
// of a chunked prefill), causal.
void BM_AttentionPrefillGqa(benchmark::State& state) {
  const int n_kv = static_cast<int>(state.range(0));
  const int n_q = static_cast<int>(state.range(1));
  ThreadPool pool(static_cast<int>(state.range(2)));
  const AttentionParams p{32, 8, 64, 0.125f, 0, 0.0f};
  const int64_t row = 8 * 64;
  std::vector<uint16_t> k(n_kv * row), v(n_kv * row);
  KvLayerView kv{KvDtype::kF16, k.data(), v.data(), row};
  const auto rows = Random(n_kv * row, 6);
  std::vector<int32_t> slots(n_kv);
  for (int i = 0; i < n_kv; ++i) slots[i] = i;
  StoreKvRows(kv, slots.data(), n_kv, rows.data(), rows.data());
  const auto q = Random(static_cast<int64_t>(n_q) * 32 * 64, 7);
  std::vector<float> out(static_cast<size_t>(n_q) * 32 * 64);
  std::vector<int64_t> pos(n_q);
  for (int i = 0; i < n_q; ++i) pos[i] = n_kv - n_q + i;
  for (auto _ : state) {
    AttentionForSequence(p, q.data(), pos.data(), n_q, kv, slots.data(), n_kv, out.data(), &pool);
  }
  // Query-head x key pairs the causal mask lets through, per second.
  const double pairs = 32.0 * n_q * (n_kv - n_q + (n_q + 1) / 2.0);
  state.counters["Gpairs/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * pairs * 1e-9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AttentionPrefillGqa)
    ->ArgNames({"n_kv", "n_q", "thr"})
    ->Args({4096, 512, 1})
    ->Args({16384, 512, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

#if defined(__x86_64__)
// The fewest AVX2 instructions per 32 int8 products summed into int32 lanes (vpmaddubsw,
// vpmaddwd with ones, vpaddd), on 8 independent accumulators, registers only. Any quantized
// dot product also loads, handles signs and applies block scales, so it runs below this.
// Counter "MAC/s": one core's rate.
__attribute__((target("avx2"))) int64_t PeakInt8Loop(int64_t iters) {
  __m256i a = _mm256_set1_epi8(3);
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i acc[8], b[8];
  for (int i = 0; i < 8; ++i) {
    acc[i] = _mm256_setzero_si256();
    b[i] = _mm256_set1_epi8(static_cast<char>(i + 1));
  }
  for (int64_t it = 0; it < iters; ++it) {
    for (int i = 0; i < 8; ++i) {
      acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(_mm256_maddubs_epi16(a, b[i]), ones));
    }
    __asm__ volatile("" : "+x"(a));  // keeps the loop from being folded
  }
  int64_t sum = 0;
  for (int i = 0; i < 8; ++i) sum += _mm256_extract_epi32(acc[i], 0);
  return sum;
}

void BM_PeakInt8(benchmark::State& state) {
  if (!__builtin_cpu_supports("avx2")) {
    state.SkipWithError("no AVX2");
    return;
  }
  constexpr int64_t kIters = 1 << 20;
  for (auto _ : state) benchmark::DoNotOptimize(PeakInt8Loop(kIters));
  state.counters["MAC/s"] = benchmark::Counter(static_cast<double>(kIters) * 8 * 32,
                                               benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_PeakInt8);
#endif

}  // namespace
}  // namespace radixlm::kernels

BENCHMARK_MAIN();
