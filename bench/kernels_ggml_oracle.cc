// Oracle: radixlm's dequantization and dot products vs ggml's, on every 2-D tensor of a GGUF.
//
// ggml is loaded at run time (dlopen) from llama-cpp-python's bundled shared libraries, so
// nothing links against it. For 16 rows of each tensor it checks:
//   * DequantizeRow == ggml to_float, bit for bit;
//   * VecDot on ggml's own quantized activation == ggml vec_dot (relative to sum |w x|);
//   * VecDot on radixlm's quantized activation vs ggml (reported; quantizers may round apart).
// Exit status 0 iff the first two hold everywhere.
//
// Usage: kernels_ggml_oracle MODEL.gguf [DIR_WITH_libggml-base.so_AND_libggml-cpu.so]
//   e.g. DIR = <venv>/lib/python3.11/site-packages/llama_cpp/lib
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "kernels/dot.h"
#include "kernels/quant.h"

namespace {

using namespace radixlm;           // NOLINT
using namespace radixlm::kernels;  // NOLINT

// ggml's public structs (ggml.h / ggml-cpu.h), as of ggml 2025.
using ToFloatFn = void (*)(const void*, float*, int64_t);
using FromFloatFn = void (*)(const float*, void*, int64_t);
using GgmlVecDotFn = void (*)(int, float*, size_t, const void*, size_t, const void*, size_t, int);
struct GgmlTypeTraits {
  const char* type_name;
  int64_t blck_size;
  int64_t blck_size_interleave;
  size_t type_size;
  bool is_quantized;
  ToFloatFn to_float;
  FromFloatFn from_float_ref;
};
struct GgmlTypeTraitsCpu {
  FromFloatFn from_float;
  GgmlVecDotFn vec_dot;
  int vec_dot_type;
  int64_t nrows;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.gguf [GGML_LIB_DIR]\n", argv[0]);
    return 2;
  }
  const std::string dir = argc > 2 ? std::string(argv[2]) + "/" : "";
  void* base = dlopen((dir + "libggml-base.so").c_str(), RTLD_NOW | RTLD_GLOBAL);
  void* cpu = dlopen((dir + "libggml-cpu.so").c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (base == nullptr || cpu == nullptr) {
    std::fprintf(stderr, "dlopen failed: %s\n", dlerror());
    return 2;
  }
  auto traits =
      reinterpret_cast<const GgmlTypeTraits* (*)(int)>(dlsym(base, "ggml_get_type_traits"));
  auto traits_cpu =
      reinterpret_cast<const GgmlTypeTraitsCpu* (*)(int)>(dlsym(cpu, "ggml_get_type_traits_cpu"));
  auto cpu_init = reinterpret_cast<void (*)()>(dlsym(cpu, "ggml_cpu_init"));
  if (traits == nullptr || traits_cpu == nullptr || cpu_init == nullptr) {
    std::fprintf(stderr, "ggml symbols not found\n");
    return 2;
  }
  cpu_init();
  auto file = gguf::GgufFile::Open(argv[1]);
  if (!file.ok()) {
    std::fprintf(stderr, "%s\n", file.status().ToString().c_str());
    return 2;
  }
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  int bad = 0;
  bool printed[64] = {};
  for (const auto& t : (*file)->tensors()) {
    if (t.shape.size() != 2) continue;
    const int id = static_cast<int>(t.type);
    const GgmlTypeTraits* tt = traits(id);
    const GgmlTypeTraitsCpu* ct = traits_cpu(id);
    const int64_t cols = t.shape[0], rows = t.shape[1];
    if (tt->type_size != BlockBytes(t.type) || tt->blck_size != BlockSize(t.type)) {
      std::printf("%s: block geometry differs from ggml\n", t.name.c_str());
      ++bad;
      continue;
    }
    const size_t row_bytes = RowBytes(t.type, cols);
    const GgmlTypeTraits* act_traits = traits(ct->vec_dot_type);
    double deq_diff = 0, dot_same = 0, dot_own = 0;
    std::vector<float> theirs(cols), ours(cols), x(cols);
    for (int k = 0; k < 16; ++k) {
      const uint8_t* row = t.data + (rows - 1) * k / 15 * row_bytes;
      tt->to_float(row, theirs.data(), cols);
      DequantizeRow(t.type, row, ours.data(), cols);
      for (int64_t i = 0; i < cols; ++i) {
        deq_diff = std::max(deq_diff, static_cast<double>(std::fabs(theirs[i] - ours[i])));
      }
      for (auto& v : x) v = normal(rng);
      double mag = 0;
      for (int64_t i = 0; i < cols; ++i) mag += std::fabs(theirs[i] * x[i]);
      std::vector<uint8_t> xq(cols / act_traits->blck_size * act_traits->type_size);
      traits_cpu(ct->vec_dot_type)->from_float(x.data(), xq.data(), cols);
      float ref = 0;
      ct->vec_dot(static_cast<int>(cols), &ref, 0, row, 0, xq.data(), 0, 1);
      if (static_cast<int>(ActivationType(t.type)) == ct->vec_dot_type) {
        dot_same = std::max(dot_same, std::fabs(VecDot(t.type, cols, row, xq.data()) - ref) / mag);
      } else {
        dot_same = NAN;  // different activation formats (Q4_1/Q5_1): only the own-act check
      }
      std::vector<uint8_t> xo(RowBytes(ActivationType(t.type), cols));
      QuantizeRow(ActivationType(t.type), x.data(), xo.data(), cols);
      dot_own = std::max(dot_own, std::fabs(VecDot(t.type, cols, row, xo.data()) - ref) / mag);
    }
    const bool fail = deq_diff > 0 || dot_same > 1e-5;
    if (fail || (id < 64 && !printed[id])) {
      if (id < 64) printed[id] = true;
      std::printf("%-28s %-5s dequant max|diff|=%g  dot rel diff: same act %.2e, own act %.2e%s\n",
                  t.name.c_str(), tt->type_name, deq_diff, dot_same, dot_own, fail ? "  FAIL" : "");
    }
    bad += fail;
  }
  std::printf("%s (%d tensors failed)\n", bad == 0 ? "OK" : "MISMATCH", bad);
  return bad == 0 ? 0 : 1;
}
