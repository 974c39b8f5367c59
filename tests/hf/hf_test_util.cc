#include "hf_test_util.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/fp16.h"
#include "kernels/quant.h"

namespace radixlm::hf::testing {
namespace {

namespace fs = std::filesystem;

// GGUF layer tensor part -> Hugging Face's (gemma's norms differ, see GgufToHf).
const std::map<std::string, std::string>& LayerParts() {
  static const std::map<std::string, std::string> parts = {
      {"attn_norm", "input_layernorm"},
      {"attn_q", "self_attn.q_proj"},
      {"attn_k", "self_attn.k_proj"},
      {"attn_v", "self_attn.v_proj"},
      {"attn_output", "self_attn.o_proj"},
      {"attn_q_norm", "self_attn.q_norm"},
      {"attn_k_norm", "self_attn.k_norm"},
      {"ffn_gate", "mlp.gate_proj"},
      {"ffn_up", "mlp.up_proj"},
      {"ffn_down", "mlp.down_proj"},
      {"post_ffw_norm", "post_feedforward_layernorm"},
      {"post_attention_norm", "post_attention_layernorm"}};
  return parts;
}

std::string GgufToHf(const std::string& name, bool gemma) {
  if (name == "token_embd.weight") return "model.embed_tokens.weight";
  if (name == "output_norm.weight") return "model.norm.weight";
  if (name == "output.weight") return "lm_head.weight";
  static const std::regex kBlk(R"(blk\.(\d+)\.(.+)\.(weight|bias))");
  std::smatch m;
  if (!std::regex_match(name, m, kBlk)) return "";
  std::string part = m[2].str();
  std::string hf;
  if (part == "ffn_norm") {
    hf = gemma ? "pre_feedforward_layernorm" : "post_attention_layernorm";
  } else if (LayerParts().count(part) != 0) {
    hf = LayerParts().at(part);
  } else {
    return "";
  }
  return "model.layers." + m[1].str() + "." + hf + "." + m[3].str();
}

int64_t MetaInt(const gguf::GgufFile& g, const std::string& key, int64_t def) {
  auto v = g.GetIntOr(key, def);
  return v.ok() ? *v : def;
}
double MetaFloat(const gguf::GgufFile& g, const std::string& key, double def) {
  auto v = g.GetFloatOr(key, def);
  return v.ok() ? *v : def;
}

}  // namespace

std::vector<uint8_t> SafetensorsBytes(const std::vector<StEntry>& entries) {
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"format", "pt"}};
  uint64_t offset = 0;
  for (const StEntry& e : entries) {
    header[e.name] = {{"dtype", e.dtype},
                      {"shape", e.shape},
                      {"data_offsets", {offset, offset + e.bytes.size()}}};
    offset += e.bytes.size();
  }
  std::string text = header.dump();
  while (text.size() % 8 != 0) text += ' ';
  std::string out;
  const uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(n >> (8 * i)));
  out += text;
  for (const StEntry& e : entries) out.append(e.bytes.begin(), e.bytes.end());
  return std::vector<uint8_t>(out.begin(), out.end());
}

void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

namespace {

// The folders FreshDir made in this process, removed when it exits unless a test failed (then
// they stay for a look).
class MadeDirs {
 public:
  ~MadeDirs() {
    const ::testing::UnitTest* unit = ::testing::UnitTest::GetInstance();
    if (unit->Failed()) return;
    for (const fs::path& dir : dirs_) {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  }
  void Add(const fs::path& dir) { dirs_.push_back(dir); }

 private:
  std::vector<fs::path> dirs_;
};

}  // namespace

std::string BytesFromHex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

nlohmann::json ReadTestdataJson(const std::string& name) {
  std::ifstream in(std::string(RADIXLM_SOURCE_DIR) + "/tests/hf/testdata/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

std::string GoldenCaseInput(const nlohmann::json& c) {
  return c.contains("bytes_hex") ? BytesFromHex(c["bytes_hex"].get<std::string>())
                                 : c["text"].get<std::string>();
}

std::string FreshDir(const std::string& name) {
  // One folder per test and process: ctest runs the tests of a fixture in parallel processes,
  // which would otherwise clear each other's folder.
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string owner = test != nullptr
                                ? std::string(test->test_suite_name()) + "." + test->name()
                                : std::string("none");
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("hf_test_" + name + "_" + owner + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  static MadeDirs made;  // constructed after gtest's UnitTest, so destroyed before it
  made.Add(dir);
  return dir.string();
}

nlohmann::json TinyTokenizerJson(int64_t n) {
  nlohmann::json vocab = nlohmann::json::object();
  int64_t id = 0;
  for (int c = 33; c <= 126 && id < n - 1; ++c) vocab[std::string(1, static_cast<char>(c))] = id++;
  nlohmann::json merges = nlohmann::json::array();
  for (char a = 'a'; id < n - 1 && a < 'z'; a += 2) {
    const std::string left(1, a), right(1, static_cast<char>(a + 1));
    vocab[left + right] = id++;
    merges.push_back(left + " " + right);
  }
  nlohmann::json tok;
  tok["version"] = "1.0";
  tok["normalizer"] = nullptr;
  tok["pre_tokenizer"] = {{"type", "ByteLevel"},
                          {"add_prefix_space", false},
                          {"trim_offsets", true},
                          {"use_regex", true}};
  tok["post_processor"] = nullptr;
  tok["decoder"] = {{"type", "ByteLevel"}};
  tok["model"] = {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}, {"byte_fallback", false}};
  tok["added_tokens"] = nlohmann::json::array(
      {{{"id", id}, {"content", "<|endoftext|>"}, {"special", true}, {"normalized", false}}});
  return tok;
}

void WriteFolderFromGguf(const gguf::GgufFile& g, const std::string& hf_arch,
                         const std::string& dir, const std::string& dtype) {
  const std::string a = *g.GetString("general.architecture");
  const bool gemma = a == "gemma3";
  const bool permute = a == "llama";
  const int64_t hidden = MetaInt(g, a + ".embedding_length", 0);
  const int64_t n_heads = MetaInt(g, a + ".attention.head_count", 0);
  const int64_t n_kv = MetaInt(g, a + ".attention.head_count_kv", n_heads);
  const gguf::TensorInfo* embd = g.FindTensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  const int64_t vocab = embd->shape[1];
  nlohmann::json config = {
      {"architectures", {hf_arch}},
      {"model_type", a},
      {"num_hidden_layers", MetaInt(g, a + ".block_count", 0)},
      {"hidden_size", hidden},
      {"intermediate_size", MetaInt(g, a + ".feed_forward_length", 0)},
      {"num_attention_heads", n_heads},
      {"num_key_value_heads", n_kv},
      {"head_dim", MetaInt(g, a + ".attention.key_length", hidden / n_heads)},
      {"rms_norm_eps", MetaFloat(g, a + ".attention.layer_norm_rms_epsilon", 1e-6)},
      {"rope_theta", MetaFloat(g, a + ".rope.freq_base", 10000.0)},
      {"max_position_embeddings", MetaInt(g, a + ".context_length", 4096)},
      {"vocab_size", vocab},
      {"tie_word_embeddings", g.FindTensor("output.weight") == nullptr},
      {"torch_dtype", dtype == "BF16" ? "bfloat16" : "float32"}};
  if (gemma) {
    config["sliding_window"] = MetaInt(g, a + ".attention.sliding_window", 512);
    config["sliding_window_pattern"] = 6;
    config["rope_local_base_freq"] = MetaFloat(g, a + ".rope.freq_base_swa", 10000.0);
  }
  WriteText(dir + "/config.json", config.dump(2));
  WriteText(dir + "/tokenizer.json", TinyTokenizerJson(vocab).dump());
  nlohmann::json tc = {{"eos_token", "<|endoftext|>"},
                       {"add_bos_token", false},
                       {"chat_template",
                        "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                        "{% if add_generation_prompt %}assistant: {% endif %}"}};
  WriteText(dir + "/tokenizer_config.json", tc.dump(2));

  std::vector<StEntry> entries;
  for (const gguf::TensorInfo& t : g.tensors()) {
    const std::string hf = GgufToHf(t.name, gemma);
    ASSERT_FALSE(hf.empty()) << "no Hugging Face name for " << t.name;
    const int64_t cols = t.shape[0];
    const int64_t rows = t.num_rows();
    std::vector<float> gguf_values(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) {
      kernels::DequantizeRow(t.type, t.data + r * kernels::RowBytes(t.type, cols),
                             gguf_values.data() + r * cols, cols);
    }
    // The converter's permute: reshape(n_head, 2, rows / n_head / 2, cols).swapaxes(1, 2), so
    // GGUF row h * hd + 2 i + j holds HF row h * hd + j * hd / 2 + i.
    std::vector<float> values = gguf_values;
    const bool is_q = t.name.find(".attn_q.") != std::string::npos;
    const bool is_k = t.name.find(".attn_k.") != std::string::npos;
    const int64_t heads = is_q ? n_heads : n_kv;
    const int64_t n_rows = t.shape.size() == 1 ? t.shape[0] : rows;
    const int64_t width = t.shape.size() == 1 ? 1 : cols;
    if (permute && (is_q || is_k)) {
      const int64_t hd = n_rows / heads;
      for (int64_t h = 0; h < heads; ++h) {
        for (int64_t i = 0; i < hd / 2; ++i) {
          for (int64_t j = 0; j < 2; ++j) {
            std::memcpy(&values[(h * hd + j * hd / 2 + i) * width],
                        &gguf_values[(h * hd + 2 * i + j) * width], width * sizeof(float));
          }
        }
      }
    }
    if (gemma && t.name.ends_with("norm.weight")) {
      for (float& v : values) v -= 1.0f;
    }
    StEntry e;
    e.name = hf;
    e.shape =
        t.shape.size() == 1 ? std::vector<int64_t>{t.shape[0]} : std::vector<int64_t>{rows, cols};
    const bool vector = t.shape.size() == 1;
    e.dtype = vector ? "F32" : dtype;
    if (e.dtype == "F32") {
      e.bytes.resize(values.size() * 4);
      std::memcpy(e.bytes.data(), values.data(), e.bytes.size());
    } else {
      e.bytes.resize(values.size() * 2);
      for (size_t i = 0; i < values.size(); ++i) {
        const uint16_t b = kernels::F32ToBf16(values[i]);
        std::memcpy(&e.bytes[2 * i], &b, 2);
      }
    }
    entries.push_back(std::move(e));
  }
  WriteFile(dir + "/model.safetensors", SafetensorsBytes(entries));
}

}  // namespace radixlm::hf::testing
