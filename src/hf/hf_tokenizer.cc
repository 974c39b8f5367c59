#include "hf/hf_tokenizer.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "hf/json_file.h"

namespace radixlm::hf {
namespace {

using gguf::Value;
namespace fs = std::filesystem;

// llama.cpp's token types.
constexpr int32_t kNormal = 1;
constexpr int32_t kControl = 3;
constexpr int32_t kUserDefined = 4;
constexpr int32_t kUnused = 5;

// The regexes of tokenizer.json Split pre-tokenizers, as the model cards ship them.
constexpr const char* kLlama3Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

bool LooksSpecial(const std::string& t) {
  auto wraps = [&t](std::string_view open, std::string_view close) {
    return t.size() >= open.size() + close.size() && t.compare(0, open.size(), open) == 0 &&
           t.compare(t.size() - close.size(), close.size(), close) == 0;
  };
  return t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]" || wraps("<|", "|>") ||
         wraps("<\xef\xbd\x9c", "\xef\xbd\x9c>") || wraps("<unused", ">");
}

std::string Describe(const nlohmann::json& j) {
  std::string s = j.dump();
  return s.size() > 200 ? s.substr(0, 200) + "..." : s;
}

bool IsByteLevel(const nlohmann::json& j, bool* use_regex) {
  if (!j.is_object() || j.value("type", "") != "ByteLevel") return false;
  if (use_regex != nullptr) *use_regex = j.value("use_regex", true);
  return !j.value("add_prefix_space", false);
}

// A special token field of tokenizer_config.json: "text" or {"content": "text", ...}.
std::string TokenText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) {
    return v["content"].get<std::string>();
  }
  return "";
}

}  // namespace

StatusOr<std::string> PreTokenizerName(const nlohmann::json& pre) {
  bool use_regex = false;
  if (IsByteLevel(pre, &use_regex) && use_regex) return std::string("gpt-2");
  if (pre.is_object() && pre.value("type", "") == "Sequence" && pre.contains("pretokenizers") &&
      pre["pretokenizers"].is_array() && pre["pretokenizers"].size() == 2) {
    const nlohmann::json& first = pre["pretokenizers"][0];
    const nlohmann::json& second = pre["pretokenizers"][1];
    if (first.value("type", "") == "Digits" && first.value("individual_digits", false) &&
        IsByteLevel(second, &use_regex) && use_regex) {
      return std::string("smollm");  // single digits, then GPT-2's pattern
    }
    if (first.value("type", "") == "Split" && first.contains("pattern") &&
        first["pattern"].is_object() && first["pattern"].contains("Regex") &&
        first.value("behavior", "") == "Isolated" && !first.value("invert", false) &&
        IsByteLevel(second, &use_regex) && !use_regex) {
      const std::string regex = first["pattern"]["Regex"].get<std::string>();
      if (regex == kLlama3Split) return std::string("llama-bpe");
      if (regex == kQwen2Split) return std::string("qwen2");
    }
  }
  return InvalidArgument("tokenizer.json: pre_tokenizer " + Describe(pre) +
                         " is not one radixlm knows (byte-level GPT-2, SmolLM, Llama-3, Qwen2)");
}

StatusOr<HfTokenizer> ReadHfTokenizer(const std::string& dir, const nlohmann::json& config) {
  const std::string tok_path = (fs::path(dir) / "tokenizer.json").string();
  std::error_code ec;
  if (!fs::is_regular_file(tok_path, ec)) {
    if (fs::is_regular_file(fs::path(dir) / "tokenizer.model", ec)) {
      return Unimplemented(dir +
                           ": tokenizer.model (SentencePiece) without tokenizer.json is "
                           "not supported yet (convert the folder to GGUF)");
    }
    return NotFound(dir + ": missing tokenizer.json");
  }
  RADIXLM_ASSIGN_OR_RETURN(nlohmann::json tok, ReadJsonObject(tok_path));
  nlohmann::json tc = nlohmann::json::object();
  const std::string tc_path = (fs::path(dir) / "tokenizer_config.json").string();
  if (fs::is_regular_file(tc_path, ec)) {
    RADIXLM_ASSIGN_OR_RETURN(tc, ReadJsonObject(tc_path));
  }

  HfTokenizer out;
  const nlohmann::json& model = tok.contains("model") ? tok["model"] : nlohmann::json();
  const std::string type = model.is_object() ? model.value("type", "") : "";
  if (type == "Unigram" || type == "WordPiece") {
    return Unimplemented(tok_path + ": " + type +
                         " tokenizers are not supported in Hugging "
                         "Face folders yet (convert the folder to GGUF)");
  }
  if (type != "BPE") {
    return InvalidArgument(tok_path + ": model.type '" + type + "' is not a known tokenizer kind");
  }
  if (model.value("byte_fallback", false)) {
    return Unimplemented(tok_path +
                         ": SentencePiece-style BPE (byte_fallback) is not supported "
                         "in Hugging Face folders yet (convert the folder to GGUF)");
  }
  const nlohmann::json& normalizer =
      tok.contains("normalizer") ? tok["normalizer"] : nlohmann::json();
  if (!normalizer.is_null()) {
    if (normalizer.is_object() && normalizer.value("type", "") == "NFC") {
      out.notes.push_back("tokenizer.json's NFC normaliser is not applied (nor by llama.cpp)");
    } else {
      return Unimplemented(tok_path + ": normalizer " + Describe(normalizer) +
                           " is not supported for byte-level BPE");
    }
  }
  const nlohmann::json& pre =
      tok.contains("pre_tokenizer") ? tok["pre_tokenizer"] : nlohmann::json();
  RADIXLM_ASSIGN_OR_RETURN(const std::string pre_name, PreTokenizerName(pre));

  // Vocabulary: model.vocab and added_tokens, by id.
  if (!model.contains("vocab") || !model["vocab"].is_object()) {
    return InvalidArgument(tok_path + ": model.vocab is not an object");
  }
  std::map<int64_t, std::string> by_id;
  std::map<int64_t, const nlohmann::json*> added;
  for (auto it = model["vocab"].begin(); it != model["vocab"].end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0) {
      return InvalidArgument(tok_path + ": vocab entry '" + it.key() + "' has no valid id");
    }
    by_id[it.value().get<int64_t>()] = it.key();
  }
  if (tok.contains("added_tokens") && tok["added_tokens"].is_array()) {
    for (const nlohmann::json& a : tok["added_tokens"]) {
      if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() ||
          !a.contains("content") || !a["content"].is_string() || a["id"].get<int64_t>() < 0) {
        return InvalidArgument(tok_path + ": an added_tokens entry has no id or content");
      }
      const int64_t id = a["id"].get<int64_t>();
      by_id[id] = a["content"].get<std::string>();
      added[id] = &a;
    }
  }
  out.n_real_tokens = static_cast<int64_t>(by_id.size());
  int64_t n = by_id.empty() ? 0 : by_id.rbegin()->first + 1;
  if (config.contains("vocab_size") && config["vocab_size"].is_number_integer()) {
    n = std::max<int64_t>(n, config["vocab_size"].get<int64_t>());
  }
  if (n > (int64_t{1} << 24)) return InvalidArgument(tok_path + ": vocabulary too large");
  std::vector<std::string> tokens(static_cast<size_t>(n));
  std::vector<int32_t> types(static_cast<size_t>(n), kNormal);
  for (int64_t i = 0; i < n; ++i) {
    const auto it = by_id.find(i);
    if (it == by_id.end()) {
      tokens[i] = "[PAD" + std::to_string(i) + "]";
      types[i] = kUnused;
      continue;
    }
    tokens[i] = it->second;
    const auto a = added.find(i);
    if (a != added.end()) {
      types[i] =
          a->second->value("special", false) || LooksSpecial(it->second) ? kControl : kUserDefined;
    }
  }
  std::vector<std::string> merges;
  if (model.contains("merges") && model["merges"].is_array()) {
    for (const nlohmann::json& m : model["merges"]) {
      if (m.is_string()) {
        merges.push_back(m.get<std::string>());
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
        merges.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
      } else {
        return InvalidArgument(tok_path + ": a merge is neither \"a b\" nor [\"a\", \"b\"]");
      }
    }
  }
  if (merges.empty()) return InvalidArgument(tok_path + ": BPE model has no merges");

  auto& md = out.metadata;
  md.emplace_back("tokenizer.ggml.model", Value::Str("gpt2"));
  md.emplace_back("tokenizer.ggml.pre", Value::Str(pre_name));
  md.emplace_back("tokenizer.ggml.tokens", Value::StrArr(tokens));
  md.emplace_back("tokenizer.ggml.token_type", Value::I32Arr(types));
  md.emplace_back("tokenizer.ggml.merges", Value::StrArr(merges));
  out.kind = "byte-level BPE (pre-tokenizer " + pre_name + ", " +
             std::to_string(out.n_real_tokens) + " tokens, " + std::to_string(merges.size()) +
             " merges)";

  // Special tokens: tokenizer_config.json's <typ>_token text, else config.json's <typ>_token_id.
  std::map<std::string, int64_t> id_of;
  for (const auto& [id, text] : by_id) id_of.emplace(text, id);
  for (const char* typ : {"bos", "eos", "unk", "pad"}) {
    const std::string key = std::string(typ) + "_token";
    int64_t id = -1;
    if (tc.contains(key)) {
      const std::string text = TokenText(tc[key]);
      const auto it = id_of.find(text);
      if (!text.empty() && it == id_of.end()) {
        return InvalidArgument(tc_path + ": " + key + " '" + text + "' is not in the vocabulary");
      }
      if (it != id_of.end()) id = it->second;
    }
    const std::string id_key = key + "_id";
    if (id < 0 && config.contains(id_key)) {
      const nlohmann::json& v = config[id_key];
      if (v.is_number_integer()) id = v.get<int64_t>();
      if (v.is_array() && !v.empty() && v[0].is_number_integer()) id = v[0].get<int64_t>();
    }
    if (id >= 0 && id < n) {
      md.emplace_back("tokenizer.ggml." + id_key, Value::U32(static_cast<uint32_t>(id)));
    }
  }
  // add_bos_token / add_eos_token: tokenizer_config.json's, else what tokenizer.json's
  // TemplateProcessing post-processor puts around a single sequence.
  bool add_bos_set = false;
  for (const char* typ : {"bos", "eos"}) {
    const std::string key = std::string("add_") + typ + "_token";
    if (tc.contains(key) && tc[key].is_boolean()) {
      md.emplace_back("tokenizer.ggml." + key, Value::Bool(tc[key].get<bool>()));
      if (std::string(typ) == "bos") add_bos_set = true;
    }
  }
  if (!add_bos_set && tok.contains("post_processor") && tok["post_processor"].is_object()) {
    const nlohmann::json* pp = &tok["post_processor"];
    if (pp->value("type", "") == "Sequence" && pp->contains("processors")) {
      for (const nlohmann::json& p : (*pp)["processors"]) {
        if (p.value("type", "") == "TemplateProcessing") pp = &p;
      }
    }
    if (pp->value("type", "") == "TemplateProcessing" && pp->contains("single") &&
        (*pp)["single"].is_array() && !(*pp)["single"].empty()) {
      md.emplace_back("tokenizer.ggml.add_bos_token",
                      Value::Bool((*pp)["single"][0].contains("SpecialToken")));
    }
  }

  // Chat template: tokenizer_config.json's chat_template (a string, or a list of named
  // templates: "default"), else chat_template.jinja.
  std::string chat_template;
  out.chat_template_source = "none";
  if (tc.contains("chat_template")) {
    const nlohmann::json& ct = tc["chat_template"];
    if (ct.is_string()) {
      chat_template = ct.get<std::string>();
    } else if (ct.is_array()) {
      for (const nlohmann::json& named : ct) {
        if (named.value("name", "") == "default" && named.contains("template")) {
          chat_template = named["template"].get<std::string>();
        }
      }
    }
    if (!chat_template.empty()) out.chat_template_source = "tokenizer_config.json";
  }
  const fs::path jinja = fs::path(dir) / "chat_template.jinja";
  if (chat_template.empty() && fs::is_regular_file(jinja, ec)) {
    std::ifstream in(jinja, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    chat_template = text.str();
    out.chat_template_source = "chat_template.jinja";
  }
  if (!chat_template.empty()) md.emplace_back("tokenizer.chat_template", Value::Str(chat_template));
  return out;
}

}  // namespace radixlm::hf
