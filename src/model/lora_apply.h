// The LoRA step of the forward pass: rows of one batch, each under its own adapter (or none),
// add scale * B (A x) to a base matrix's output (Punica / S-LoRA style segments).
//
// Rows are taken in runs of consecutive rows sharing an adapter (the segments; the scheduler
// orders a batch's sequences by adapter so rows of one adapter are one run): A is read once per
// segment, not once per row. Every value a row gets is computed by the same dot products in
// the same order whatever the segment, the batch or the thread split (batch invariance: a
// row's logits never depend on which adapters share its batch). Rows of no adapter, or whose
// adapter leaves this matrix alone, are untouched.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/lora_adapter.h"
#include "util/thread_pool.h"

namespace radixlm::model {

// The adapter of each row of a step ([n_rows]; null: the base model), and the scratch the
// step uses (grown on first use to the rows times the largest rank, then reused).
struct LoraRows {
  std::span<const LoraAdapter* const> adapter;
  std::vector<float>* scratch = nullptr;
};

// y[r] += scale * B (A x[r]) for r in [0, n) where rows.adapter[r] adapts (layer, target).
// x: [n, x_stride] (the matrix's `in` values first), y: [n, y_stride] (its `out` first).
// Does nothing when no row has an adapter.
void ApplyLora(const LoraRows& rows, int64_t layer, LoraTarget target, const float* x,
               int64_t x_stride, float* y, int64_t y_stride, int64_t n, ThreadPool* pool);

// Whether any row has an adapter.
bool AnyLora(const LoraRows& rows);

}  // namespace radixlm::model
