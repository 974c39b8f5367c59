// What llama.cpp's operation order would cost radixlm (bench/order_cost_bench.cc).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

namespace radixlm::order_cost {

// Best of `reps` rates of fn in calls per second (each rep calls fn until 0.2 s have passed).
template <typename Fn>
double CallsPerSecond(int reps, Fn fn) {
  double best = 0.0;
  for (int r = 0; r < reps; ++r) {
    int64_t calls = 0;
    const auto start = std::chrono::steady_clock::now();
    double secs = 0.0;
    do {
      fn();
      ++calls;
      secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } while (secs < 0.2);
    best = std::max(best, static_cast<double>(calls) / secs);
  }
  return best;
}

// The sum of eight float lanes in the tree of llamafile's hsum and ggml's hsum_float_8:
// (l4+l0, l5+l1, l6+l2, l7+l3) -> (h0+h2, h1+h3) -> their sum.
inline float HsumOrder(const float* lane) {
  float h[4];
  for (int i = 0; i < 4; ++i) h[i] = lane[i + 4] + lane[i];
  return (h[0] + h[2]) + (h[1] + h[3]);
}

// Elements of a and b (same size) whose bits differ.
inline int64_t CountMismatches(const std::vector<float>& a, const std::vector<float>& b) {
  int64_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  return n;
}

// Each prints one Markdown table; false when an order kernel does not reproduce its scalar
// statement bit for bit.
bool RunGemmOrderCost(int reps);
bool RunQ4KOrderCost(int reps);
bool RunQ6KOrderCost(int reps);
bool RunAttentionOrderCost(int reps);

}  // namespace radixlm::order_cost
