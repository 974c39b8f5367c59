#include "util/process_memory.h"

#include <unistd.h>

#include <cstdio>

namespace radixlm {

int64_t ResidentSetBytes() {
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return 0;
  long long size_pages = 0, resident_pages = 0;
  const int fields = std::fscanf(statm, "%lld %lld", &size_pages, &resident_pages);
  std::fclose(statm);
  if (fields != 2) return 0;
  return static_cast<int64_t>(resident_pages) * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace radixlm
