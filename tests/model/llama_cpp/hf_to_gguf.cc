// A Hugging Face folder as radixlm reads it (hf/hf_folder.h), written out as a GGUF: the
// metadata keys and tensors (names, types, bytes) the loaders see, for comparison with the
// GGUF llama.cpp's convert_hf_to_gguf.py writes from the same folder (hf_compare.py).
// Usage: hf_to_gguf FOLDER OUT.gguf [QUANTIZATION]
#include <cstdio>
#include <vector>

#include "gguf/gguf_writer.h"
#include "hf/hf_folder.h"

using namespace radixlm;

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  hf::HfFolderOptions options;
  if (argc > 3) options.quantization = argv[3];
  auto folder = hf::OpenHfFolder(argv[1], options);
  if (!folder.ok()) {
    fprintf(stderr, "%s\n", folder.status().ToString().c_str());
    return 1;
  }
  gguf::GgufWriter w;
  for (const auto& [key, value] : folder->file->metadata()) w.AddMetadata(key, value);
  for (const gguf::TensorInfo& t : folder->file->tensors()) {
    auto st = w.AddTensor(t.name, t.type, t.shape,
                          std::vector<uint8_t>(t.data, t.data + t.size_bytes));
    if (!st.ok()) {
      fprintf(stderr, "%s\n", st.ToString().c_str());
      return 1;
    }
  }
  auto st = w.WriteToFile(argv[2]);
  if (!st.ok()) {
    fprintf(stderr, "%s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
