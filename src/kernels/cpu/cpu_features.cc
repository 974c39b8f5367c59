#include "kernels/cpu/isa.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace radixlm::kernels::cpu {

#if defined(__x86_64__) || defined(__i386__)
namespace {
// CPUID leaf 1, ECX bit 29; clang 14's __builtin_cpu_supports does not know "f16c".
bool CpuHasF16c() {
  unsigned eax, ebx, ecx, edx;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}
}  // namespace
#endif

bool CpuHasAvx2() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && CpuHasF16c();
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

bool CpuHasAvx512Vnni() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has = CpuHasAvx512() && __builtin_cpu_supports("avx512vnni");
  return has;
#else
  return false;
#endif
}

bool CpuHasAvxVnni() {
#if defined(__x86_64__)
  static const bool has = [] {
    unsigned eax, ebx, ecx, edx;
    if (!CpuHasAvx2() || !__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) return false;
    return ((eax >> 4) & 1) != 0;  // CPUID.(EAX=7,ECX=1):EAX[4] AVX-VNNI
  }();
  return has;
#else
  return false;
#endif
}

bool CpuHasAmxInt8() {
#if defined(__x86_64__) && defined(__linux__)
  static const bool has = [] {
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
    const bool tile = (edx >> 24) & 1, int8 = (edx >> 25) & 1;
    if (!tile || !int8) return false;
    constexpr long kArchReqXcompPerm = 0x1023;
    constexpr long kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return has;
#else
  return false;
#endif
}

bool CpuHasAvx512Bf16() {
#if defined(__x86_64__)
  static const bool has = [] {
    unsigned eax, ebx, ecx, edx;
    if (!CpuHasAvx512() || !__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) return false;
    return ((eax >> 5) & 1) != 0;  // CPUID.(EAX=7,ECX=1):EAX[5] AVX512_BF16
  }();
  return has;
#else
  return false;
#endif
}

bool CpuHasAmxBf16() {
#if defined(__x86_64__) && defined(__linux__)
  static const bool has = [] {
    unsigned eax, ebx, ecx, edx;
    if (!CpuHasAmxInt8() || !__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
    return ((edx >> 22) & 1) != 0;  // CPUID.(EAX=7,ECX=0):EDX[22] AMX-BF16
  }();
  return has;
#else
  return false;
#endif
}

}  // namespace radixlm::kernels::cpu
