// The process's own memory use, as the kernel reports it.
#pragma once

#include <cstdint>

namespace radixlm {

// Resident set size of this process in bytes (/proc/self/statm's resident pages × the page
// size): file-backed pages mapped in (a GGUF's) and anonymous memory alike. 0 where it cannot
// be read (not Linux). Safe from any thread; a few microseconds (one small file read).
int64_t ResidentSetBytes();

}  // namespace radixlm
