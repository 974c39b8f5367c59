#include "tokenizer/resolved_vocab.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string_view>

#include "tokenizer/precompiled_charsmap.h"

namespace radixlm::tokenizer {
namespace {

using Names = std::initializer_list<std::string_view>;

bool In(std::string_view text, Names names) {
  return std::find(names.begin(), names.end(), text) != names.end();
}

bool ContainsAny(std::string_view text, Names parts) {
  for (std::string_view p : parts) {
    if (text.find(p) != std::string_view::npos) return true;
  }
  return false;
}

// Every control-looking name below starts with '<', '[', '_' or "▁<" (a cheap filter:
// most of a 262k vocabulary is skipped without comparing against the name lists).
bool MaybeNamedToken(std::string_view text) {
  if (text.empty()) return false;
  const char c = text[0];
  return c == '<' || c == '[' || c == '_' || text.starts_with("\xE2\x96\x81<");
}

int32_t FindText(const std::vector<std::string>& tokens, std::string_view text) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] == text) return static_cast<int32_t>(i);
  }
  return -1;
}

uint32_t AttrFromType(int32_t type) {
  switch (static_cast<TokenType>(type)) {
    case TokenType::kNormal:
      return attr::kNormal;
    case TokenType::kUnknown:
      return attr::kUnknown;
    case TokenType::kControl:
      return attr::kControl;
    case TokenType::kUserDefined:
      return attr::kUserDefined;
    case TokenType::kUnused:
      return attr::kUnused;
    case TokenType::kByte:
      return attr::kByte;
    default:
      return attr::kUndefined;
  }
}

Status CheckModelType(const std::string& model, ModelKind* kind) {
  if (model == "llama") {
    *kind = ModelKind::kSpm;
    return Status::Ok();
  }
  if (model == "gpt2" || model == "gemma4") {
    *kind = ModelKind::kBpe;
    return Status::Ok();
  }
  if (model == "bert") {
    *kind = ModelKind::kWpm;
    return Status::Ok();
  }
  std::string what;
  if (model == "none" || model == "no_vocab") what = " (the model has no vocabulary)";
  return Unimplemented(
      "unsupported tokenizer type '" + model + "'" + what +
      "; radixlm supports 'llama' (SPM), 'gpt2' (BPE), 'gemma4' (SPM-style BPE) and 'bert' "
      "(WordPiece)");
}

// Default special ids and flags by model type and pre-tokenizer, then the metadata's values.
// llama.cpp's UGM normalisation (llm_tokenizer_ugm_session::normalize) as text steps: the
// charsmap; with remove_extra_whitespaces, spaces stripped at both ends and runs of them made one,
// then every space escaped as U+2581 and one prepended (to every word, so also the first);
// without it, add_space_prefix prepends one before the spaces are escaped. The Viterbi runs over
// the whole normalised text in llama.cpp; split before each U+2581 here, which is the same for
// SentencePiece vocabularies (no piece has U+2581 past its first character).
Status LlamaCppUgmSteps(const Vocab& v, ResolvedVocab* r) {
  if (!v.precompiled_charsmap.empty()) {
    auto charsmap = PrecompiledCharsmap::Parse(v.precompiled_charsmap);
    if (!charsmap.ok()) {
      return InvalidArgument("tokenizer.ggml.precompiled_charsmap: " + charsmap.status().message());
    }
    r->hf_normalizers.push_back("Precompiled\t" + EncodeBase64(v.precompiled_charsmap));
  }
  const std::string escaped_space = "\xE2\x96\x81";
  if (v.remove_extra_whitespaces.value_or(false)) {
    r->hf_normalizers.push_back("Strip\t1\t1");
    r->hf_normalizers.push_back("ReplaceSpaceRuns\t ");
    r->hf_pre_tokenizers.push_back("Metaspace\t" + escaped_space + "\talways\t1");
  } else {
    if (v.add_space_prefix.value_or(false)) {
      r->hf_normalizers.push_back("Prepend\t" + escaped_space);
    }
    r->hf_pre_tokenizers.push_back("Metaspace\t" + escaped_space + "\tnever\t1");
  }
  r->hf_unigram_tokens = static_cast<int64_t>(v.tokens.size());
  return Status::Ok();
}

Status ApplyIdsAndFlags(const Vocab& v, ResolvedVocab* r) {
  const auto n = static_cast<int64_t>(r->tokens.size());
  SpecialIds& ids = r->ids;
  if (r->kind == ModelKind::kSpm) {
    ids.bos = 1;
    ids.eos = 2;
    ids.unk = 0;
    r->add_space_prefix = true;
    r->add_bos = true;
  } else if (r->kind == ModelKind::kWpm) {
    // llama.cpp's WPM defaults: [CLS] 101 starts and [SEP] 102 ends an encoded text (always,
    // with add_special: llama.cpp's WPM path ignores add_bos / add_eos), [UNK] 100, [PAD] 0,
    // [MASK] 103.
    ids.bos = 101;
    ids.unk = 100;
    ids.sep = 102;
    ids.pad = 0;
    ids.mask = 103;
    r->add_space_prefix = false;
    r->add_bos = true;
    r->wpm_lowercase = v.normalizer_lowercase.value_or(true);
    r->wpm_strip_accents = v.normalizer_strip_accents.value_or(r->wpm_lowercase);
  } else if (r->model == "gemma4") {
    r->add_space_prefix = false;  // no default ids: the metadata names them
  } else if (r->kind == ModelKind::kUgm) {
    // No default ids (the metadata names them). Decoding drops the first token's leading space
    // when a Metaspace adds one, as its decoder does.
    r->add_space_prefix = false;
    for (const std::string& step : r->hf_pre_tokenizers) {
      if (step.starts_with("Metaspace\t"))
        r->add_space_prefix = !step.ends_with("\tnever\t0") && !step.ends_with("\tnever\t1");
    }
    if (!v.hf_unigram) {  // llama.cpp's UGM defaults (T5's): </s> 1 ends a text, <unk> 2, <pad> 0
      ids.eos = 1;
      ids.unk = 2;
      ids.pad = 0;
    }
  } else {
    ids.bos = 11;
    ids.eos = 11;
    r->add_space_prefix = false;
    r->add_bos = r->pre.default_add_bos;
    if (r->pre.clear_bos) ids.bos = -1;
  }
  r->add_eos = r->kind == ModelKind::kUgm && !v.hf_unigram;  // llama.cpp's UGM default

  struct IdSlot {
    int32_t* id;
    const std::optional<int64_t>* value;
  };
  const IdSlot slots[] = {
      {&ids.bos, &v.bos_id},         {&ids.eos, &v.eos_id},         {&ids.eot, &v.eot_id},
      {&ids.eom, &v.eom_id},         {&ids.unk, &v.unk_id},         {&ids.sep, &v.sep_id},
      {&ids.pad, &v.pad_id},         {&ids.mask, &v.mask_id},       {&ids.fim_pre, &v.fim_pre_id},
      {&ids.fim_suf, &v.fim_suf_id}, {&ids.fim_mid, &v.fim_mid_id}, {&ids.fim_pad, &v.fim_pad_id},
      {&ids.fim_rep, &v.fim_rep_id}, {&ids.fim_sep, &v.fim_sep_id},
  };
  for (const IdSlot& s : slots) {
    if (*s.id >= n) *s.id = -1;  // a default outside this vocabulary is disabled
    // An out-of-range id in the metadata keeps the default, as llama.cpp does.
    if (s.value->has_value() && **s.value >= 0 && **s.value < n) {
      *s.id = static_cast<int32_t>(**s.value);
    }
  }

  if (v.add_space_prefix.has_value()) r->add_space_prefix = *v.add_space_prefix;
  if (v.metaspace_prepend_scheme == "always") {
    r->space_prefix = ResolvedVocab::SpacePrefix::kMetaspaceAlways;
  } else if (v.metaspace_prepend_scheme == "first") {
    r->space_prefix = ResolvedVocab::SpacePrefix::kMetaspaceFirst;
  } else if (!v.metaspace_prepend_scheme.empty()) {
    return InvalidArgument("tokenizer.hf.metaspace_prepend_scheme '" + v.metaspace_prepend_scheme +
                           "' is not \"first\" or \"always\"");
  }
  if (v.add_bos.has_value()) r->add_bos = *v.add_bos;
  if (v.add_eos.has_value()) r->add_eos = *v.add_eos;
  if (r->kind == ModelKind::kBpe && r->pre.force_add_bos) r->add_bos = true;
  if (r->add_bos && ids.bos < 0) {
    return InvalidArgument(
        "tokenizer.ggml.add_bos_token is true, but tokenizer.ggml.bos_token_id is not set");
  }
  if (r->kind == ModelKind::kWpm && (ids.bos < 0 || ids.sep < 0 || ids.unk < 0)) {
    return InvalidArgument("WordPiece vocabulary of " + std::to_string(n) +
                           " tokens lacks a [CLS] (bos), [SEP] or [UNK] id");
  }
  if (r->add_eos && ids.eos < 0) {
    return InvalidArgument(
        "tokenizer.ggml.add_eos_token is true, but tokenizer.ggml.eos_token_id is not set");
  }
  return Status::Ok();
}

// Tokens whose text marks them as end-of-turn / FIM control tokens get those roles (when the
// metadata did not name one) and the control attribute.
void DetectControlTokens(ResolvedVocab* r) {
  struct Role {
    int32_t* id;
    Names texts;
  };
  SpecialIds& ids = r->ids;
  const Role roles[] = {
      {&ids.eot,
       {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
        "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"}},
      {&ids.eom, {"<|eom_id|>"}},
      {&ids.fim_pre,
       {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
        "<|code_prefix|>", "<|prefix|>"}},
      {&ids.fim_suf,
       {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
        "<|code_suffix|>", "<|suffix|>"}},
      {&ids.fim_mid,
       {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
        "<|code_middle|>", "<|middle|>"}},
      {&ids.fim_pad, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}},
      {&ids.fim_rep, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}},
      {&ids.fim_sep, {"<|file_sep|>"}},
  };
  for (size_t id = 0; id < r->tokens.size(); ++id) {
    if (!MaybeNamedToken(r->tokens[id])) continue;
    for (const Role& role : roles) {
      if (*role.id < 0 && In(r->tokens[id], role.texts)) {
        *role.id = static_cast<int32_t>(id);
        r->attrs[id] |= attr::kControl;
      }
    }
  }
  for (size_t id = 0; id < r->tokens.size(); ++id) {
    if ((r->attrs[id] & attr::kControl) && r->tokens[id].find("unused") != std::string::npos) {
      r->attrs[id] |= attr::kUnused;
    }
  }
}

void CollectEndOfGeneration(ResolvedVocab* r) {
  const SpecialIds& ids = r->ids;
  std::vector<int32_t>& eog = r->eog_ids;
  for (int32_t id : {ids.fim_pad, ids.fim_rep, ids.fim_sep}) {
    if (id >= 0) eog.push_back(id);
  }
  const Names eog_texts = {"<|eot_id|>",
                           "<|im_end|>",
                           "<|end|>",
                           "<|return|>",
                           "<|call|>",
                           "<|flush|>",
                           "<|calls|>",
                           "<end_of_turn>",
                           "<|endoftext|>",
                           "</s>",
                           "<|eom_id|>",
                           "<EOT>",
                           "_<EOT>",
                           "[EOT]",
                           "[EOS]",
                           "<|end_of_text|>",
                           "<end_of_utterance>",
                           "<eos>",
                           "<turn|>",
                           "<|tool_response>",
                           "<｜end▁of▁sentence｜>",
                           "[e~["};
  for (size_t id = 0; id < r->tokens.size(); ++id) {
    if (!MaybeNamedToken(r->tokens[id])) continue;
    if (In(r->tokens[id], eog_texts)) {
      eog.push_back(static_cast<int32_t>(id));
      r->attrs[id] |= attr::kControl;
    }
    // gpt-oss: these structural tokens are always rendered.
    if (In(r->tokens[id], {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"})) {
      r->attrs[id] = attr::kUserDefined;
    }
  }
  for (int32_t id : {ids.eos, ids.eot, ids.eom}) {
    if (id >= 0) eog.push_back(id);
  }
  std::sort(eog.begin(), eog.end());
  eog.erase(std::unique(eog.begin(), eog.end()), eog.end());

  auto has = [&](std::string_view text) {
    return std::any_of(eog.begin(), eog.end(), [&](int32_t id) { return r->tokens[id] == text; });
  };
  auto drop = [&](std::string_view text, uint32_t new_attr) {
    for (size_t i = 0; i < eog.size(); ++i) {
      if (r->tokens[eog[i]] == text) {
        r->attrs[eog[i]] = new_attr;
        eog.erase(eog.begin() + static_cast<std::ptrdiff_t>(i));
        return;
      }
    }
  };
  // o200k_harmony / solar-open: "<|end|>" ends a message, not the generation.
  if (has("<|end|>") && ((has("<|return|>") && has("<|call|>")) ||
                         ((has("<|call|>") || has("<|calls|>")) && has("<|flush|>")))) {
    drop("<|end|>", attr::kUserDefined);
  }
  // gemma4 / paddleocr: "</s>" is ordinary text there.
  if (has("<|tool_response>") && has("</s>")) drop("</s>", attr::kNormal);
}

// Per-token strip attributes llama.cpp keys on the model / pre-tokenizer / architecture name.
void ApplyNameQuirks(const Vocab& v, ResolvedVocab* r) {
  std::string name = v.general_name;
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto set = [&](std::string_view text, uint32_t bit, bool on) {
    const int32_t id = FindText(r->tokens, text);
    if (id < 0) return;
    r->attrs[id] = on ? (r->attrs[id] | bit) : (r->attrs[id] & ~bit);
  };
  if (ContainsAny(v.pre, {"jina-v2-de", "jina-v2-es", "jina-v2-code"}) ||
      ContainsAny(v.architecture, {"nomic-bert-moe", "jina-bert-v3"})) {
    set("<mask>", attr::kLstrip, true);
  } else if (ContainsAny(name, {"phi-3", "phi3"})) {
    for (int32_t id : r->special_order) r->attrs[id] |= attr::kRstrip;
    set("</s>", attr::kRstrip, true);
    for (std::string_view t : {"<unk>", "<s>", "<|endoftext|>"}) set(t, attr::kRstrip, false);
  } else if (ContainsAny(name, {"modern-bert"})) {
    set("[MASK]", attr::kLstrip, true);
  }
}

}  // namespace

bool LooksLikeSpecialMarker(std::string_view text) {
  if (text.size() < 3 || text.front() != '<' || text.back() != '>') return false;
  if (text.find_first_of(" \t\n\r") != std::string_view::npos) return false;
  const std::string_view inside = text.substr(1, text.size() - 2);
  auto enclosed_by = [&](std::string_view bar) {
    return inside.size() > 2 * bar.size() && inside.starts_with(bar) && inside.ends_with(bar);
  };
  // A marker names something: Gemma 4's string quote <|"|> (tool-call syntax) is text.
  const bool names_something = std::any_of(inside.begin(), inside.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (c & 0x80) != 0;
  });
  if (!names_something) return false;
  if (enclosed_by("|") || enclosed_by("\xEF\xBD\x9C")) return true;  // U+FF5C
  for (std::string_view prefix : {"start_of_", "end_of_", "unused"}) {
    if (inside.size() > prefix.size() && inside.starts_with(prefix)) return true;
  }
  return false;
}

StatusOr<ResolvedVocab> ResolveVocab(Vocab v) {
  ResolvedVocab r;
  if (v.model == "t5" && v.hf_unigram) {
    r.kind = ModelKind::kUgm;
    r.hf_normalizers = std::move(v.hf_normalizers);
    r.hf_pre_tokenizers = std::move(v.hf_pre_tokenizers);
    r.hf_byte_fallback = v.hf_byte_fallback;
    r.hf_unigram_tokens = std::min<int64_t>(v.hf_unigram_tokens, v.tokens.size());
    r.hf_unigram_scores = std::move(v.hf_unigram_scores);
  } else if (v.model == "t5") {
    r.kind = ModelKind::kUgm;
    RADIXLM_RETURN_IF_ERROR(LlamaCppUgmSteps(v, &r));
  } else {
    RADIXLM_RETURN_IF_ERROR(CheckModelType(v.model, &r.kind));
    // A Hugging Face tokenizer.json's Unicode normal forms (src/hf writes them for BPE, SPM-style
    // BPE and WordPiece); the tokenizer refuses any other step for these kinds.
    r.hf_normalizers = std::move(v.hf_normalizers);
    r.hf_pre_tokenizers = std::move(v.hf_pre_tokenizers);
  }
  r.model = v.model;
  if (v.tokens.empty()) return InvalidArgument("tokenizer.ggml.tokens is empty");
  if (r.kind == ModelKind::kBpe) {
    // A "gemma4" vocabulary always has Gemma 4's pre-tokenizer, whatever tokenizer.ggml.pre says.
    RADIXLM_ASSIGN_OR_RETURN(r.pre, FindPreTokenizerSpec(v.model == "gemma4" ? "gemma4" : v.pre));
    if (v.merges.empty()) return InvalidArgument("BPE vocabulary has no tokenizer.ggml.merges");
    r.merges = std::move(v.merges);
  }

  const size_t n = v.tokens.size();
  r.tokens = std::move(v.tokens);
  for (size_t i = 0; i < n; ++i) {
    if (r.tokens[i].empty()) r.tokens[i] = "[EMPTY_" + std::to_string(i) + "]";
  }
  r.scores = v.scores.size() >= n ? std::vector<float>(v.scores.begin(), v.scores.begin() + n)
                                  : std::vector<float>(n, 0.0f);
  r.attrs.assign(n, attr::kNormal);
  if (v.token_types.size() >= n) {
    for (size_t i = 0; i < n; ++i) r.attrs[i] = AttrFromType(v.token_types[i]);
  }
  r.chat_template = std::move(v.chat_template);
  if (r.kind == ModelKind::kUgm &&
      r.hf_unigram_scores.size() < static_cast<size_t>(r.hf_unigram_tokens)) {
    r.hf_unigram_scores.assign(r.scores.begin(), r.scores.begin() + r.hf_unigram_tokens);
  }

  RADIXLM_RETURN_IF_ERROR(ApplyIdsAndFlags(v, &r));
  // Before the end-of-generation pass, which makes gpt-oss's structural tokens (and its
  // "<|end|>") plain user-defined tokens that are always rendered, as llama.cpp does: its
  // harmony parsers read them from the text.
  for (size_t id = 0; id < n; ++id) {
    if ((r.attrs[id] & attr::kUserDefined) && LooksLikeSpecialMarker(r.tokens[id])) {
      r.attrs[id] |= attr::kSpecialMarker;
    }
  }
  DetectControlTokens(&r);
  CollectEndOfGeneration(&r);

  // llama.cpp's special-token cache order: ids ascending, then std::sort by text length
  // (descending). Same input, same comparator, same std::sort: same order for equal lengths.
  for (size_t id = 0; id < n; ++id) {
    if (r.attrs[id] & (attr::kControl | attr::kUserDefined | attr::kUnknown)) {
      r.special_order.push_back(static_cast<int32_t>(id));
    }
  }
  std::sort(r.special_order.begin(), r.special_order.end(),
            [&](int32_t a, int32_t b) { return r.tokens[a].size() > r.tokens[b].size(); });

  ApplyNameQuirks(v, &r);
  return r;
}

}  // namespace radixlm::tokenizer
