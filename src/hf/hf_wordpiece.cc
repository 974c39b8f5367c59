#include "hf/hf_wordpiece.h"

#include <utility>

namespace radixlm::hf {

StatusOr<HfVocab> WordPieceVocab(const nlohmann::json& tok, int64_t vocab_size,
                                 const std::string& path) {
  using gguf::Value;
  const nlohmann::json& model = tok["model"];
  const std::string prefix = model.value("continuing_subword_prefix", std::string("##"));
  if (prefix != "##") {
    return InvalidArgument(path + ": WordPiece continuing_subword_prefix '" + prefix +
                           "' is not \"##\" (llama.cpp's WordPiece reads only \"##\")");
  }
  RADIXLM_ASSIGN_OR_RETURN(TokenTable table, ReadTokenTable(tok, vocab_size, path));
  int64_t sep = -1;
  for (size_t i = 0; i < table.tokens.size(); ++i) {
    std::string& t = table.tokens[i];
    if (t == "[SEP]" && sep < 0) sep = static_cast<int64_t>(i);
    if (table.types[i] == kControl) continue;
    t = t.starts_with("##") ? t.substr(2) : "\xE2\x96\x81" + t;
  }
  HfVocab out;
  out.kind = "WordPiece";
  out.n_real_tokens = table.n_real;
  auto& md = out.metadata;
  md.emplace_back("tokenizer.ggml.model", Value::Str("bert"));
  md.emplace_back("tokenizer.ggml.pre", Value::Str("default"));
  md.emplace_back("tokenizer.ggml.tokens", Value::StrArr(table.tokens));
  md.emplace_back("tokenizer.ggml.token_type", Value::I32Arr(table.types));
  if (sep >= 0) {
    md.emplace_back("tokenizer.ggml.seperator_token_id", Value::U32(static_cast<uint32_t>(sep)));
  }
  // The Unicode normal forms, then at most one BertNormalizer (whose steps the WordPiece
  // encoder runs: a normal form after them is refused).
  const nlohmann::json* norm = nullptr;
  std::vector<std::string> normal_forms;
  const std::vector<nlohmann::json> members =
      NormalizerMembers(tok.contains("normalizer") ? tok["normalizer"] : nlohmann::json());
  for (const nlohmann::json& n : members) {
    const std::string form = NormalFormStep(n);
    if (!form.empty() && norm == nullptr) {
      normal_forms.push_back(form);
    } else if (n.is_object() && n.value("type", "") == "BertNormalizer" && norm == nullptr) {
      norm = &n;
    } else {
      return InvalidArgument(path + ": WordPiece with normalizer " + Describe(n) +
                             " (radixlm reads the Unicode normal forms NFC, NFD, NFKC, NFKD, "
                             "then one BertNormalizer)");
    }
  }
  if (!normal_forms.empty()) {
    md.emplace_back("tokenizer.hf.normalizers", Value::StrArr(normal_forms));
    out.kind += " (normalizer";
    for (const std::string& form : normal_forms) out.kind += " " + form;
    out.kind += norm != nullptr ? " BertNormalizer)" : ")";
  }
  if (norm == nullptr && !members.empty()) {
    // Normal forms without a BertNormalizer: no lowercasing or accent stripping.
    md.emplace_back("tokenizer.ggml.normalizer.lowercase", Value::Bool(false));
    md.emplace_back("tokenizer.ggml.normalizer.strip_accents", Value::Bool(false));
    out.notes.push_back(
        "no BertNormalizer: CJK ideographs are still split and control characters dropped "
        "(llama.cpp's WordPiece always does)");
  }
  if (norm != nullptr) {
    const bool lowercase = norm->value("lowercase", true);
    const nlohmann::json& strip =
        norm->contains("strip_accents") ? (*norm)["strip_accents"] : nlohmann::json();
    if (!lowercase) md.emplace_back("tokenizer.ggml.normalizer.lowercase", Value::Bool(false));
    if (strip.is_boolean()) {
      md.emplace_back("tokenizer.ggml.normalizer.strip_accents", Value::Bool(strip.get<bool>()));
    }
    if (!norm->value("handle_chinese_chars", true) || !norm->value("clean_text", true)) {
      out.notes.push_back(
          "BertNormalizer's handle_chinese_chars / clean_text off: not applied "
          "(llama.cpp always splits CJK and drops control characters)");
    }
  }
  out.tokens = std::move(table.tokens);
  return out;
}

}  // namespace radixlm::hf
