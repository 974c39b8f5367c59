#include "model/load_progress.h"

#include <cstdio>

namespace radixlm::model {

bool LoadProgressThrottle::ShouldReport(const LoadProgress& p) {
  if (p.done) return reported_;
  if (p.elapsed_s < options_.quiet_s) return false;
  const double step =
      p.bytes_total > 0 ? static_cast<double>(p.bytes_done - last_bytes_) / p.bytes_total : 1.0;
  if (reported_ && (p.elapsed_s - last_s_ < options_.interval_s || step < options_.fraction)) {
    return false;
  }
  reported_ = true;
  last_s_ = p.elapsed_s;
  last_bytes_ = p.bytes_done;
  return true;
}

std::string FormatLoadProgress(const LoadProgress& p) {
  constexpr double kMiB = 1 << 20;
  char buf[160];
  if (p.done) {
    std::snprintf(buf, sizeof(buf), "loaded weights: %lld layers, %.1f MiB in %.1f s",
                  static_cast<long long>(p.layers_total), p.bytes_total / kMiB, p.elapsed_s);
  } else {
    const double percent = p.bytes_total > 0 ? 100.0 * p.bytes_done / p.bytes_total : 100.0;
    std::snprintf(buf, sizeof(buf),
                  "loading weights: %lld/%lld layers, %.1f/%.1f MiB (%.0f%%), %.1f s",
                  static_cast<long long>(p.layers_done), static_cast<long long>(p.layers_total),
                  p.bytes_done / kMiB, p.bytes_total / kMiB, percent, p.elapsed_s);
  }
  return buf;
}

}  // namespace radixlm::model
