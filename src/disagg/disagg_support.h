// What this build provides of prefill/decode disaggregation, for a clear start-up error.
#pragma once

#include <string>

#include "util/status.h"

namespace radixlm::disagg {

// True when the UCX transport is compiled in (Debian's libucx-dev found at configure time).
bool UcxBuilt();

// OK for "ucx" when UCX is built; else Unimplemented naming what is missing (the backend, or
// UCX itself and the package that provides it).
Status CheckTransferBackend(const std::string& backend);

}  // namespace radixlm::disagg
