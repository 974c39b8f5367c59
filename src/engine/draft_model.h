// The draft model of --speculative-algorithm STANDALONE: a second GGUF loaded beside the
// target, which must share its vocabulary (same size, same token strings), run by its own
// ModelBackedRunner whose KV cache the scheduler indexes by the target pool's slots
// (scheduler/scheduler_draft_model.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/model_backed_runner.h"
#include "gguf/gguf_file.h"
#include "model/model.h"
#include "util/status.h"

namespace radixlm {

// OK when the two models' vocabularies are the same: equal sizes, and equal
// tokenizer.ggml.tokens where either has them. InvalidArgument naming the first difference.
Status CheckSameVocabulary(const gguf::GgufFile& target, const gguf::GgufFile& draft);

// Opens the draft GGUF at `path`, checks it against the target's file, and loads it with the
// target's options (batch size, context) and a KV cache of kv_slots slots.
StatusOr<std::unique_ptr<ModelBackedRunner>> LoadDraftRunner(const std::string& path,
                                                             const gguf::GgufFile& target,
                                                             const model::ModelOptions& options,
                                                             int64_t kv_slots);

}  // namespace radixlm
