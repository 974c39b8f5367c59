#include "tokenizer/vocab.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include "gguf/gguf_file.h"

namespace radixlm::tokenizer {
namespace {

Status WrongArray(std::string_view key, std::string_view what) {
  return InvalidArgument("GGUF key '" + std::string(key) + "': " + std::string(what));
}

StatusOr<const gguf::Array*> OptionalArray(const gguf::GgufFile& file, std::string_view key) {
  if (!file.Has(key)) return static_cast<const gguf::Array*>(nullptr);
  return file.GetArray(key);
}

Status ReadStrings(const gguf::GgufFile& file, std::string_view key,
                   std::vector<std::string>* out) {
  RADIXLM_ASSIGN_OR_RETURN(const gguf::Array* arr, OptionalArray(file, key));
  if (arr == nullptr) return Status::Ok();
  if (arr->element_type != gguf::ValueType::kString) {
    return WrongArray(key, "expected an array of strings");
  }
  out->reserve(arr->items.size());
  for (const gguf::Value& v : arr->items) out->push_back(v.AsString());
  return Status::Ok();
}

Status ReadNumbers(const gguf::GgufFile& file, std::string_view key, size_t expected,
                   bool allow_float, std::vector<double>* out) {
  RADIXLM_ASSIGN_OR_RETURN(const gguf::Array* arr, OptionalArray(file, key));
  if (arr == nullptr) return Status::Ok();
  if (arr->items.size() < expected) {
    return WrongArray(key, "has " + std::to_string(arr->items.size()) + " items, fewer than the " +
                               std::to_string(expected) + " tokens");
  }
  out->reserve(expected);
  for (size_t i = 0; i < expected; ++i) {
    const gguf::Value& v = arr->items[i];
    if (v.is_integer()) {
      out->push_back(static_cast<double>(v.AsInt()));
    } else if (allow_float && v.is_float()) {
      out->push_back(v.AsFloat());
    } else {
      return WrongArray(key, allow_float ? "expected numbers" : "expected integers");
    }
  }
  return Status::Ok();
}

Status ReadOptionalId(const gguf::GgufFile& file, std::string_view key,
                      std::optional<int64_t>* out) {
  if (!file.Has(key)) return Status::Ok();
  RADIXLM_ASSIGN_OR_RETURN(int64_t id, file.GetInt(key));
  *out = id;
  return Status::Ok();
}

Status ReadOptionalBool(const gguf::GgufFile& file, std::string_view key,
                        std::optional<bool>* out) {
  if (!file.Has(key)) return Status::Ok();
  RADIXLM_ASSIGN_OR_RETURN(bool b, file.GetBool(key));
  *out = b;
  return Status::Ok();
}

}  // namespace

StatusOr<Vocab> LoadVocab(const gguf::GgufFile& file) {
  Vocab v;
  RADIXLM_ASSIGN_OR_RETURN(v.model, file.GetString("tokenizer.ggml.model"));
  RADIXLM_ASSIGN_OR_RETURN(v.pre, file.GetStringOr("tokenizer.ggml.pre", ""));
  RADIXLM_ASSIGN_OR_RETURN(v.general_name, file.GetStringOr("general.name", ""));
  RADIXLM_ASSIGN_OR_RETURN(v.architecture, file.GetStringOr("general.architecture", ""));
  RADIXLM_ASSIGN_OR_RETURN(v.chat_template, file.GetStringOr("tokenizer.chat_template", ""));
  RADIXLM_ASSIGN_OR_RETURN(v.metaspace_prepend_scheme,
                           file.GetStringOr("tokenizer.hf.metaspace_prepend_scheme", ""));

  if (v.model == "none" || v.model == "no_vocab") return v;  // no token list to read

  if (!file.Has("tokenizer.ggml.tokens")) return NotFound("GGUF has no tokenizer.ggml.tokens");
  RADIXLM_RETURN_IF_ERROR(ReadStrings(file, "tokenizer.ggml.tokens", &v.tokens));
  const size_t n = v.tokens.size();

  std::vector<double> numbers;
  RADIXLM_RETURN_IF_ERROR(ReadNumbers(file, "tokenizer.ggml.scores", n, true, &numbers));
  // Converting a finite double beyond float's range (an f64 array) is undefined behaviour.
  for (double d : numbers) {
    if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()) {
      return WrongArray("tokenizer.ggml.scores", "a score is outside the float range");
    }
  }
  v.scores.assign(numbers.begin(), numbers.end());
  numbers.clear();
  RADIXLM_RETURN_IF_ERROR(ReadNumbers(file, "tokenizer.ggml.token_type", n, false, &numbers));
  v.token_types.reserve(numbers.size());
  for (double d : numbers) {
    if (d < std::numeric_limits<int32_t>::min() || d > std::numeric_limits<int32_t>::max()) {
      return WrongArray("tokenizer.ggml.token_type", "a token type is outside the int32 range");
    }
    v.token_types.push_back(static_cast<int32_t>(d));
  }
  RADIXLM_RETURN_IF_ERROR(ReadStrings(file, "tokenizer.ggml.merges", &v.merges));
  std::optional<int64_t> unigram_tokens;
  RADIXLM_RETURN_IF_ERROR(ReadOptionalId(file, "tokenizer.hf.unigram_tokens", &unigram_tokens));
  v.hf_unigram = unigram_tokens.has_value();
  v.hf_unigram_tokens = unigram_tokens.value_or(0);
  if (v.hf_unigram_tokens < 0 || static_cast<size_t>(v.hf_unigram_tokens) > n) {
    return WrongArray("tokenizer.hf.unigram_tokens", "is not between 0 and the token count");
  }
  if (v.hf_unigram && file.Has("tokenizer.hf.unigram_scores")) {
    RADIXLM_RETURN_IF_ERROR(ReadNumbers(file, "tokenizer.hf.unigram_scores",
                                        static_cast<size_t>(v.hf_unigram_tokens), true,
                                        &v.hf_unigram_scores));
  }
  std::optional<bool> flag;
  RADIXLM_RETURN_IF_ERROR(ReadOptionalBool(file, "tokenizer.hf.byte_fallback", &flag));
  v.hf_byte_fallback = flag.value_or(false);
  RADIXLM_RETURN_IF_ERROR(ReadStrings(file, "tokenizer.hf.normalizers", &v.hf_normalizers));
  RADIXLM_RETURN_IF_ERROR(ReadOptionalBool(file, "tokenizer.ggml.remove_extra_whitespaces",
                                           &v.remove_extra_whitespaces));
  RADIXLM_ASSIGN_OR_RETURN(const gguf::Array* charsmap,
                           OptionalArray(file, "tokenizer.ggml.precompiled_charsmap"));
  if (charsmap != nullptr) {
    if (charsmap->element_type != gguf::ValueType::kUint8 &&
        charsmap->element_type != gguf::ValueType::kInt8) {
      return WrongArray("tokenizer.ggml.precompiled_charsmap", "expected an array of bytes");
    }
    v.precompiled_charsmap.reserve(charsmap->items.size());
    for (const gguf::Value& b : charsmap->items) {
      v.precompiled_charsmap.push_back(static_cast<char>(b.AsInt() & 0xFF));
    }
  }
  RADIXLM_RETURN_IF_ERROR(ReadStrings(file, "tokenizer.hf.pre_tokenizers", &v.hf_pre_tokenizers));

  struct IdKey {
    const char* key;
    std::optional<int64_t>* out;
  };
  const IdKey id_keys[] = {
      {"tokenizer.ggml.bos_token_id", &v.bos_id},
      {"tokenizer.ggml.eos_token_id", &v.eos_id},
      {"tokenizer.ggml.eot_token_id", &v.eot_id},
      {"tokenizer.ggml.eom_token_id", &v.eom_id},
      {"tokenizer.ggml.unknown_token_id", &v.unk_id},
      {"tokenizer.ggml.seperator_token_id", &v.sep_id},  // sic: the GGUF spelling
      {"tokenizer.ggml.padding_token_id", &v.pad_id},
      {"tokenizer.ggml.mask_token_id", &v.mask_id},
      // Deprecated FIM keys first, so the current names win when both are present.
      {"tokenizer.ggml.prefix_token_id", &v.fim_pre_id},
      {"tokenizer.ggml.suffix_token_id", &v.fim_suf_id},
      {"tokenizer.ggml.middle_token_id", &v.fim_mid_id},
      {"tokenizer.ggml.fim_pre_token_id", &v.fim_pre_id},
      {"tokenizer.ggml.fim_suf_token_id", &v.fim_suf_id},
      {"tokenizer.ggml.fim_mid_token_id", &v.fim_mid_id},
      {"tokenizer.ggml.fim_pad_token_id", &v.fim_pad_id},
      {"tokenizer.ggml.fim_rep_token_id", &v.fim_rep_id},
      {"tokenizer.ggml.fim_sep_token_id", &v.fim_sep_id},
  };
  for (const IdKey& k : id_keys) RADIXLM_RETURN_IF_ERROR(ReadOptionalId(file, k.key, k.out));

  RADIXLM_RETURN_IF_ERROR(ReadOptionalBool(file, "tokenizer.ggml.add_bos_token", &v.add_bos));
  RADIXLM_RETURN_IF_ERROR(ReadOptionalBool(file, "tokenizer.ggml.add_eos_token", &v.add_eos));
  RADIXLM_RETURN_IF_ERROR(
      ReadOptionalBool(file, "tokenizer.ggml.add_space_prefix", &v.add_space_prefix));
  RADIXLM_RETURN_IF_ERROR(
      ReadOptionalBool(file, "tokenizer.ggml.normalizer.lowercase", &v.normalizer_lowercase));
  RADIXLM_RETURN_IF_ERROR(ReadOptionalBool(file, "tokenizer.ggml.normalizer.strip_accents",
                                           &v.normalizer_strip_accents));
  return v;
}

}  // namespace radixlm::tokenizer
