// Scheduler: what happens after the forward — input logprobs, sampling, stop checks, caching
// of completed prefills, outputs; and cleanup when the forward fails.
#include <algorithm>
#include <chrono>

#include "sampling/logprobs.h"
#include "sampling/token_bitmask.h"
#include "scheduler/scheduler.h"
#include "util/check.h"

namespace radixlm {

void Scheduler::ComputeInputLogprobs(Request* req, const PrefillChunk& chunk, size_t seq) {
  const int64_t start = req->in.logprob_start_len;
  RADIXLM_CHECK(start >= 0 && start < req->prompt_len) << "logprob_start_len " << start;
  if (start == 0 && chunk.begin == 0) {
    req->input_logprobs.push_back(
        {req->token_ids[0], std::nullopt, {}, {}});  // nothing predicts it
  }
  // Row q (position q) scores token q + 1, for prompt tokens [max(start, 1), prompt_len).
  const int64_t q_lo = std::max(chunk.begin, std::max<int64_t>(start, 1) - 1);
  const int64_t q_hi = std::min(chunk.end, req->prompt_len - 1);
  if (q_lo >= q_hi) return;
  const int64_t n = q_hi - q_lo;
  const int64_t vocab = forward_out_.vocab_size;
  RADIXLM_CHECK_EQ(forward_out_.row_count[seq], chunk.end - chunk.begin);
  const std::span<const float> logits(forward_out_.Row(seq, q_lo - chunk.begin),
                                      static_cast<size_t>(n * vocab));
  const std::span<const int32_t> next =
      std::span<const int32_t>(req->token_ids).subspan(q_lo + 1, n);
  const SamplingParams& params = req->in.params;
  const float temperature = params.IsGreedy() ? 1.0f : params.temperature;
  std::vector<float> logprobs(n);
  std::vector<std::vector<TokenLogprob>> top;
  std::vector<std::vector<TokenLogprob>> by_id;
  const int32_t top_n = req->in.top_logprobs_num;
  const std::span<const int32_t> ids = req->in.token_ids_logprob;
  InputTokenLogprobs(logits, static_cast<int32_t>(vocab), next, temperature, logprobs, top_n,
                     top_n > 0 ? &top : nullptr, ids, ids.empty() ? nullptr : &by_id);
  for (int64_t i = 0; i < n; ++i) {
    LogprobEntry e{next[i], logprobs[i], {}, {}};
    if (top_n > 0) e.top = std::move(top[i]);
    if (!ids.empty()) e.token_ids = std::move(by_id[i]);
    req->input_logprobs.push_back(std::move(e));
  }
}

void Scheduler::PoolChunk(Request* req, const PrefillChunk& chunk, size_t seq) {
  // The rows are hidden states here: the runner of an embedding model returns them in place
  // of logits, vocab_size being their width.
  const int64_t width = forward_out_.vocab_size;
  // A prefill that starts over (after a retraction) pools from scratch.
  if (!req->pooled.has_value() || chunk.begin == 0) req->pooled.emplace(req->in.pooling, width);
  const int64_t rows = forward_out_.row_count[seq];
  if (rows == 0) return;
  // kAll: one row per new token, from chunk.begin; kLast: the chunk's last position.
  const int64_t first = rows == chunk.end - chunk.begin ? chunk.begin : chunk.end - rows;
  req->pooled->Add(first, rows, forward_out_.Row(seq, 0));
}

const int32_t* Scheduler::FillGrammarMask(Request* req, int64_t vocab) {
  req->grammar_mask.assign(BitmaskWords(static_cast<int32_t>(
                               std::max<int64_t>(vocab, req->matcher->grammar().vocab().size()))),
                           0);
  req->matcher->FillTokenMask(req->grammar_mask);
  return req->grammar_mask.data();
}

void Scheduler::FillSampleRow(Request* req, float* logits, BatchSamplingRow& row) {
  const int64_t vocab = forward_out_.vocab_size;
  row.logits = logits;
  row.params = &req->in.params;
  row.processor.history = &req->penalties;
  row.processor.eos_token_ids = eog_token_ids_;
  row.processor.allowed_token_bitmask = nullptr;
  if (req->matcher.has_value()) {
    const auto start = std::chrono::steady_clock::now();
    row.processor.allowed_token_bitmask = FillGrammarMask(req, vocab);
    stats_.grammar_mask_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++stats_.grammar_masks;
  }
  row.options.seed = req->seed;
  row.options.step = static_cast<uint64_t>(req->output_len());
  row.options.return_logprob = req->in.return_logprob;
  row.options.top_logprobs_num = req->in.return_logprob ? req->in.top_logprobs_num : 0;
  row.options.token_ids_logprob = req->in.return_logprob
                                      ? std::span<const int32_t>(req->in.token_ids_logprob)
                                      : std::span<const int32_t>();
}

void Scheduler::SampleRows() {
  const size_t n = sample_reqs_.size();
  sample_rows_.resize(n);
  const int64_t vocab = forward_out_.vocab_size;
  for (size_t i = 0; i < n; ++i) {
    const size_t seq = sample_seqs_[i];
    RADIXLM_CHECK_GE(forward_out_.row_count[seq], 1);
    FillSampleRow(sample_reqs_[i],
                  forward_out_.logits.data() +
                      (forward_out_.row_offset[seq] + forward_out_.row_count[seq] - 1) * vocab,
                  sample_rows_[i]);
  }
  std::span<BatchSamplingRow> rows(sample_rows_);
  ThreadPool* pool = runner_->thread_pool();
  if (pool != nullptr && pool->size() > 1 && n > 1) {
    pool->ParallelFor(static_cast<int64_t>(n), [&](int64_t begin, int64_t end, int worker) {
      sampler_.SampleRange(rows, begin, end, worker);
    });
  } else {
    sampler_.SampleAll(rows);
  }
}

void Scheduler::OnTokenSampled(Request* req, BatchSamplingRow& row) {
  const int32_t token = row.result.token;
  if (req->matcher.has_value() && !req->matcher->AcceptToken(token)) {
    // Only when the mask allowed nothing (e.g. the grammar cannot continue with this
    // vocabulary): finish clearly rather than emit text outside the grammar.
    FinishRequest(req, FinishReason::Abort("the grammar allows no token to continue the output"));
    return;
  }
  req->token_ids.push_back(token);
  ++req->sampled_tokens;
  req->penalties.AddOutputToken(token);
  if (req->in.return_logprob) {
    LogprobEntry e{token, row.result.logprob, {}, {}};
    if (req->in.top_logprobs_num > 0) e.top = row.top_logprobs;
    if (!req->in.token_ids_logprob.empty()) e.token_ids = row.token_ids_logprobs;
    req->output_logprobs.push_back(std::move(e));
  }
  std::optional<FinishReason> finish = req->stop.OnToken(token, req->output_len());
  // A grammar that has accepted its end token is finished even under ignore_eos (as SGLang).
  if (!finish.has_value() && req->matcher.has_value() && req->matcher->IsTerminated()) {
    finish = FinishReason::StopToken(token);
  }
  if (req->state == RequestState::kPrefilling && !finish.has_value()) {
    // Prefill done: share the prompt through the tree at once, then decode.
    WriteThroughToDisk(req);
    {
      const CacheOpTimer timer(stats_);
      cache_->CacheUnfinishedRequest(
          req->cache, std::span<const int32_t>(req->token_ids).first(req->kv_len), table_, pool_);
    }
    ++tree_version_;
    SnapshotAtNode(req);  // a hybrid model's state at the prompt's end
    req->state = RequestState::kDecoding;
    running_.push_back(req);
  }
  if (finish.has_value()) {
    FinishRequest(req, std::move(*finish));
  } else if (!TryJumpForward(req)) {
    EmitOutput(req);
  }
}

void Scheduler::ProcessResults() {
  sample_reqs_.clear();
  sample_seqs_.clear();
  verify_reqs_.clear();
  for (size_t s = 0; s < decodes_.size(); ++s) {
    Request* req = decodes_[s];
    ++req->kv_len;
    ++req->forward_passes;
    ++stats_.decode_tokens;
    if (req->draft.size() > 1) {
      verify_reqs_.push_back(s);  // sampled node by node after the batch (VerifyDraft)
      continue;
    }
    sample_reqs_.push_back(req);
    sample_seqs_.push_back(s);
  }
  Request* partial = nullptr;
  bool chunked_ran = false;
  for (size_t j = 0; j < chunks_.size(); ++j) {
    const PrefillChunk& chunk = chunks_[j];
    Request* req = chunk.req;
    chunked_ran = chunked_ran || req == chunked_;
    const size_t seq = decodes_.size() + j;
    stats_.prefill_tokens += chunk.end - chunk.begin;
    ++req->forward_passes;
    if (req->is_embedding()) {
      PoolChunk(req, chunk, seq);
    } else if (chunk.logits == model::LogitsMode::kAll) {
      ComputeInputLogprobs(req, chunk, seq);
    }
    req->kv_len = chunk.end;
    if (!chunk.is_final()) {
      RADIXLM_CHECK(partial == nullptr) << "at most one request is left mid-prefill per round";
      partial = req;
      WriteThroughToDisk(req);
      {
        const CacheOpTimer timer(stats_);
        cache_->CacheUnfinishedRequest(
            req->cache, std::span<const int32_t>(req->token_ids).first(req->kv_len), table_, pool_);
      }
      ++tree_version_;
      SnapshotAtNode(req);  // a hybrid model's state at the chunk's end
      continue;
    }
    if (chunked_ == req) chunked_ = nullptr;
    req->input_logprobs_done = true;
    req->prompt_prefilled = true;
    if (req->is_embedding()) {
      req->embedding = req->pooled->Finish(req->prompt_len, /*normalize=*/true);
      req->pooled.reset();
    }
    if (req->output_len() >= req->max_new_tokens) {  // max_new_tokens == 0: prompt only
      FinishRequest(req, FinishReason::Length(req->output_len()));
      continue;
    }
    sample_reqs_.push_back(req);
    sample_seqs_.push_back(seq);
  }
  // A mid-prefill request that did not run this round (its prefill deferred, or no room for
  // its next chunk while decodes ran) stays the chunked request.
  if (partial != nullptr || chunked_ran) chunked_ = partial;
  SampleRows();
  for (size_t i = 0; i < sample_reqs_.size(); ++i) OnTokenSampled(sample_reqs_[i], sample_rows_[i]);
  for (size_t s : verify_reqs_) VerifyDraft(decodes_[s], s);
  SubmitNgramWindows();
}

void Scheduler::AbortBatch(const std::string& message) {
  const int64_t page = pool_.page_size();
  // Slots allocated this round for tokens [kv_len, end) hold no valid KV: pages wholly past
  // kv_len's page are freed here; kv_len's own partial page goes with the request's tail.
  auto free_uncommitted = [&](Request* req, int64_t end) {
    const int64_t first_new_page = (req->kv_len + page - 1) / page * page;
    if (end > first_new_page) {
      pool_.Free(
          table_.Row(req->cache.req_pool_index).subspan(first_new_page, end - first_new_page));
    }
  };
  for (Request* req : decodes_) {
    free_uncommitted(req,
                     req->kv_len + static_cast<int64_t>(std::max<size_t>(1, req->draft.size())));
    req->draft.Reset(req->token_ids.back());
  }
  for (const PrefillChunk& chunk : chunks_) free_uncommitted(chunk.req, chunk.end);
  std::vector<Request*> victims(decodes_.begin(), decodes_.end());
  for (const PrefillChunk& chunk : chunks_) victims.push_back(chunk.req);
  // Their linear-layer state may be half-advanced: no snapshot of it goes to the tree.
  state_untrusted_ = true;
  for (Request* req : victims) FinishRequest(req, FinishReason::Abort(message));
  state_untrusted_ = false;
}

}  // namespace radixlm
