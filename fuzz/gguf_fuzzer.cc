// GGUF parsing: GgufFile::FromBuffer on the input, then what the engine reads from a file that
// parses (the description `radixlm inspect` prints, every metadata value, the tokenizer).
//
// Rejected files are fine (a Status); a parsed file must keep every tensor's data inside the
// buffer. The input is copied to an exact-size allocation so any read past its end is an
// AddressSanitizer report.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "gguf/gguf_describe.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

using radixlm::gguf::GgufFile;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[size == 0 ? 1 : size]);
  if (size > 0) std::memcpy(copy.get(), data, size);
  auto file = GgufFile::FromBuffer(copy.get(), size);
  if (!file.ok()) return 0;
  const GgufFile& gguf = **file;
  for (const radixlm::gguf::TensorInfo& t : gguf.tensors()) {
    if (t.data < copy.get() || t.size_bytes > size || t.data + t.size_bytes > copy.get() + size) {
      std::abort();  // GgufFile's contract: tensor data lies inside the file
    }
  }
  (void)radixlm::gguf::DescribeGguf(gguf);
  for (const auto& [key, value] : gguf.metadata()) (void)value.ToString();
  // A vocabulary in the metadata (the seed corpus has some): build the tokenizer and use it.
  auto tokenizer = radixlm::tokenizer::Tokenizer::FromGguf(gguf);
  if (tokenizer.ok()) {
    const std::vector<int32_t> ids = (*tokenizer)->Encode("Hello world <s>\n", true, true);
    (void)(*tokenizer)->Decode(ids);
  }
  return 0;
}
