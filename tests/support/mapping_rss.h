// Resident bytes of the memory mapping that holds an address, from /proc/self/smaps: for tests
// of what a mapped file keeps resident.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace radixlm::testing {

// The Rss of the mapping holding `address`; -1 if unknown (no /proc, or no such mapping).
inline int64_t MappingRssBytes(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto a = reinterpret_cast<uintptr_t>(address);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = a >= lo && a < hi;
    } else if (inside && line.rfind("Rss:", 0) == 0) {
      std::istringstream field(line.substr(4));
      int64_t kib = 0;
      field >> kib;
      return kib * 1024;
    }
  }
  return -1;
}

}  // namespace radixlm::testing
