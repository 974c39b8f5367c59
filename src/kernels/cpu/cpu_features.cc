#include "kernels/cpu/isa.h"

namespace radixlm::kernels::cpu {

bool CpuHasAvx2() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                          __builtin_cpu_supports("f16c");
  return has;
#else
  return false;
#endif
}

bool CpuHasAvx512() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has = CpuHasAvx2() && __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  return has;
#else
  return false;
#endif
}

}  // namespace radixlm::kernels::cpu

namespace radixlm::kernels::cpu {

bool CpuHasAvx512Vnni() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has = CpuHasAvx512() && __builtin_cpu_supports("avx512vnni");
  return has;
#else
  return false;
#endif
}

}  // namespace radixlm::kernels::cpu
