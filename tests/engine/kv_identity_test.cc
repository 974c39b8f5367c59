// KvIdentity on tiny GGUFs written here: the same file gives the same identity; anything that
// changes the KV a model computes or how the disk tier lays it out gives another.
#include "engine/kv_identity.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf_writer.h"

namespace radixlm {
namespace {

struct Spec {
  std::string name = "tiny";
  std::vector<float> weights = std::vector<float>(128, 0.5f);  // 512 bytes
  std::string tensor = "blk.0.attn_q.weight";
};

// The serialized file and a GgufFile reading it (the file points into the bytes).
struct Parsed {
  std::vector<uint8_t> bytes;
  std::unique_ptr<gguf::GgufFile> file;
};

Parsed Build(const Spec& spec) {
  gguf::GgufWriter writer;
  writer.AddMetadata("general.architecture", gguf::Value::Str("llama"));
  writer.AddMetadata("general.name", gguf::Value::Str(spec.name));
  EXPECT_TRUE(writer.AddF32Tensor(spec.tensor, {16, 8}, spec.weights).ok());
  Parsed p;
  p.bytes = writer.Serialize();
  auto file = gguf::GgufFile::FromBuffer(p.bytes.data(), p.bytes.size());
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  if (file.ok()) p.file = std::move(*file);
  return p;
}

uint64_t Id(const Spec& spec, int32_t block = 64, kernels::KvDtype dtype = kernels::KvDtype::kF16) {
  const Parsed p = Build(spec);
  return p.file ? KvIdentity(*p.file, block, dtype) : 0;
}

TEST(KvIdentityTest, TheSameFileAndSettingsGiveTheSameIdentity) {
  EXPECT_EQ(Id(Spec()), Id(Spec()));
  EXPECT_NE(Id(Spec()), 0u);
}

TEST(KvIdentityTest, WeightsMetadataAndNamesChangeIt) {
  const uint64_t base = Id(Spec());
  Spec weights;
  weights.weights[3] = 0.25f;  // within the first 256 bytes of the tensor
  EXPECT_NE(Id(weights), base);
  Spec metadata;
  metadata.name = "tinier";
  EXPECT_NE(Id(metadata), base);
  Spec tensor;
  tensor.tensor = "blk.0.attn_k.weight";
  EXPECT_NE(Id(tensor), base);
}

TEST(KvIdentityTest, TheKvDtypeAndTheBlockSizeChangeIt) {
  const uint64_t base = Id(Spec());
  EXPECT_NE(Id(Spec(), 64, kernels::KvDtype::kBF16), base);
  EXPECT_NE(Id(Spec(), 64, kernels::KvDtype::kFp8E5M2), base);
  EXPECT_NE(Id(Spec(), 64, kernels::KvDtype::kBF16), Id(Spec(), 64, kernels::KvDtype::kFp8E5M2));
  EXPECT_NE(Id(Spec(), 32), base);
}

// The documented bound: only a tensor's first 256 bytes are hashed (a model with other
// weights differs there), so a change past them alone keeps the identity.
TEST(KvIdentityTest, OnlyTheFirstBytesOfEachTensorAreRead) {
  Spec late;
  late.weights[100] = 0.25f;  // byte 400 of 512
  EXPECT_EQ(Id(late), Id(Spec()));
}

}  // namespace
}  // namespace radixlm
