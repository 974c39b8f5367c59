// What llama.cpp's operation order would cost radixlm (issue 12, item 5c): the kernels whose
// order llama.cpp's decode path fixes and radixlm's does not share, each timed in one run on one
// thread (bench/order_cost_gemm.cc, order_cost_q4k.cc, order_cost_q6k.cc, order_cost_attention.cc):
// radixlm's kernel, a kernel keeping llama.cpp's per-output order, and (for the Q8_0 matmul) one
// written after llama.cpp's own loop. The order kernels are checked bit for bit against a scalar
// statement of their order (exit status 1 if one differs).
//
// Usage: order_cost_bench [--reps N]   (needs AVX-512 VNNI; says so and exits 0 without it)
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/order_cost.h"
#include "kernels/cpu/isa.h"

int main(int argc, char** argv) {
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--reps N]\n", argv[0]);
      return 2;
    }
  }
  if (!radixlm::kernels::cpu::CpuHasAvx512Vnni()) {
    std::printf("order_cost_bench: this CPU has no AVX-512 VNNI; nothing measured\n");
    return 0;
  }
  const bool gemm_exact = radixlm::order_cost::RunGemmOrderCost(reps);
  std::printf("\n");
  const bool q4k_exact = radixlm::order_cost::RunQ4KOrderCost(reps);
  std::printf("\n");
  const bool q6k_exact = radixlm::order_cost::RunQ6KOrderCost(reps);
  std::printf("\n");
  const bool attention_exact = radixlm::order_cost::RunAttentionOrderCost(reps);
  if (!gemm_exact || !q4k_exact || !q6k_exact || !attention_exact) {
    std::printf("order_cost_bench: a kernel does not reproduce its order bit for bit\n");
    return 1;
  }
  return 0;
}
