#include "cache/disk_store.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

namespace radixlm {
namespace {

namespace fs = std::filesystem;
constexpr const char* kSuffix = ".kvb";

std::string ModelPrefix(uint64_t model_id) {
  char buf[20];
  std::snprintf(buf, sizeof(buf), "%016llx-", static_cast<unsigned long long>(model_id));
  return buf;
}

bool ParseHex64(std::string_view s, uint64_t* out) {
  if (s.size() != 16) return false;
  uint64_t v = 0;
  for (const char c : s) {
    int d = 0;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else {
      return false;
    }
    v = v << 4 | static_cast<uint64_t>(d);
  }
  *out = v;
  return true;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

StatusOr<std::unique_ptr<DiskStore>> DiskStore::Open(DiskStoreConfig config) {
  if (config.capacity_bytes == 0) return InvalidArgument("the disk KV store needs a size cap > 0");
  if (config.dir.empty()) return InvalidArgument("the disk KV store needs a directory");
  std::error_code ec;
  fs::create_directories(config.dir, ec);
  if (ec) {
    return IoError("cannot create the KV storage directory " + config.dir + ": " + ec.message());
  }
  std::unique_ptr<DiskStore> store(new DiskStore(std::move(config)));
  RADIXLM_RETURN_IF_ERROR(store->ScanDirectory());
  store->writer_ = std::thread([s = store.get()] { s->WriterLoop(); });
  store->loader_ = std::thread([s = store.get()] { s->LoaderLoop(); });
  return store;
}

DiskStore::DiskStore(DiskStoreConfig config)
    : config_(std::move(config)), io_(config_.io != nullptr ? config_.io : &PosixBlockFileIo()) {}

std::chrono::steady_clock::time_point DiskStore::Now() const {
  return config_.clock ? config_.clock() : std::chrono::steady_clock::now();
}

bool DiskStore::WritesPaused() const { return Now() < writes_paused_until_; }

DiskStore::~DiskStore() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  load_cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  if (loader_.joinable()) loader_.join();
}

std::string DiskStore::BlockPath(const BlockKey& key) const {
  return (fs::path(config_.dir) / (ModelPrefix(config_.model_id) + key.Hex() + kSuffix)).string();
}

Status DiskStore::ScanDirectory() {
  const std::string prefix = ModelPrefix(config_.model_id);
  struct Found {
    fs::file_time_type mtime;
    BlockKey key;
    uint64_t bytes;
  };
  std::vector<Found> found;
  std::error_code ec;
  for (fs::directory_iterator it(config_.dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code e2;
    if (name.rfind(".tmp-" + prefix, 0) == 0) {
      fs::remove(it->path(), e2);  // an interrupted write
      continue;
    }
    const size_t want = prefix.size() + 32 + std::strlen(kSuffix);
    if (name.size() != want || name.rfind(prefix, 0) != 0 ||
        name.compare(want - 4, 4, kSuffix) != 0) {
      continue;
    }
    Found f;
    const std::string_view hex(name.data() + prefix.size(), 32);
    if (!ParseHex64(hex.substr(0, 16), &f.key.hi) || !ParseHex64(hex.substr(16), &f.key.lo)) {
      continue;
    }
    f.bytes = it->file_size(e2);
    f.mtime = it->last_write_time(e2);
    if (!e2) found.push_back(f);
  }
  if (ec)
    return IoError("cannot list the KV storage directory " + config_.dir + ": " + ec.message());
  std::sort(found.begin(), found.end(),
            [](const Found& a, const Found& b) { return a.mtime < b.mtime; });
  MutexLock lock(&mu_);
  for (const Found& f : found) {
    index_[f.key] = Entry{.bytes = f.bytes, .seq = next_seq_};
    by_age_[next_seq_++] = f.key;
    bytes_on_disk_ += f.bytes;
  }
  MakeRoom(0);  // a smaller cap than last time
  return Status::Ok();
}

bool DiskStore::Contains(const BlockKey& key) const {
  MutexLock lock(&mu_);
  return index_.contains(key) || queued_.contains(key);
}

bool DiskStore::AcceptsWrite(const BlockKey& key) {
  MutexLock lock(&mu_);
  if (index_.contains(key) || queued_.contains(key)) return false;
  if (WritesPaused()) {
    ++stats_.writes_dropped;
    return false;
  }
  return true;
}

bool DiskStore::EnqueueWrite(const BlockKey& key, std::vector<int32_t> tokens,
                             std::vector<uint8_t> payload) {
  {
    MutexLock lock(&mu_);
    if (index_.contains(key) || queued_.contains(key)) return false;
    const uint64_t bytes = payload.size() + tokens.size() * sizeof(int32_t);
    if (WritesPaused() || queued_bytes_ + bytes > config_.max_queued_bytes) {
      ++stats_.writes_dropped;
      return false;
    }
    queue_.push_back(PendingWrite{key, std::move(tokens), std::move(payload)});
    queued_[key] = &queue_.back();
    queued_bytes_ += bytes;
  }
  cv_.notify_one();
  return true;
}

void DiskStore::WriterLoop() {
  for (;;) {
    const PendingWrite* w = nullptr;
    bool paused = false;
    {
      MutexLock lock(&mu_);
      while (queue_.empty() && !stopping_) lock.Wait(cv_);
      if (queue_.empty()) return;  // stopping, and every queued write was attempted
      w = &queue_.front();         // stays in the queue (Load may read it) until written
      paused = WritesPaused();     // a write failed meanwhile: queued blocks are dropped
      writing_ = !paused;
    }
    const auto start = std::chrono::steady_clock::now();
    uint64_t file_bytes = 0;
    const Status status = paused ? Status::Ok() : WriteFile(*w, &file_bytes);
    const double seconds = SecondsSince(start);
    {
      MutexLock lock(&mu_);
      if (paused) {
        ++stats_.writes_dropped;
      } else if (status.ok() && discard_written_) {
        std::error_code ec;
        fs::remove(BlockPath(w->key), ec);
      } else if (status.ok()) {
        index_[w->key] = Entry{.bytes = file_bytes, .seq = next_seq_};
        by_age_[next_seq_++] = w->key;
        bytes_on_disk_ += file_bytes;
        ++stats_.blocks_stored;
        stats_.bytes_stored += static_cast<int64_t>(file_bytes);
        stats_.store_seconds += seconds;
        next_pause_ = kFirstWritePause;
      } else {
        ++stats_.write_failures;
        writes_paused_until_ = Now() + next_pause_;
        const auto pause_s = std::chrono::duration_cast<std::chrono::seconds>(next_pause_).count();
        next_pause_ =
            std::min<std::chrono::steady_clock::duration>(2 * next_pause_, kMaxWritePause);
        // Warned before the block leaves the queue, so Flush returns after the warning.
        Warn("cannot write KV block " + BlockPath(w->key) + ": " + status.message() +
             "; disk writes paused for " + std::to_string(pause_s) +
             " s (blocks offered meanwhile are dropped)");
      }
      queued_bytes_ -= w->payload.size() + w->tokens.size() * sizeof(int32_t);
      queued_.erase(w->key);
      queue_.pop_front();
      writing_ = false;
      discard_written_ = false;
      if (queue_.empty()) drained_.notify_all();
    }
  }
}

Status DiskStore::WriteFile(const PendingWrite& w, uint64_t* file_bytes) {
  const std::vector<uint8_t> bytes = EncodeKvBlock(config_.model_id, w.key, w.tokens, w.payload);
  if (bytes.size() > config_.capacity_bytes) {
    return InvalidArgument("the block's " + std::to_string(bytes.size()) +
                           " bytes exceed --hicache-storage-size");
  }
  {
    MutexLock lock(&mu_);
    MakeRoom(bytes.size());
  }
  const std::string path = BlockPath(w.key);
  const std::string tmp =
      (fs::path(config_.dir) / (".tmp-" + ModelPrefix(config_.model_id) + w.key.Hex())).string();
  StatusOr<std::unique_ptr<WritableBlockFile>> file = io_->Create(tmp);
  if (!file.ok() && io_->CreateDirectories(config_.dir).ok()) {
    file = io_->Create(tmp);  // the directory was removed: made again
  }
  if (!file.ok()) return file.status();
  Status status = WriteAll(**file, bytes);
  const Status closed = (*file)->Close();
  if (status.ok()) status = closed;
  if (status.ok()) status = io_->Rename(tmp, path);
  if (!status.ok()) {
    io_->Remove(tmp);  // never a partial block under any name a load reads
    return status;
  }
  *file_bytes = bytes.size();
  return Status::Ok();
}

void DiskStore::MakeRoom(uint64_t incoming) {
  while (!by_age_.empty() && bytes_on_disk_ + incoming > config_.capacity_bytes) {
    const BlockKey key = by_age_.begin()->second;
    std::error_code ec;
    fs::remove(BlockPath(key), ec);
    Forget(key);
    ++stats_.files_evicted;
  }
}

void DiskStore::Forget(const BlockKey& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return;
  by_age_.erase(it->second.seq);
  bytes_on_disk_ -= it->second.bytes;
  index_.erase(it);
}

void DiskStore::Touch(const BlockKey& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return;
  by_age_.erase(it->second.seq);
  it->second.seq = next_seq_;
  by_age_[next_seq_++] = key;
}

Status DiskStore::Load(const BlockKey& key, std::span<const int32_t> tokens,
                       std::span<uint8_t> payload) {
  const auto start = std::chrono::steady_clock::now();
  {
    MutexLock lock(&mu_);
    auto q = queued_.find(key);
    if (q != queued_.end()) {
      const PendingWrite& w = *q->second;
      if (w.payload.size() == payload.size() &&
          std::equal(tokens.begin(), tokens.end(), w.tokens.begin(), w.tokens.end())) {
        std::copy(w.payload.begin(), w.payload.end(), payload.begin());
        ++stats_.blocks_loaded;
        stats_.bytes_loaded += static_cast<int64_t>(payload.size());
        return Status::Ok();
      }
    }
  }
  const std::string path = BlockPath(key);
  Status status = Status::Ok();
  std::vector<uint8_t> file;
  if (std::FILE* f = std::fopen(path.c_str(), "rb"); f == nullptr) {
    status = IoError(std::string("cannot open: ") + std::strerror(errno));
  } else {
    std::error_code ec;
    const uintmax_t size = fs::file_size(path, ec);
    // The block's exact size is known: a file of any other size is refused before it is read
    // (a stray or corrupt file never makes the loader allocate its size).
    const uintmax_t expected = kKvBlockHeaderBytes + sizeof(int32_t) * tokens.size() +
                               payload.size() + sizeof(uint32_t);
    if (ec) {
      status = IoError("cannot size the file");
    } else if (size != expected) {
      status = IoError("file size " + std::to_string(size) + " bytes, expected " +
                       std::to_string(expected));
    } else {
      file.resize(size);
      if (std::fread(file.data(), 1, file.size(), f) != file.size()) {
        status = IoError("short read");
      }
    }
    std::fclose(f);
  }
  if (status.ok()) {
    StatusOr<std::span<const uint8_t>> decoded =
        DecodeKvBlock(file, config_.model_id, key, tokens, payload.size());
    if (decoded.ok()) {
      std::copy(decoded->begin(), decoded->end(), payload.begin());
    } else {
      status = decoded.status();
    }
  }
  MutexLock lock(&mu_);
  if (!status.ok() && !index_.contains(key)) {
    // Evicted for the size cap (counted in files_evicted) or cleared before or while it was
    // read: a miss like any other block not on disk, not a failure.
    return NotFound("KV block " + path + " was evicted before it was read");
  }
  if (!status.ok()) {
    Warn("KV block " + path + " is unusable (" + status.message() + "); recomputing");
    std::error_code ec;
    fs::remove(path, ec);
    Forget(key);
    ++stats_.load_failures;
    return status;
  }
  Touch(key);
  ++stats_.blocks_loaded;
  stats_.bytes_loaded += static_cast<int64_t>(file.size());
  stats_.load_seconds += SecondsSince(start);
  return Status::Ok();
}

void DiskStore::SubmitLoad(DiskLoadJob job) {
  {
    MutexLock lock(&mu_);
    load_jobs_.push_back(std::move(job));
  }
  load_cv_.notify_one();
}

void DiskStore::LoaderLoop() {
  for (;;) {
    DiskLoadJob job;
    {
      MutexLock lock(&mu_);
      while (load_jobs_.empty() && !stopping_) lock.Wait(load_cv_);
      if (stopping_) return;  // unfinished jobs are dropped with the store
      job = std::move(load_jobs_.front());
      load_jobs_.pop_front();
    }
    DiskLoadResult result;
    result.ticket = job.ticket;
    const size_t n = job.keys.size();
    const size_t block_tokens = n > 0 ? job.tokens.size() / n : 0;
    result.bytes.resize(n * job.block_bytes);
    const std::span<const int32_t> tokens(job.tokens);
    for (size_t i = 0; i < n; ++i) {
      const std::span<uint8_t> out =
          std::span<uint8_t>(result.bytes).subspan(i * job.block_bytes, job.block_bytes);
      if (!Load(job.keys[i], tokens.subspan(i * block_tokens, block_tokens), out).ok()) break;
      ++result.blocks_loaded;
    }
    result.bytes.resize(static_cast<size_t>(result.blocks_loaded) * job.block_bytes);
    if (job.state_bytes > 0 && n > 0 && static_cast<size_t>(result.blocks_loaded) == n) {
      result.state.resize(job.state_bytes);
      if (!Load(job.state_key, tokens.subspan((n - 1) * block_tokens, block_tokens), result.state)
               .ok()) {
        result.state.clear();
      }
    }
    {
      MutexLock lock(&mu_);
      load_results_.push_back(std::move(result));
    }
    loaded_cv_.notify_all();
  }
}

void DiskStore::TakeLoadResults(std::vector<DiskLoadResult>* out) {
  MutexLock lock(&mu_);
  for (DiskLoadResult& r : load_results_) out->push_back(std::move(r));
  load_results_.clear();
}

bool DiskStore::WaitForLoadResult(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&mu_);
  while (load_results_.empty()) {
    if (!lock.WaitUntil(loaded_cv_, deadline)) break;
  }
  return !load_results_.empty();
}

int64_t DiskStore::Clear() {
  MutexLock lock(&mu_);
  int64_t deleted = 0;
  auto it = queue_.begin();
  if (writing_ && it != queue_.end()) {  // being written outside the lock: deleted after
    discard_written_ = true;
    ++deleted;
    ++it;
  }
  while (it != queue_.end()) {
    queued_bytes_ -= it->payload.size() + it->tokens.size() * sizeof(int32_t);
    queued_.erase(it->key);
    it = queue_.erase(it);
    ++deleted;
  }
  if (queue_.empty()) drained_.notify_all();
  for (const auto& [key, entry] : index_) {
    std::error_code ec;
    fs::remove(BlockPath(key), ec);
  }
  deleted += static_cast<int64_t>(index_.size());
  index_.clear();
  by_age_.clear();
  bytes_on_disk_ = 0;
  writes_paused_until_ = {};
  next_pause_ = kFirstWritePause;
  return deleted;
}

void DiskStore::Flush() {
  MutexLock lock(&mu_);
  while (!queue_.empty()) lock.Wait(drained_);
}

DiskStoreStats DiskStore::stats() const {
  MutexLock lock(&mu_);
  DiskStoreStats s = stats_;
  s.blocks = static_cast<int64_t>(index_.size() + queued_.size());
  s.bytes_on_disk = static_cast<int64_t>(bytes_on_disk_);
  return s;
}

void DiskStore::Warn(const std::string& message) const {
  if (config_.warn) {
    config_.warn(message);
  } else {
    std::fprintf(stderr, "radixlm: warning: %s\n", message.c_str());
    std::fflush(stderr);
  }
}

}  // namespace radixlm
