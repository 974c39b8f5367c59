// SnapshotRadixTree: builds the observer's RadixTreeSnapshot (radix_tree_view.h) from a
// RadixCache. Internal to the engine; runs on the scheduler thread (the only one that may read
// the cache), in O(tree nodes + max_nodes · log) time, copying ids only for the entries shown.
#pragma once

#include "cache/radix_cache.h"
#include "engine/radix_tree_view.h"

namespace radixlm {

// Fills everything that comes from the cache (version, clock, sizes, entries, evictions);
// the pool and admission counters are the caller's. Honors query.if_version_not (then only
// the O(1) counters are filled).
RadixTreeSnapshot SnapshotRadixTree(const RadixCache& cache, const RadixTreeQuery& query);

}  // namespace radixlm
