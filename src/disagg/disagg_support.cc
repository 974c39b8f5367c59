#include "disagg/disagg_support.h"

namespace radixlm::disagg {

bool UcxBuilt() {
#ifdef RADIXLM_HAVE_UCX
  return true;
#else
  return false;
#endif
}

Status CheckTransferBackend(const std::string& backend) {
  if (backend != "ucx") {
    return Unimplemented(
        "--disaggregation-transfer-backend " + backend +
        ": radixlm moves KV over UCX only (--disaggregation-transfer-backend ucx)");
  }
  if (!UcxBuilt()) {
    return Unimplemented(
        "--disaggregation-transfer-backend ucx: this radixlm was built without UCX (install "
        "Debian's libucx-dev, e.g. scripts/setup.sh, and re-run cmake)");
  }
  return Status::Ok();
}

}  // namespace radixlm::disagg
