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
  add_compile_options(-Wno-maybe-uninitialized)
  add_link_options(-fsanitize=address,undefined)
endif()
