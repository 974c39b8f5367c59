# Unity builds (RADIXLM_UNITY, on by default): each target's sources are compiled in batches of
# 16 per translation unit, so the heavy headers (nlohmann/json, GoogleTest, the standard
# library) are parsed once per batch instead of once per file. A cold Release build of
# everything took 490 s instead of 835 s on a 2-core Xeon. Files listed below define file-local
# helpers whose names clash with a neighbour's (or name a namespace that shadows one); they are
# compiled on their own. A clash shows up as a "redefinition" error in a
# Unity/unity_N_cxx.cxx object: add the file here.
# Files with their own compile options (the per-ISA kernels) are never batched (CMake's rule).
if(NOT RADIXLM_UNITY)
  return()
endif()
set(radixlm_unity_alone
  src/chat/filters_seq.cc
  src/chat/jinja_tests.cc
  src/chat/lexer.cc
  src/disagg/kv_receiver.cc
  src/gguf/gguf_writer.cc
  src/grammar/regex_parser.cc
  src/kernels/fp16.cc
  src/kernels/quant.cc
  src/sampling/sampler.cc
  src/tokenizer/bpe.cc
  src/tokenizer/spm.cc
  src/tokenizer/tokenizer.cc
  tests/cache/swa_cache_test.cc
  tests/chat/text_test.cc
  tests/engine/engine_pause_test.cc
  tests/engine/engine_session_test.cc
  tests/engine/session_table_test.cc
  tests/frontend/frontend_real_model_test.cc
  tests/kernels/packed_gemm_test.cc
  tests/model/real_model_test.cc
  tests/sampling/sampler_test.cc
  tests/sampling/sampling_params_test.cc
  tests/scheduler/scheduler_hicache_test.cc
  tests/scheduler/scheduler_swa_test.cc
  tests/spec/topk_tree_builder_test.cc
)
foreach(file ${radixlm_unity_alone})
  if(file MATCHES "^tests/" AND NOT RADIXLM_BUILD_TESTS)
    continue()  # folder not added
  endif()
  get_filename_component(dir ${CMAKE_SOURCE_DIR}/${file} DIRECTORY)
  if(EXISTS ${CMAKE_SOURCE_DIR}/${file} AND EXISTS ${dir}/CMakeLists.txt)
    set_source_files_properties(${CMAKE_SOURCE_DIR}/${file} DIRECTORY ${dir}
      PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  endif()
endforeach()
