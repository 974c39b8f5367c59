#include "hf/hf_tokenizer.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "hf/hf_vocab.h"
#include "hf/hf_wordpiece.h"
#include "hf/json_file.h"

namespace radixlm::hf {
namespace {

using gguf::Value;
namespace fs = std::filesystem;

// The regexes of tokenizer.json Split pre-tokenizers, as the model cards ship them.
constexpr const char* kLlama3Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

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

StatusOr<HfVocab> ByteLevelBpeVocab(const nlohmann::json& tok, int64_t vocab_size,
                                    const std::string& tok_path) {
  HfVocab out;
  // Unicode normal forms only (Qwen2's NFC), applied to the text between added tokens before
  // the pre-tokenizer, as tokenizers does (llama.cpp's converter drops them).
  std::vector<std::string> normal_forms;
  std::string forms_text;
  for (const nlohmann::json& n :
       NormalizerMembers(tok.contains("normalizer") ? tok["normalizer"] : nlohmann::json())) {
    const std::string form = NormalFormStep(n);
    if (form.empty()) {
      return Unimplemented(tok_path + ": normalizer " + Describe(n) +
                           " is not supported for byte-level BPE (known: NFC, NFD, NFKC, NFKD, "
                           "a Sequence of them)");
    }
    normal_forms.push_back(form);
    forms_text += (forms_text.empty() ? "" : " ") + form;
  }
  const nlohmann::json& pre =
      tok.contains("pre_tokenizer") ? tok["pre_tokenizer"] : nlohmann::json();
  RADIXLM_ASSIGN_OR_RETURN(const std::string pre_name, PreTokenizerName(pre));
  RADIXLM_ASSIGN_OR_RETURN(TokenTable table, ReadTokenTable(tok, vocab_size, tok_path));
  const nlohmann::json& model = tok["model"];
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

  out.n_real_tokens = table.n_real;
  out.kind = "byte-level BPE (pre-tokenizer " + pre_name + ", " +
             (forms_text.empty() ? "" : "normalizer " + forms_text + ", ") +
             std::to_string(table.n_real) + " tokens, " + std::to_string(merges.size()) +
             " merges)";
  auto& md = out.metadata;
  md.emplace_back("tokenizer.ggml.model", Value::Str("gpt2"));
  md.emplace_back("tokenizer.ggml.pre", Value::Str(pre_name));
  md.emplace_back("tokenizer.ggml.tokens", Value::StrArr(table.tokens));
  md.emplace_back("tokenizer.ggml.token_type", Value::I32Arr(table.types));
  md.emplace_back("tokenizer.ggml.merges", Value::StrArr(merges));
  if (!normal_forms.empty()) {
    md.emplace_back("tokenizer.hf.normalizers", Value::StrArr(normal_forms));
  }
  out.tokens = std::move(table.tokens);
  return out;
}

namespace {

// The vocabulary from tokenizer.json, or from tokenizer.model when there is no tokenizer.json:
// the one place that picks a reader by tokenizer model kind.
// `tok` receives tokenizer.json's object (null when it is not used).
StatusOr<HfVocab> ReadVocab(const std::string& dir, const nlohmann::json& tc, int64_t vocab_size,
                            std::string* source, nlohmann::json* tok_out) {
  const fs::path tok_path = fs::path(dir) / "tokenizer.json";
  const fs::path spm_path = fs::path(dir) / "tokenizer.model";
  std::error_code ec;
  const bool has_spm = fs::is_regular_file(spm_path, ec);
  if (!fs::is_regular_file(tok_path, ec)) {
    if (!has_spm) return NotFound(dir + ": missing tokenizer.json (and no tokenizer.model)");
    *source = "tokenizer.model (no tokenizer.json)";
    return SentencePieceModelVocab(dir, tc, vocab_size);
  }
  *source = has_spm ? "tokenizer.json (preferred to tokenizer.model)" : "tokenizer.json";
  const std::string path = tok_path.string();
  RADIXLM_ASSIGN_OR_RETURN(*tok_out, ReadJsonObject(path));
  const nlohmann::json& tok = *tok_out;
  const nlohmann::json& model = tok.contains("model") ? tok["model"] : nlohmann::json();
  const std::string type = model.is_object() ? model.value("type", "") : "";
  if (type == "BPE" && model.value("byte_fallback", false)) {
    return SentencePieceBpeVocab(tok, vocab_size, path);
  }
  if (type == "BPE") return ByteLevelBpeVocab(tok, vocab_size, path);
  if (type == "Unigram") return UnigramVocab(tok, vocab_size, path);      // hf_unigram.cc
  if (type == "WordPiece") return WordPieceVocab(tok, vocab_size, path);  // hf_wordpiece.h
  return InvalidArgument(path + ": model.type '" + type + "' is not a known tokenizer kind");
}

}  // namespace

StatusOr<HfTokenizer> ReadHfTokenizer(const std::string& dir, const nlohmann::json& config) {
  std::error_code ec;
  nlohmann::json tc = nlohmann::json::object();
  const std::string tc_path = (fs::path(dir) / "tokenizer_config.json").string();
  if (fs::is_regular_file(tc_path, ec)) {
    RADIXLM_ASSIGN_OR_RETURN(tc, ReadJsonObject(tc_path));
  }
  int64_t vocab_size = 0;
  if (config.contains("vocab_size") && config["vocab_size"].is_number_integer()) {
    vocab_size = config["vocab_size"].get<int64_t>();
  }
  HfTokenizer out;
  nlohmann::json tok;
  RADIXLM_ASSIGN_OR_RETURN(HfVocab vocab, ReadVocab(dir, tc, vocab_size, &out.source, &tok));
  out.metadata = std::move(vocab.metadata);
  out.kind = std::move(vocab.kind);
  out.notes = std::move(vocab.notes);
  out.n_real_tokens = vocab.n_real_tokens;
  const int64_t n = static_cast<int64_t>(vocab.tokens.size());
  auto& md = out.metadata;
  // tokenizer.json's TemplateProcessing post-processor (the last one of a Sequence), if any.
  const nlohmann::json* single = nullptr;  // its "single" template
  const nlohmann::json* template_specials = nullptr;
  if (tok.contains("post_processor") && tok["post_processor"].is_object()) {
    const nlohmann::json* pp = &tok["post_processor"];
    if (pp->value("type", "") == "Sequence" && pp->contains("processors")) {
      for (const nlohmann::json& p : (*pp)["processors"]) {
        if (p.value("type", "") == "TemplateProcessing") pp = &p;
      }
    }
    if (pp->value("type", "") == "TemplateProcessing" && pp->contains("single") &&
        (*pp)["single"].is_array() && !(*pp)["single"].empty()) {
      single = &(*pp)["single"];
      if (pp->contains("special_tokens")) template_specials = &(*pp)["special_tokens"];
    }
  }
  // The id of a template item when it is a special token with one id, else -1.
  auto template_id = [&](const nlohmann::json& item) -> int64_t {
    if (!item.is_object() || !item.contains("SpecialToken") || template_specials == nullptr) {
      return -1;
    }
    const std::string name = item["SpecialToken"].value("id", "");
    const auto it = template_specials->find(name);
    if (it == template_specials->end() || !it->contains("ids") || !(*it)["ids"].is_array() ||
        (*it)["ids"].size() != 1 || !(*it)["ids"][0].is_number_integer()) {
      return -1;
    }
    return (*it)["ids"][0].get<int64_t>();
  };
  if (vocab.eos_from_template && single != nullptr) {
    const int64_t bos = template_id(single->front()), eos = template_id(single->back());
    if (bos >= 0) vocab.default_ids.emplace_back("bos", static_cast<int32_t>(bos));
    if (eos >= 0) vocab.default_ids.emplace_back("eos", static_cast<int32_t>(eos));
  }
  // Special tokens: tokenizer_config.json's <typ>_token text, else config.json's <typ>_token_id.
  std::map<std::string, int64_t> id_of;
  for (int64_t id = 0; id < n; ++id) id_of.emplace(vocab.tokens[id], id);
  // GGUF names the unk and pad ids tokenizer.ggml.unknown_token_id / padding_token_id.
  constexpr std::pair<const char*, const char*> kSpecialIds[] = {
      {"bos", "bos"}, {"eos", "eos"}, {"unk", "unknown"}, {"pad", "padding"}};
  for (const auto& [typ, gguf_typ] : kSpecialIds) {
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
    for (const auto& [default_typ, default_id] : vocab.default_ids) {
      if (id < 0 && default_typ == typ) id = default_id;
    }
    if (id >= 0 && id < n) {
      md.emplace_back("tokenizer.ggml." + std::string(gguf_typ) + "_token_id",
                      Value::U32(static_cast<uint32_t>(id)));
    }
  }
  // add_bos_token / add_eos_token: tokenizer_config.json's, else what tokenizer.json's
  // TemplateProcessing post-processor puts around a single sequence.
  // (Unigram models: add_eos_token from the template's last item the same way.)
  bool add_bos_set = false, add_eos_set = false;
  for (const char* typ : {"bos", "eos"}) {
    const std::string key = std::string("add_") + typ + "_token";
    if (tc.contains(key) && tc[key].is_boolean()) {
      md.emplace_back("tokenizer.ggml." + key, Value::Bool(tc[key].get<bool>()));
      (std::string(typ) == "bos" ? add_bos_set : add_eos_set) = true;
    }
  }
  if (!add_bos_set && single != nullptr) {
    md.emplace_back("tokenizer.ggml.add_bos_token",
                    Value::Bool(single->front().contains("SpecialToken")));
  }
  if (!add_eos_set && single != nullptr && vocab.eos_from_template) {
    md.emplace_back("tokenizer.ggml.add_eos_token",
                    Value::Bool(single->size() > 1 && single->back().contains("SpecialToken")));
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
