// tokenizer.json with a Unigram model (T5, XLM-RoBERTa, multilingual-e5, bge-m3 style) as the
// metadata of radixlm's Unigram tokenizer (tokenizer/unigram.h): tokenizer.ggml.model "t5",
// the pieces and their scores by id, then the added tokens past them and "[PAD<i>]" up to
// config.json's vocab_size; token types UNKNOWN (model.unk_id), BYTE (<0xXX> with
// byte_fallback), CONTROL / USER_DEFINED (added tokens, special or not), NORMAL;
// tokenizer.hf.unigram_tokens (how many pieces the model has), tokenizer.hf.unigram_scores (their
// scores in double, as the file and tokenizers keep them: exact ties between paths, such as the
// orders of the same pieces, are broken by their rounding), tokenizer.hf.byte_fallback, and
// the normaliser and pre-tokenizer as steps (tokenizer/hf_text_steps.h), a Precompiled
// normaliser's SentencePiece charsmap checked here (tokenizer/precompiled_charsmap.h), so that a
// malformed one fails at start-up; the Unicode normal forms NFC, NFD, NFKC and NFKD as steps of
// the same names (tokenizer/normal_form.h). Refused by name: Replace by any regex but " {2,}",
// and any other normaliser or pre-tokenizer.
#include <cmath>

#include "hf/hf_vocab.h"
#include "tokenizer/normal_form.h"
#include "tokenizer/precompiled_charsmap.h"

namespace radixlm::hf {
namespace {

using gguf::Value;

constexpr const char* kMetaspaceReplacement = "\xe2\x96\x81";  // U+2581, the default

// `j` flattened into *steps (a Sequence into its members).
Status NormalizerSteps(const nlohmann::json& j, const std::string& path,
                       std::vector<std::string>* steps) {
  if (j.is_null()) return Status::Ok();
  const std::string type = j.is_object() ? j.value("type", "") : "";
  if (type == "Sequence" && j.contains("normalizers") && j["normalizers"].is_array()) {
    for (const nlohmann::json& n : j["normalizers"]) {
      RADIXLM_RETURN_IF_ERROR(NormalizerSteps(n, path, steps));
    }
    return Status::Ok();
  }
  auto no_tab = [](const std::string& s) { return s.find('\t') == std::string::npos; };
  if (type == "Replace" && j.contains("pattern") && j["pattern"].is_object() &&
      j["pattern"].contains("String") && j["pattern"]["String"].is_string() &&
      j.contains("content") && j["content"].is_string()) {
    const std::string from = j["pattern"]["String"].get<std::string>();
    const std::string to = j["content"].get<std::string>();
    if (!from.empty() && no_tab(from) && no_tab(to)) {
      steps->push_back("Replace\t" + from + "\t" + to);
      return Status::Ok();
    }
  }
  if (type == "Prepend" && j.contains("prepend") && j["prepend"].is_string() &&
      no_tab(j["prepend"].get<std::string>())) {
    steps->push_back("Prepend\t" + j["prepend"].get<std::string>());
    return Status::Ok();
  }
  if (type == "Strip") {
    steps->push_back(std::string("Strip\t") + (j.value("strip_left", false) ? "1" : "0") + "\t" +
                     (j.value("strip_right", false) ? "1" : "0"));
    return Status::Ok();
  }
  if (type == "Lowercase") {
    steps->push_back("Lowercase");
    return Status::Ok();
  }
  if (type == "Replace" && j.contains("pattern") && j["pattern"].is_object() &&
      j["pattern"].contains("Regex") && j["pattern"]["Regex"] == " {2,}" && j.contains("content") &&
      j["content"].is_string() && no_tab(j["content"])) {
    // The one regex SentencePiece conversions write (runs of spaces): built without a regex.
    steps->push_back("ReplaceSpaceRuns\t" + j["content"].get<std::string>());
    return Status::Ok();
  }
  if (type == "Precompiled") {
    if (!j.contains("precompiled_charsmap") || !j["precompiled_charsmap"].is_string()) {
      return InvalidArgument(path +
                             ": the Precompiled normalizer has no precompiled_charsmap "
                             "string");
    }
    const std::string base64 = j["precompiled_charsmap"].get<std::string>();
    std::string blob;
    if (!tokenizer::DecodeBase64(base64, &blob)) {
      return InvalidArgument(path +
                             ": the Precompiled normalizer's precompiled_charsmap is not "
                             "base64");
    }
    auto charsmap = tokenizer::PrecompiledCharsmap::Parse(blob);
    if (!charsmap.ok()) {
      return InvalidArgument(path + ": the Precompiled normalizer's " +
                             charsmap.status().message());
    }
    steps->push_back("Precompiled\t" + base64);
    return Status::Ok();
  }
  if (const std::string form = NormalFormStep(j); !form.empty()) {
    steps->push_back(form);  // NFC, NFD, NFKC or NFKD (tokenizer/normal_form.h)
    return Status::Ok();
  }
  return Unimplemented(path + ": normalizer " + Describe(j) +
                       " is not supported for Unigram (known: Precompiled, NFC, NFD, NFKC, NFKD, "
                       "Replace of a string or of the regex \" {2,}\", Prepend, Strip, "
                       "Lowercase, Sequence)");
}

Status PreTokenizerSteps(const nlohmann::json& j, const std::string& path,
                         std::vector<std::string>* steps) {
  if (j.is_null()) return Status::Ok();
  const std::string type = j.is_object() ? j.value("type", "") : "";
  if (type == "Sequence" && j.contains("pretokenizers") && j["pretokenizers"].is_array()) {
    for (const nlohmann::json& p : j["pretokenizers"]) {
      RADIXLM_RETURN_IF_ERROR(PreTokenizerSteps(p, path, steps));
    }
    return Status::Ok();
  }
  if (type == "WhitespaceSplit") {
    steps->push_back("WhitespaceSplit");
    return Status::Ok();
  }
  if (type == "Metaspace") {
    const std::string replacement = j.value("replacement", std::string(kMetaspaceReplacement));
    std::string scheme = j.value("prepend_scheme", "");
    if (scheme.empty()) scheme = j.value("add_prefix_space", true) ? "always" : "never";
    if ((scheme == "always" || scheme == "first" || scheme == "never") && !replacement.empty() &&
        replacement.find('\t') == std::string::npos) {
      steps->push_back("Metaspace\t" + replacement + "\t" + scheme + "\t" +
                       (j.value("split", true) ? "1" : "0"));
      return Status::Ok();
    }
  }
  return Unimplemented(path + ": pre_tokenizer " + Describe(j) +
                       " is not supported for Unigram (known: Metaspace, WhitespaceSplit, "
                       "Sequence)");
}

}  // namespace

StatusOr<HfVocab> UnigramVocab(const nlohmann::json& tok, int64_t vocab_size,
                               const std::string& path) {
  const nlohmann::json& model = tok["model"];
  if (!model.contains("vocab") || !model["vocab"].is_array() || model["vocab"].empty()) {
    return InvalidArgument(path + ": Unigram model.vocab is not a non-empty list");
  }
  std::vector<std::string> normalizers, pre_tokenizers;
  const nlohmann::json none;
  RADIXLM_RETURN_IF_ERROR(
      NormalizerSteps(tok.contains("normalizer") ? tok["normalizer"] : none, path, &normalizers));
  RADIXLM_RETURN_IF_ERROR(PreTokenizerSteps(
      tok.contains("pre_tokenizer") ? tok["pre_tokenizer"] : none, path, &pre_tokenizers));
  const bool byte_fallback = model.value("byte_fallback", false);
  int64_t unk_id = -1;
  if (model.contains("unk_id") && model["unk_id"].is_number_integer()) {
    unk_id = model["unk_id"].get<int64_t>();
  }

  const auto n_pieces = static_cast<int64_t>(model["vocab"].size());
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<gguf::Value> exact_scores;  // the file's f64 scores: Viterbi's ties depend on them
  std::vector<int32_t> types;
  for (const nlohmann::json& p : model["vocab"]) {
    if (!p.is_array() || p.size() != 2 || !p[0].is_string() || !p[1].is_number() ||
        !std::isfinite(p[1].get<double>())) {
      return InvalidArgument(path + ": Unigram vocab entry " + std::to_string(tokens.size()) +
                             " is not [\"piece\", score]");
    }
    tokens.push_back(p[0].get<std::string>());
    scores.push_back(static_cast<float>(p[1].get<double>()));
    exact_scores.push_back(Value::F64(p[1].get<double>()));
    const bool byte = byte_fallback && IsByteToken(tokens.back());
    types.push_back(static_cast<int64_t>(tokens.size()) - 1 == unk_id ? kUnknown
                    : byte                                            ? kByte
                                                                      : kNormal);
  }
  if (unk_id >= n_pieces) {
    return InvalidArgument(path + ": Unigram unk_id " + std::to_string(unk_id) +
                           " is past the vocabulary");
  }
  if (tok.contains("added_tokens") && tok["added_tokens"].is_array()) {
    for (const nlohmann::json& a : tok["added_tokens"]) {
      if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() ||
          !a.contains("content") || !a["content"].is_string() || a["id"].get<int64_t>() < 0 ||
          a["id"].get<int64_t>() >= (int64_t{1} << 24)) {
        return InvalidArgument(path + ": an added_tokens entry has no id or content");
      }
      const auto id = static_cast<size_t>(a["id"].get<int64_t>());
      const std::string text = a["content"].get<std::string>();
      if (id >= tokens.size()) {
        for (size_t i = tokens.size(); i <= id; ++i) {
          tokens.push_back("[PAD" + std::to_string(i) + "]");
          scores.push_back(0.0f);
          types.push_back(kUnused);
        }
      }
      tokens[id] = text;
      if (static_cast<int64_t>(id) != unk_id) {
        types[id] = a.value("special", false) || LooksSpecial(text) ? kControl : kUserDefined;
      }
    }
  }
  const auto n_real = static_cast<int64_t>(tokens.size());
  for (int64_t i = n_real; i < vocab_size; ++i) {
    tokens.push_back("[PAD" + std::to_string(i) + "]");
    scores.push_back(0.0f);
    types.push_back(kUnused);
  }

  HfVocab out;
  out.n_real_tokens = n_real;
  auto& md = out.metadata;
  md.emplace_back("tokenizer.ggml.model", Value::Str("t5"));
  md.emplace_back("tokenizer.ggml.pre", Value::Str("default"));
  md.emplace_back("tokenizer.ggml.tokens", Value::StrArr(tokens));
  md.emplace_back("tokenizer.ggml.scores", Value::F32Arr(scores));
  md.emplace_back("tokenizer.ggml.token_type", Value::I32Arr(types));
  md.emplace_back("tokenizer.hf.unigram_tokens", Value::U32(static_cast<uint32_t>(n_pieces)));
  md.emplace_back("tokenizer.hf.unigram_scores",
                  Value::Arr(gguf::ValueType::kFloat64, std::move(exact_scores)));
  md.emplace_back("tokenizer.hf.byte_fallback", Value::Bool(byte_fallback));
  if (!normalizers.empty()) {
    md.emplace_back("tokenizer.hf.normalizers", Value::StrArr(normalizers));
  }
  if (!pre_tokenizers.empty()) {
    md.emplace_back("tokenizer.hf.pre_tokenizers", Value::StrArr(pre_tokenizers));
  }
  if (unk_id >= 0) out.default_ids.emplace_back("unk", static_cast<int32_t>(unk_id));
  out.eos_from_template = true;
  out.kind = "Unigram (" + std::to_string(n_pieces) + " pieces" +
             (byte_fallback ? ", byte fallback" : "") + ", " + std::to_string(normalizers.size()) +
             " normalizer steps, " + std::to_string(pre_tokenizers.size()) +
             " pre-tokenizer steps)";
  out.tokens = std::move(tokens);
  return out;
}

}  // namespace radixlm::hf
