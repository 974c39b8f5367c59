# Project-wide compile flags: warnings, optional -Werror, optional sanitizers.
add_compile_options(-Wall -Wextra -Wno-unused-parameter)
if(RADIXLM_WERROR)
  add_compile_options(-Werror)
endif()
if(RADIXLM_DCHECK)
  add_compile_definitions(RADIXLM_DCHECK_ALWAYS_ON)
endif()
if(RADIXLM_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  # GCC's flow analysis gives false maybe-uninitialized reports once the sanitizers instrument
  # the code (e.g. inside boost::optional in Beast's parser); the Release build keeps the check.
  # (clang has no such warning; scripts/test.sh builds its sanitizer tree with clang.)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-maybe-uninitialized)
  endif()
  add_link_options(-fsanitize=address,undefined)
endif()
if(RADIXLM_FUZZ)
  # libFuzzer needs clang. Every library gets the coverage instrumentation and the sanitizers;
  # only the fuzz targets (fuzz/CMakeLists.txt) link libFuzzer's main with -fsanitize=fuzzer.
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "RADIXLM_FUZZ needs clang (e.g. -DCMAKE_CXX_COMPILER=clang++-14)")
  endif()
  if(RADIXLM_SANITIZE)
    message(FATAL_ERROR "RADIXLM_FUZZ already builds with ASan and UBSan: drop RADIXLM_SANITIZE")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
