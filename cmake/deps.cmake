# System dependencies (Debian packages, installed by scripts/setup.sh).
find_package(Threads REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
# ICU (Debian's libicu-dev): Unicode normal forms for tokenizer.json's NFC / NFKC normalisers.
pkg_check_modules(ICU REQUIRED IMPORTED_TARGET icu-uc)
# Optional: UCX (Debian's libucx-dev) for prefill/decode KV transfer (src/disagg/).
pkg_check_modules(UCX QUIET IMPORTED_TARGET GLOBAL ucx)
if(RADIXLM_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
endif()
