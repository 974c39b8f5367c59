#include "test_util.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "gguf/gguf_file.h"

namespace radixlm::tokenizer::testutil {
namespace {

// Keeps the mapped file alive as long as the tokenizer (the tokenizer copies what it needs,
// so the file could go; holding it costs nothing and keeps the helper simple).
StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string VocabPath(const std::string& name) {
  return std::string(RADIXLM_TESTDATA_DIR) + "/llama-vocab/ggml-vocab-" + name + ".gguf";
}

StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizerFile(const std::string& path) {
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::Open(path));
  return Tokenizer::FromGguf(*file);
}

StatusOr<std::vector<VocabCase>> ReadVocabCases(const std::string& name) {
  const std::string base = VocabPath(name);
  RADIXLM_ASSIGN_OR_RETURN(std::string inp, ReadFile(base + ".inp"));
  RADIXLM_ASSIGN_OR_RETURN(std::string out, ReadFile(base + ".out"));
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  size_t prev = 0;
  for (size_t pos; (pos = inp.find(sep, prev)) != std::string::npos; prev = pos + sep.size()) {
    texts.push_back(inp.substr(prev, pos - prev));
  }
  if (prev < inp.size()) texts.push_back(inp.substr(prev));  // no trailing separator

  std::vector<VocabCase> cases;
  std::istringstream lines(out);
  std::string line;
  for (const std::string& text : texts) {
    if (!std::getline(lines, line)) {
      return Internal(name + ".out has fewer lines than " + name + ".inp has tests");
    }
    VocabCase c;
    c.text = text;
    std::istringstream ids(line);
    for (int64_t id; ids >> id;) c.ids.push_back(static_cast<int32_t>(id));
    cases.push_back(std::move(c));
  }
  return cases;
}

std::string IdsToString(const std::vector<int32_t>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(ids[i]);
  }
  return s + "]";
}

std::string Escape(const std::string& bytes) {
  std::string s;
  for (unsigned char c : bytes) {
    if (c == '\n') {
      s += "\\n";
    } else if (c == '\t') {
      s += "\\t";
    } else if (c == '\r') {
      s += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02X", c);
      s += buf;
    } else {
      s.push_back(static_cast<char>(c));
    }
  }
  return s;
}

const std::vector<std::string>& SupportedVocabNames() {
  static const std::vector<std::string> kNames = {
      "llama-spm", "phi-3", "gpt-2",  "deepseek-coder", "deepseek-llm",
      "falcon",    "mpt",   "refact", "starcoder"};
  return kNames;
}

}  // namespace radixlm::tokenizer::testutil
