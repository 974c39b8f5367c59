#include "engine/draft_model.h"

#include <algorithm>

#include "model/model_config.h"
#include "util/model_path.h"

namespace radixlm {
namespace {

constexpr const char* kTokensKey = "tokenizer.ggml.tokens";

// The token string of item i ("" for a non-string item).
const std::string& TokenAt(const gguf::Array& tokens, size_t i) {
  static const std::string kEmpty;
  const auto* s = std::get_if<std::string>(&tokens.items[i].data);
  return s != nullptr ? *s : kEmpty;
}

}  // namespace

Status CheckSameVocabulary(const gguf::GgufFile& target, const gguf::GgufFile& draft) {
  RADIXLM_ASSIGN_OR_RETURN(model::ModelConfig tc, model::ModelConfig::FromGguf(target));
  RADIXLM_ASSIGN_OR_RETURN(model::ModelConfig dc, model::ModelConfig::FromGguf(draft));
  if (tc.vocab_size != dc.vocab_size) {
    return InvalidArgument("the draft model's vocabulary has " + std::to_string(dc.vocab_size) +
                           " tokens, the target model's " + std::to_string(tc.vocab_size) +
                           "; speculative decoding needs the same vocabulary");
  }
  const bool target_has = target.Has(kTokensKey), draft_has = draft.Has(kTokensKey);
  if (target_has != draft_has) {
    return InvalidArgument(std::string("the ") + (target_has ? "draft" : "target") +
                           " model has no " + kTokensKey +
                           " to compare: cannot check that the vocabularies are the same");
  }
  if (!target_has) return Status::Ok();
  RADIXLM_ASSIGN_OR_RETURN(const gguf::Array* t, target.GetArray(kTokensKey));
  RADIXLM_ASSIGN_OR_RETURN(const gguf::Array* d, draft.GetArray(kTokensKey));
  if (t->items.size() != d->items.size()) {
    return InvalidArgument("the draft model's tokenizer has " + std::to_string(d->items.size()) +
                           " tokens, the target model's " + std::to_string(t->items.size()));
  }
  for (size_t i = 0; i < t->items.size(); ++i) {
    if (TokenAt(*t, i) != TokenAt(*d, i)) {
      return InvalidArgument("the draft model's token " + std::to_string(i) + " is '" +
                             TokenAt(*d, i) + "', the target model's '" + TokenAt(*t, i) +
                             "'; speculative decoding needs the same vocabulary");
    }
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<ModelBackedRunner>> LoadDraftRunner(const std::string& path,
                                                             const gguf::GgufFile& target,
                                                             const model::ModelOptions& options,
                                                             int64_t kv_slots) {
  RADIXLM_ASSIGN_OR_RETURN(std::string resolved, ResolveModelPath(path));
  auto opened = gguf::GgufFile::Open(resolved);
  if (!opened.ok()) {
    return InvalidArgument("--speculative-draft-model-path: " + opened.status().message());
  }
  std::unique_ptr<gguf::GgufFile> file = std::move(opened).value();
  if (Status same = CheckSameVocabulary(target, *file); !same.ok()) {
    return InvalidArgument("--speculative-draft-model-path " + resolved + ": " + same.message());
  }
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<model::Model> draft,
                           model::Model::FromGguf(std::move(file), options));
  return ModelBackedRunner::Create(std::move(draft), kv_slots);
}

}  // namespace radixlm
