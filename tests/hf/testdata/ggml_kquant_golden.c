// Writes ggml's reference Q4_K and Q6_K bytes (quantize_q4_K / quantize_q6_K without an
// importance matrix: quantize_row_q4_K_ref / quantize_row_q6_K_ref, what llama-quantize runs)
// of the deterministic rows reference_quant_test.cc builds with the same GoldenRows function.
// Built against the peer llama.cpp's ggml (see tests/model/llama_cpp/README.md for the command).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ggml.h"

#include "kquant_golden_rows.h"

static int write_file(const char* path, const void* data, size_t n) {
  FILE* f = fopen(path, "wb");
  if (!f || fwrite(data, 1, n, f) != n) return 1;
  return fclose(f);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s OUT_Q4_K OUT_Q6_K\n", argv[0]);
    return 2;
  }
  static float rows[kGoldenRows * kGoldenCols];
  GoldenRows(rows);
  const enum ggml_type types[2] = {GGML_TYPE_Q4_K, GGML_TYPE_Q6_K};
  for (int t = 0; t < 2; ++t) {
    const size_t bytes = ggml_row_size(types[t], kGoldenCols) * kGoldenRows;
    void* out = calloc(1, bytes);
    const size_t wrote =
        ggml_quantize_chunk(types[t], rows, out, 0, kGoldenRows, kGoldenCols, NULL);
    if (wrote != bytes || write_file(argv[1 + t], out, bytes) != 0) return 1;
    free(out);
  }
  return 0;
}
