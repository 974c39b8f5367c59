#include "lora_fixture.h"

#include <cassert>
#include <cstring>
#include <map>
#include <random>

#include "gguf/gguf_writer.h"
#include "kernels/quant.h"

namespace radixlm::model::testing {

namespace {

std::vector<uint8_t> Encode(gguf::GgmlType type, const std::vector<float>& v) {
  std::vector<uint8_t> bytes(kernels::RowBytes(type, static_cast<int64_t>(v.size())));
  kernels::QuantizeRow(type, v.data(), bytes.data(), static_cast<int64_t>(v.size()));
  return bytes;
}

std::vector<float> Decode(const gguf::TensorInfo& t) {
  std::vector<float> v(static_cast<size_t>(t.num_elements()));
  kernels::DequantizeRow(t.type, t.data, v.data(), t.num_elements());
  return v;
}

}  // namespace

std::vector<uint8_t> BuildLoraAdapter(const gguf::GgufFile& base, const LoraSpec& spec) {
  gguf::GgufWriter w;
  std::string arch = spec.arch;
  if (arch.empty()) arch = base.GetString("general.architecture").value();
  w.AddMetadata("general.architecture", gguf::Value::Str(arch));
  w.AddMetadata("general.type", gguf::Value::Str("adapter"));
  w.AddMetadata("adapter.type", gguf::Value::Str("lora"));
  w.AddMetadata("adapter.lora.alpha", gguf::Value::F32(spec.alpha));
  std::mt19937 rng(spec.seed);
  std::normal_distribution<float> dist(0.0f, spec.stddev);
  for (const gguf::TensorInfo& t : base.tensors()) {
    for (const std::string& stem : spec.targets) {
      const std::string suffix = "." + stem + ".weight";
      if (!t.name.starts_with("blk.") || !t.name.ends_with(suffix)) continue;
      const int64_t in = t.shape[0];
      const int64_t out = t.shape[1];
      std::vector<float> a(static_cast<size_t>(spec.rank * in));
      std::vector<float> b(static_cast<size_t>(out * spec.rank));
      for (float& x : a) x = dist(rng);
      for (float& x : b) x = dist(rng);
      Status st = w.AddTensor(t.name + ".lora_a", spec.type, {in, spec.rank}, Encode(spec.type, a));
      assert(st.ok());
      st = w.AddTensor(t.name + ".lora_b", spec.type, {spec.rank, out}, Encode(spec.type, b));
      assert(st.ok());
      (void)st;
    }
  }
  return w.Serialize();
}

std::vector<uint8_t> MergeLoraIntoBase(const gguf::GgufFile& base, const gguf::GgufFile& adapter) {
  gguf::GgufWriter w;
  for (const auto& [key, value] : base.metadata()) {
    if (key != "general.alignment") w.AddMetadata(key, value);
  }
  const float alpha = static_cast<float>(adapter.GetFloatOr("adapter.lora.alpha", 0.0).value());
  for (const gguf::TensorInfo& t : base.tensors()) {
    const gguf::TensorInfo* a = adapter.FindTensor(t.name + ".lora_a");
    const gguf::TensorInfo* b = adapter.FindTensor(t.name + ".lora_b");
    if (a == nullptr) {
      std::vector<uint8_t> bytes(t.data, t.data + t.size_bytes);
      Status st = w.AddTensor(t.name, t.type, t.shape, std::move(bytes));
      assert(st.ok());
      (void)st;
      continue;
    }
    const int64_t in = t.shape[0];
    const int64_t out = t.shape[1];
    const int64_t rank = a->shape[1];
    const float scale = alpha != 0.0f ? alpha / static_cast<float>(rank) : 1.0f;
    std::vector<float> m = Decode(t);          // [out][in]
    const std::vector<float> av = Decode(*a);  // [rank][in]
    const std::vector<float> bv = Decode(*b);  // [out][rank]
    for (int64_t o = 0; o < out; ++o) {
      for (int64_t i = 0; i < in; ++i) {
        double sum = 0.0;
        for (int64_t j = 0; j < rank; ++j) sum += double{bv[o * rank + j]} * av[j * in + i];
        m[o * in + i] += scale * static_cast<float>(sum);
      }
    }
    Status st = w.AddF32Tensor(t.name, t.shape, m);
    assert(st.ok());
    (void)st;
  }
  return w.Serialize();
}

}  // namespace radixlm::model::testing
