// SentencePiece vocabularies of Hugging Face folders as SPM GGUF metadata
// (tokenizer.ggml.model "llama", pre "default", tokens, scores, token types, add_space_prefix).
//
// tokenizer.model: exactly what convert_hf_to_gguf.py's _create_vocab_sentencepiece writes
// (the pieces' scores; UNKNOWN / CONTROL / UNUSED / BYTE types, USER_DEFINED pieces NORMAL
// unless added_tokens.json or tokenizer_config.json's added_tokens_decoder lists them; -1000
// for those; "[PAD<i>]" with -10000 up to config.json's vocab_size), add_space_prefix from
// normalizer_spec.add_dummy_prefix.
//
// tokenizer.json: the same types, but the scores SPM merges by are not in the file, only the
// merges' order (transformers' converter writes a merge for every split of every piece, ranked
// by the piece's score). A token's score is minus the rank of the first merge that makes it, so
// SPM's "merge the pair whose token scores highest" follows the merges' order; a token no merge
// makes scores -1e9. (The converter's own tokenizer.json path, LlamaHfVocab, scores every token
// -1000, under which SPM merges leftmost-first: not the model's tokenization.) User-defined
// added tokens keep their U+2581 (the converter writes them with spaces): tokenizers matches
// them in the raw text as they are ("▁▁" only where the text has it), and a run of
// spaces becomes them through the merges, as here.
#include <cmath>
#include <filesystem>
#include <unordered_map>

#include "hf/hf_vocab.h"
#include "hf/json_file.h"
#include "hf/sentencepiece_model.h"

namespace radixlm::hf {
namespace {

using gguf::Value;
namespace fs = std::filesystem;

constexpr const char* kSpace = "\xe2\x96\x81";  // U+2581, SentencePiece's escaped space
constexpr float kNoMergeScore = -1e9f;

bool IsReplaceSpace(const nlohmann::json& j) {
  return j.is_object() && j.value("type", "") == "Replace" && j.contains("pattern") &&
         j["pattern"].is_object() && j["pattern"].value("String", "") == " " &&
         j.value("content", "") == kSpace;
}

bool IsPrependSpace(const nlohmann::json& j) {
  return j.is_object() && j.value("type", "") == "Prepend" && j.value("prepend", "") == kSpace;
}

struct SpaceEscaping {
  bool prefix = false;                    // add_space_prefix
  std::string metaspace_scheme;           // "first" / "always": Metaspace's rules for the prefix
  std::vector<std::string> normal_forms;  // the normaliser's Unicode normal forms, in order
};

// Whether the tokenizer adds a space (U+2581) before the text, and by whose rules, from how it
// escapes spaces: a normalizer Replace(" ", "\u2581") with or without Prepend("\u2581")
// (prefix on every piece between added tokens: llama.cpp's rule), or a Metaspace pre-tokenizer
// that does not split (prefix unless the piece starts with a space; "first": only at the start
// of the text). The normaliser's Unicode normal forms are applied before the spaces are
// escaped, which is where tokenizers applies them wherever they stand in the Sequence: NFC and
// NFD neither make nor take U+0020 or U+2581, and NFKC / NFKD (which make spaces of U+00A0,
// U+3000, ...) are taken only before the Replace. Anything else is refused naming it.
StatusOr<SpaceEscaping> SpacePrefix(const nlohmann::json& tok, const std::string& path) {
  const nlohmann::json none;
  const nlohmann::json& norm = tok.contains("normalizer") ? tok["normalizer"] : none;
  const nlohmann::json& pre = tok.contains("pre_tokenizer") ? tok["pre_tokenizer"] : none;
  bool escaped = false;
  SpaceEscaping out;
  for (const nlohmann::json& n : NormalizerMembers(norm)) {
    const std::string form = NormalFormStep(n);
    if (IsReplaceSpace(n)) {
      escaped = true;
    } else if (IsPrependSpace(n)) {
      out.prefix = true;
    } else if (!form.empty() && escaped && form.starts_with("NFK")) {
      return Unimplemented(path + ": normalizer " + form +
                           " after Replace(\" \", \"\u2581\") is not supported (the spaces it "
                           "makes would stay spaces)");
    } else if (!form.empty()) {
      out.normal_forms.push_back(form);
    } else {
      return Unimplemented(path + ": normalizer " + Describe(n) +
                           " is not supported for SentencePiece-style BPE (known: "
                           "Replace(\" \", \"\u2581\"), Prepend(\"\u2581\"), NFC, NFD, NFKC, "
                           "NFKD, a Sequence of them)");
    }
  }
  if (pre.is_object() && pre.value("type", "") == "Metaspace") {
    if (pre.value("replacement", kSpace) != kSpace || pre.value("split", false)) {
      return Unimplemented(path + ": pre_tokenizer " + Describe(pre) +
                           " is not supported (a Metaspace that splits, or replaces spaces "
                           "with another character)");
    }
    if (escaped) {
      return Unimplemented(path +
                           ": a Metaspace pre-tokenizer after a normalizer that already "
                           "replaces spaces is not supported");
    }
    escaped = true;
    std::string scheme = pre.value("prepend_scheme", "");
    if (scheme.empty()) scheme = pre.value("add_prefix_space", true) ? "always" : "never";
    if (scheme == "always" || scheme == "first") {
      out.prefix = true;
      out.metaspace_scheme = scheme;
    } else if (scheme != "never") {
      return Unimplemented(path + ": Metaspace prepend_scheme '" + scheme + "' is not known");
    }
  } else if (pre.is_object() && pre.value("type", "") == "Split" && escaped &&
             pre.contains("pattern") && pre["pattern"].is_object() &&
             pre["pattern"].value("String", "") == " ") {
    // Gemma's Split(" ") after its normalizer has replaced every space: splits nothing.
  } else if (!pre.is_null()) {
    return Unimplemented(path + ": pre_tokenizer " + Describe(pre) +
                         " is not supported for SentencePiece-style BPE");
  }
  if (!escaped) {
    return Unimplemented(path +
                         ": a byte_fallback BPE whose spaces are not replaced by \u2581 "
                         "(no Replace normalizer or Metaspace pre-tokenizer) is not supported");
  }
  return out;
}

// The converter writes user-defined tokens with their U+2581 as spaces ("pre-normalize
// user-defined spaces"): they are matched in the raw text.
std::string SpacesUnescaped(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 3, kSpace) == 0) {
      out.push_back(' ');
      i += 3;
    } else {
      out.push_back(text[i++]);
    }
  }
  return out;
}

HfVocab SpmMetadata(std::vector<std::string> tokens, const std::vector<float>& scores,
                    const std::vector<int32_t>& types, bool add_space_prefix) {
  HfVocab out;
  auto& md = out.metadata;
  md.emplace_back("tokenizer.ggml.model", Value::Str("llama"));
  md.emplace_back("tokenizer.ggml.pre", Value::Str("default"));
  md.emplace_back("tokenizer.ggml.tokens", Value::StrArr(tokens));
  md.emplace_back("tokenizer.ggml.scores", Value::F32Arr(scores));
  md.emplace_back("tokenizer.ggml.token_type", Value::I32Arr(types));
  md.emplace_back("tokenizer.ggml.add_space_prefix", Value::Bool(add_space_prefix));
  out.tokens = std::move(tokens);
  return out;
}

}  // namespace

StatusOr<HfVocab> SentencePieceBpeVocab(const nlohmann::json& tok, int64_t vocab_size,
                                        const std::string& path) {
  RADIXLM_ASSIGN_OR_RETURN(const SpaceEscaping spaces, SpacePrefix(tok, path));
  const bool prefix = spaces.prefix;
  RADIXLM_ASSIGN_OR_RETURN(TokenTable table, ReadTokenTable(tok, vocab_size, path));
  const nlohmann::json& model = tok["model"];
  const std::string unk = model.contains("unk_token") && model["unk_token"].is_string()
                              ? model["unk_token"].get<std::string>()
                              : "";
  std::unordered_map<std::string_view, int64_t> vocab_id;
  for (auto it = model["vocab"].begin(); it != model["vocab"].end(); ++it) {
    vocab_id.emplace(it.key(), it.value().get<int64_t>());
  }
  const auto n = static_cast<int64_t>(table.tokens.size());
  for (int64_t i = 0; i < n; ++i) {
    if (table.added[i]) continue;
    if (IsByteToken(table.tokens[i])) table.types[i] = kByte;
    if (!unk.empty() && table.tokens[i] == unk) table.types[i] = kUnknown;
  }

  std::vector<float> scores(static_cast<size_t>(n), kNoMergeScore);
  std::vector<bool> scored(static_cast<size_t>(n), false);
  if (!model.contains("merges") || !model["merges"].is_array() || model["merges"].empty()) {
    return InvalidArgument(path + ": BPE model has no merges");
  }
  const nlohmann::json& merges = model["merges"];
  if (merges.size() >= (size_t{1} << 24)) {
    return InvalidArgument(path + ": more merges than float scores can rank (2^24)");
  }
  std::string merged;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const nlohmann::json& m = merges[rank];
    if (m.is_string()) {
      merged = m.get<std::string>();
      const size_t space = merged.find(' ');
      if (space == std::string::npos) {
        return InvalidArgument(path + ": merge " + std::to_string(rank) + " '" + merged +
                               "' is not \"a b\"");
      }
      merged.erase(space, 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      merged = m[0].get<std::string>() + m[1].get<std::string>();
    } else {
      return InvalidArgument(path + ": a merge is neither \"a b\" nor [\"a\", \"b\"]");
    }
    const auto it = vocab_id.find(merged);
    if (it == vocab_id.end()) {
      return InvalidArgument(path + ": merge " + std::to_string(rank) + " makes '" + merged +
                             "', which is not in the vocabulary");
    }
    if (it->second < n && !scored[it->second]) {
      scores[it->second] = -static_cast<float>(rank);
      scored[it->second] = true;
    }
  }
  HfVocab out = SpmMetadata(std::move(table.tokens), scores, table.types, prefix);
  out.n_real_tokens = table.n_real;
  if (!spaces.metaspace_scheme.empty()) {
    out.metadata.emplace_back("tokenizer.hf.metaspace_prepend_scheme",
                              Value::Str(spaces.metaspace_scheme));
  }
  std::string forms_text;
  for (const std::string& form : spaces.normal_forms) forms_text += ", " + form;
  if (!spaces.normal_forms.empty()) {
    out.metadata.emplace_back("tokenizer.hf.normalizers", Value::StrArr(spaces.normal_forms));
  }
  out.kind = "SentencePiece-style BPE (byte fallback, " + std::to_string(table.n_real) +
             " tokens, " + std::to_string(merges.size()) + " merges as scores, " +
             (!prefix                           ? std::string("no space prefix")
              : spaces.metaspace_scheme.empty() ? std::string("space prefix")
                                                : "Metaspace prefix " + spaces.metaspace_scheme) +
             forms_text + ")";
  return out;
}

StatusOr<HfVocab> SentencePieceModelVocab(const std::string& dir,
                                          const nlohmann::json& tokenizer_config,
                                          int64_t vocab_size) {
  const std::string path = (fs::path(dir) / "tokenizer.model").string();
  RADIXLM_ASSIGN_OR_RETURN(SentencePieceModel sp, ReadSentencePieceModel(path));
  if (sp.model_type != 2) {
    const char* names[] = {"?", "Unigram", "BPE", "Word", "Char"};
    const std::string name = sp.model_type >= 1 && sp.model_type <= 4 ? names[sp.model_type] : "?";
    return Unimplemented(path + ": a " + name + " SentencePiece model (trainer_spec.model_type " +
                         std::to_string(sp.model_type) +
                         ") is not built in radixlm (only BPE models are)");
  }
  HfVocab out;
  const auto n_pieces = static_cast<int64_t>(sp.pieces.size());
  const int64_t n = vocab_size > 0 ? vocab_size : n_pieces;
  if (n > (int64_t{1} << 24)) return InvalidArgument(path + ": vocabulary too large");
  if (n_pieces > n) {
    out.notes.push_back("tokenizer.model's pieces from id " + std::to_string(n) +
                        " on are past config.json's vocab_size and not used");
  }
  std::vector<std::string> tokens(static_cast<size_t>(n));
  std::vector<float> scores(static_cast<size_t>(n), -10000.0f);
  std::vector<int32_t> types(static_cast<size_t>(n), kUnused);
  for (int64_t i = 0; i < n; ++i) {
    if (i >= n_pieces) {
      tokens[i] = "[PAD" + std::to_string(i) + "]";
      continue;
    }
    const SentencePieceModel::Piece& p = sp.pieces[i];
    tokens[i] = p.text;
    scores[i] = p.score;
    types[i] = p.type == kUserDefined ? kNormal : p.type;
  }
  std::error_code ec;
  const fs::path added_path = fs::path(dir) / "added_tokens.json";
  if (fs::is_regular_file(added_path, ec)) {
    RADIXLM_ASSIGN_OR_RETURN(nlohmann::json added, ReadJsonObject(added_path.string()));
    for (auto it = added.begin(); it != added.end(); ++it) {
      if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0) {
        return InvalidArgument(added_path.string() + ": '" + it.key() + "' has no valid id");
      }
      const int64_t id = it.value().get<int64_t>();
      if (id >= n) continue;
      tokens[id] = it.key();
      scores[id] = -1000.0f;
      types[id] = kUserDefined;
    }
  }
  if (tokenizer_config.contains("added_tokens_decoder") &&
      tokenizer_config["added_tokens_decoder"].is_object()) {
    const nlohmann::json& decoder = tokenizer_config["added_tokens_decoder"];
    for (auto it = decoder.begin(); it != decoder.end(); ++it) {
      int64_t id = -1;
      try {
        id = std::stoll(it.key());
      } catch (const std::exception&) {
      }
      if (id < 0 || !it.value().is_object() || !it.value().contains("content") ||
          !it.value()["content"].is_string()) {
        return InvalidArgument("tokenizer_config.json: added_tokens_decoder entry '" + it.key() +
                               "' has no id or content");
      }
      if (id >= n) continue;
      const std::string text = it.value()["content"].get<std::string>();
      const bool special = it.value().value("special", false) || LooksSpecial(text);
      types[id] = special ? kControl : kUserDefined;
      tokens[id] = special ? text : SpacesUnescaped(text);
      scores[id] = -1000.0f;
    }
  }
  if (sp.remove_extra_whitespaces) {
    out.notes.push_back(
        "tokenizer.model's remove_extra_whitespaces is not applied (nor by llama.cpp)");
  }
  if (!sp.escape_whitespaces) {
    out.notes.push_back(
        "tokenizer.model's escape_whitespaces false is not applied: spaces are escaped as "
        "llama.cpp does");
  }
  if (sp.has_precompiled_charsmap ||
      (!sp.normalizer_name.empty() && sp.normalizer_name != "identity")) {
    out.notes.push_back("tokenizer.model's normalizer '" + sp.normalizer_name +
                        "' is not applied (nor by llama.cpp)");
  }

  HfVocab md = SpmMetadata(std::move(tokens), scores, types, sp.add_dummy_prefix);
  out.metadata = std::move(md.metadata);
  out.tokens = std::move(md.tokens);
  out.n_real_tokens = n;  // the converter's Gemma 3 keeps this many embedding rows
  out.kind = "SentencePiece BPE (" + std::to_string(n_pieces) + " pieces, " +
             (sp.byte_fallback ? "byte fallback, " : "") +
             (sp.add_dummy_prefix ? "space prefix" : "no space prefix") + ")";
  out.default_ids = {
      {"unk", sp.unk_id}, {"bos", sp.bos_id}, {"eos", sp.eos_id}, {"pad", sp.pad_id}};
  return out;
}

}  // namespace radixlm::hf
