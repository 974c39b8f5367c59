// The qwen3vl_merger projector beyond the llama.cpp golden (projector_golden_test.cc): variants
// of the golden's tiny projector (tests/vision/testdata/tiny_qwen3vl_mmproj.gguf) rewritten
// with tensors left out or changed. Rows are the merger's output then one slice per deepstack
// layer; each slice depends on its own merger only; what the graph needs is refused by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "tiny_projector.h"
#include "vision/projector.h"

namespace radixlm::vision::qwen3vl_test {
namespace {

using testing::TestPicture;

const std::string kGolden =
    std::string(RADIXLM_SOURCE_DIR) + "/tests/vision/testdata/tiny_qwen3vl_mmproj.gguf";
constexpr int64_t kSlice = 64;  // the golden's projection_dim

// The golden file rewritten: tensors for which `drop` is true left out, `edit` applied to the
// F32 tensors' values (by name).
using Edit = std::function<void(const std::string&, std::vector<float>*)>;
StatusOr<std::unique_ptr<Projector>> Variant(const std::function<bool(const std::string&)>& drop,
                                             const Edit& edit, std::vector<uint8_t>* bytes) {
  auto golden = gguf::GgufFile::Open(kGolden);
  if (!golden.ok()) return golden.status();
  gguf::GgufWriter w;
  for (const auto& [key, value] : (*golden)->metadata()) {
    if (key != "general.alignment") w.AddMetadata(key, value);
  }
  for (const gguf::TensorInfo& t : (*golden)->tensors()) {
    if (drop(t.name)) continue;
    std::vector<uint8_t> data(t.data, t.data + t.size_bytes);
    if (t.type == gguf::GgmlType::kF32 && edit) {
      std::vector<float> v(t.size_bytes / sizeof(float));
      std::memcpy(v.data(), data.data(), t.size_bytes);
      edit(t.name, &v);
      std::memcpy(data.data(), v.data(), t.size_bytes);
    }
    RADIXLM_RETURN_IF_ERROR(w.AddTensor(t.name, t.type, t.shape, std::move(data)));
  }
  *bytes = w.Serialize();
  auto file = gguf::GgufFile::FromBuffer(bytes->data(), bytes->size());
  if (!file.ok()) return file.status();
  return Projector::FromGguf(std::move(*file), {.n_threads = 2});
}

std::vector<float> Encode(Projector& p) {
  std::vector<float> out;
  EXPECT_TRUE(p.Encode(TestPicture(64, 48, 3), &out).ok());
  return out;
}

// The largest |a - b| over slice `s` of every row.
float SliceDiff(const std::vector<float>& a, const std::vector<float>& b, int64_t s,
                int64_t width) {
  float d = 0.0f;
  for (size_t r = 0; r * width < a.size(); ++r) {
    for (int64_t i = 0; i < kSlice; ++i) {
      d = std::max(d, std::fabs(a[r * width + s * kSlice + i] - b[r * width + s * kSlice + i]));
    }
  }
  return d;
}

TEST(Qwen3VlTest, RowsAreTheMergerThenOneSlicePerDeepstackLayer) {
  std::vector<uint8_t> bytes, other_bytes;
  auto same = Variant([](const std::string&) { return false; }, nullptr, &bytes);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ((*same)->type(), "qwen3vl_merger");
  EXPECT_EQ((*same)->n_deepstack(), 2);
  EXPECT_EQ((*same)->n_embd(), 3 * kSlice);
  const std::vector<float> base = Encode(**same);
  ASSERT_EQ(base.size(),
            static_cast<size_t>((*same)->TokensFor(TestPicture(64, 48, 3)) * 3 * kSlice));
  // The second deepstack merger's output bias changed: its slice alone moves, by that bias.
  auto moved = Variant([](const std::string&) { return false; },
                       [](const std::string& name, std::vector<float>* v) {
                         if (name == "v.deepstack.1.fc2.bias") {
                           for (float& x : *v) x += 1.0f;
                         }
                       },
                       &other_bytes);
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  const std::vector<float> out = Encode(**moved);
  EXPECT_EQ(SliceDiff(base, out, 0, 3 * kSlice), 0.0f);
  EXPECT_EQ(SliceDiff(base, out, 1, 3 * kSlice), 0.0f);
  EXPECT_NEAR(SliceDiff(base, out, 2, 3 * kSlice), 1.0f, 1e-5f);
  // Without the deepstack tensors: rows of the merger alone, equal to the first slice.
  auto plain = Variant([](const std::string& name) { return name.rfind("v.deepstack.", 0) == 0; },
                       nullptr, &other_bytes);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ((*plain)->n_deepstack(), 0);
  EXPECT_EQ((*plain)->n_embd(), kSlice);
  const std::vector<float> merged = Encode(**plain);
  ASSERT_EQ(merged.size() * 3, base.size());
  for (size_t r = 0; r * kSlice < merged.size(); ++r) {
    for (int64_t i = 0; i < kSlice; ++i) {
      ASSERT_EQ(merged[r * kSlice + i], base[r * 3 * kSlice + i]) << "row " << r;
    }
  }
}

TEST(Qwen3VlTest, RefusesWhatTheGraphNeedsByName) {
  for (const char* missing :
       {"v.position_embd.weight", "v.patch_embd.bias", "v.deepstack.0.norm.weight",
        "v.deepstack.1.fc2.weight", "v.blk.2.attn_qkv.weight", "mm.2.weight"}) {
    std::vector<uint8_t> bytes;
    auto p = Variant([&](const std::string& name) { return name == missing; }, nullptr, &bytes);
    ASSERT_FALSE(p.ok()) << missing;
    EXPECT_NE(p.status().message().find(missing), std::string::npos)
        << missing << ": " << p.status().ToString();
  }
}

}  // namespace
}  // namespace radixlm::vision::qwen3vl_test
