# Project-wide compile flags: warnings, optional -Werror, optional sanitizers.
add_compile_options(-Wall -Wextra -Wno-unused-parameter)
if(RADIXLM_WERROR)
  add_compile_options(-Werror)
endif()
if(RADIXLM_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
