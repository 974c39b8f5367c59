// DiskStore: the disk tier of the KV cache (SGLang's HiCache storage with the "file" backend).
// Blocks of KV (kv_block.h) live one per file in a directory, named by the model identity and
// the block's prefix key, so a restarted server with the same model finds them again.
//
// Threads. The scheduler thread calls Contains / AcceptsWrite / EnqueueWrite / Load /
// SubmitLoad / TakeLoadResults / Clear; one writer thread owned by the store encodes and writes
// queued blocks, so the scheduler only pays for copying KV bytes out, and one loader thread
// reads the blocks of submitted load jobs. The write queue is bounded (max_queued_bytes): a
// write that does not fit is dropped and counted, never waited for. Everything shared is
// guarded by mu_.
//
// Failures are misses, never errors for serving: an unwritable directory, a full disk, a file
// removed under the store, or a truncated / corrupt / foreign file each log a warning (through
// config.warn) and are counted; a block that fails to load is forgotten (its file deleted), so
// the KV is recomputed and may be written again. A block is written to a temporary file and
// renamed into place only once all of it is written and closed, so a failed or short write
// never leaves a partial file under a block's name (and a file that is partial anyway fails
// its length and checksum checks). A failed write pauses writing: for kFirstWritePause, then
// twice as long after each further failure (at most kMaxWritePause), back to kFirstWritePause
// after a write succeeds; while paused, blocks offered are dropped without an attempt (counted
// in writes_dropped), so a full disk costs one failed write and one warning per pause, not a
// retry of every block.
//
// Size cap. The files of this model count against capacity_bytes; before a write would exceed
// it, the least recently written or loaded files are deleted. Other models' files in the same
// directory are left alone and not counted.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cache/block_file_io.h"
#include "cache/kv_block.h"
#include "util/mutex.h"
#include "util/status.h"
#include "util/thread_annotations.h"

namespace radixlm {

struct DiskStoreConfig {
  std::string dir;              // created if missing
  uint64_t capacity_bytes = 0;  // > 0
  uint64_t model_id = 0;        // identity of the model and KV layout (see kv_block.h)
  uint64_t max_queued_bytes = 256ull << 20;
  // Where warnings go (thread-safe; called from either thread, with the store's lock held:
  // it must not call the store). Null: stderr.
  std::function<void(const std::string&)> warn;
  // The writer's file operations; null: the real file system. Not owned: outlives the store.
  BlockFileIo* io = nullptr;
  // The clock of the write pause; null: std::chrono::steady_clock::now (tests step it).
  std::function<std::chrono::steady_clock::time_point()> clock;
};

struct DiskStoreStats {
  int64_t blocks = 0;         // blocks held (on disk or queued)
  int64_t bytes_on_disk = 0;  // file bytes of this model's blocks on disk
  int64_t blocks_stored = 0;  // written since start
  int64_t bytes_stored = 0;
  double store_seconds = 0;  // writer thread time spent writing them
  int64_t blocks_loaded = 0;
  int64_t bytes_loaded = 0;
  double load_seconds = 0;
  int64_t load_failures = 0;   // truncated / corrupt / foreign / missing files (not evictions)
  int64_t write_failures = 0;  // writes attempted that failed: full disk, unwritable directory
  int64_t writes_dropped = 0;  // not attempted: the queue full, or writes paused after a failure
  int64_t files_evicted = 0;   // deleted for the size cap
};

// A run of consecutive blocks to read (one request's prefix continuation).
struct DiskLoadJob {
  uint64_t ticket = 0;          // the caller's, returned with the result
  std::vector<BlockKey> keys;   // in prefix order
  std::vector<int32_t> tokens;  // the blocks' tokens, keys.size() equal runs
  size_t block_bytes = 0;       // payload bytes of one block
  // state_bytes > 0: a hybrid model's state snapshot after the last block (its file keyed by
  // state_key, holding the last block's tokens), read once every block was.
  BlockKey state_key;
  size_t state_bytes = 0;
};

struct DiskLoadResult {
  uint64_t ticket = 0;
  int64_t blocks_loaded = 0;   // the first blocks_loaded blocks of the job (a failure ends it)
  std::vector<uint8_t> bytes;  // [blocks_loaded * block_bytes]
  std::vector<uint8_t> state;  // [state_bytes] when asked for and read; else empty
};

class DiskStore {
 public:
  // Creates the directory if needed and indexes this model's block files in it (oldest first
  // by modification time; leftovers of interrupted writes are deleted). IoError when the
  // directory cannot be created or listed; InvalidArgument for a zero capacity.
  static StatusOr<std::unique_ptr<DiskStore>> Open(DiskStoreConfig config);
  // Finishes the queued writes, then stops the writer.
  ~DiskStore();
  DiskStore(const DiskStore&) = delete;
  DiskStore& operator=(const DiskStore&) = delete;

  // Whether the block is on disk or queued for writing.
  bool Contains(const BlockKey& key) const;

  static constexpr std::chrono::seconds kFirstWritePause{1};
  static constexpr std::chrono::seconds kMaxWritePause{64};

  // Whether EnqueueWrite would take the block now (so the caller may skip copying its KV out):
  // false when it is held, or while writes are paused after a failure (counted as dropped).
  bool AcceptsWrite(const BlockKey& key);

  // Queues a block for writing; takes the buffers. False (nothing queued) when the block is
  // already held, writes are paused, or the queue lacks room (the last two counted as dropped).
  bool EnqueueWrite(const BlockKey& key, std::vector<int32_t> tokens, std::vector<uint8_t> payload);

  // Reads the block into `payload` (its exact size) after checking its file against the model,
  // the key, `tokens` and the size (a queued block is copied from the queue). On any failure:
  // a warning, the block forgotten, and the error returned (the caller recomputes). A block
  // evicted (size cap, Clear) before or while it is read is a plain miss: NotFound, no warning,
  // not a load failure.
  Status Load(const BlockKey& key, std::span<const int32_t> tokens, std::span<uint8_t> payload);

  // Queues a load job for the loader thread (Load for each block, in order, until one fails).
  void SubmitLoad(DiskLoadJob job);
  // Moves the finished jobs' results to *out (appending); never blocks on I/O.
  void TakeLoadResults(std::vector<DiskLoadResult>* out);
  // Waits until a result is ready to take or `timeout` passes; true if one is ready.
  bool WaitForLoadResult(std::chrono::milliseconds timeout);

  // Blocks until every queued write has been attempted (tests, shutdown).
  void Flush();

  // Deletes every block of this model: its files and the queued writes (a write in progress
  // is deleted when it ends). Other models' files stay. Loads already submitted miss the
  // blocks gone (recomputed). Ends a write pause (space was freed). Returns the blocks deleted.
  int64_t Clear();

  DiskStoreStats stats() const;
  const std::string& dir() const { return config_.dir; }
  uint64_t capacity_bytes() const { return config_.capacity_bytes; }
  // File path of a block of this model.
  std::string BlockPath(const BlockKey& key) const;

 private:
  struct Entry {
    uint64_t bytes = 0;
    uint64_t seq = 0;  // recency: higher is newer
  };
  struct PendingWrite {
    BlockKey key;
    std::vector<int32_t> tokens;
    std::vector<uint8_t> payload;
  };

  explicit DiskStore(DiskStoreConfig config);
  Status ScanDirectory();
  void WriterLoop();
  void LoaderLoop();
  // Writes one block to a temporary file and renames it into place; the error on failure (the
  // temporary file removed).
  Status WriteFile(const PendingWrite& w, uint64_t* file_bytes);
  std::chrono::steady_clock::time_point Now() const;
  bool WritesPaused() const REQUIRES(mu_);
  // Deletes the oldest files until `incoming` more bytes fit under the cap.
  void MakeRoom(uint64_t incoming) REQUIRES(mu_);
  void Forget(const BlockKey& key) REQUIRES(mu_);
  void Touch(const BlockKey& key) REQUIRES(mu_);
  void Warn(const std::string& message) const;

  DiskStoreConfig config_;
  BlockFileIo* const io_;
  mutable Mutex mu_;
  std::condition_variable cv_;       // writer: work queued or stopping
  std::condition_variable drained_;  // Flush: queue empty and nothing in flight
  std::unordered_map<BlockKey, Entry, BlockKeyHash> index_ GUARDED_BY(mu_);
  std::map<uint64_t, BlockKey> by_age_ GUARDED_BY(mu_);  // seq -> key, oldest first
  uint64_t next_seq_ GUARDED_BY(mu_) = 1;
  uint64_t bytes_on_disk_ GUARDED_BY(mu_) = 0;
  std::list<PendingWrite> queue_ GUARDED_BY(mu_);
  std::unordered_map<BlockKey, const PendingWrite*, BlockKeyHash> queued_ GUARDED_BY(mu_);
  uint64_t queued_bytes_ GUARDED_BY(mu_) = 0;
  // Writes are paused until this time after a failure; the next failure pauses for next_pause_.
  std::chrono::steady_clock::time_point writes_paused_until_ GUARDED_BY(mu_){};
  std::chrono::steady_clock::duration next_pause_ GUARDED_BY(mu_) = kFirstWritePause;
  bool writing_ GUARDED_BY(mu_) = false;          // the writer writes queue_.front() (outside mu_)
  bool discard_written_ GUARDED_BY(mu_) = false;  // Clear ran meanwhile: that block is deleted
  bool stopping_ GUARDED_BY(mu_) = false;
  DiskStoreStats stats_ GUARDED_BY(mu_);
  std::condition_variable load_cv_;    // loader: a job submitted or stopping
  std::condition_variable loaded_cv_;  // WaitForLoadResult: a result ready
  std::list<DiskLoadJob> load_jobs_ GUARDED_BY(mu_);
  std::vector<DiskLoadResult> load_results_ GUARDED_BY(mu_);
  std::thread writer_;
  std::thread loader_;
};

}  // namespace radixlm
