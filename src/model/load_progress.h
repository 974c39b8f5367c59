// Progress of a model's load (its weights repacked for the kernels, matrix by matrix), for a
// user waiting on a multi-GB model: LoadProgress says how far it is, LoadProgressThrottle
// decides which updates are worth a log line, FormatLoadProgress writes one.
//
// Mapping the GGUF is instant; the time goes into reading (faulting in) and repacking every
// matrix, so progress counts the bytes of matrices prepared and the layers completed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace radixlm::model {

struct LoadProgress {
  int64_t layers_done = 0;  // transformer layers whose every matrix is prepared
  int64_t layers_total = 0;
  int64_t bytes_done = 0;   // GGUF bytes of the matrices prepared so far
  int64_t bytes_total = 0;  // of every matrix the load prepares
  double elapsed_s = 0;     // since the weights began loading
  bool done = false;        // the last update: every matrix is prepared
};

// Called on the loading thread; must not throw.
using LoadProgressFn = std::function<void(const LoadProgress&)>;

// Which updates to report: nothing during the first `quiet_s` seconds (a small model that
// loads in that time reports nothing at all); after that, an update when at least
// `interval_s` seconds AND `fraction` of the bytes have passed since the last one reported
// (whichever is less often), and the final (done) update once anything was reported. Not
// thread-safe; one per load.
class LoadProgressThrottle {
 public:
  struct Options {
    double quiet_s = 2.0;
    double interval_s = 2.0;
    double fraction = 0.1;
  };
  LoadProgressThrottle() : LoadProgressThrottle(Options{}) {}
  explicit LoadProgressThrottle(const Options& options) : options_(options) {}

  bool ShouldReport(const LoadProgress& progress);

 private:
  Options options_;
  bool reported_ = false;
  double last_s_ = 0;
  int64_t last_bytes_ = 0;
};

// "loading weights: 12/18 layers, 180.3/250.1 MiB (72%), 6.1 s"; the done update:
// "loaded weights: 18 layers, 250.1 MiB in 8.4 s".
std::string FormatLoadProgress(const LoadProgress& progress);

}  // namespace radixlm::model
