// A SentencePiece tokenizer.model (a serialized sentencepiece.ModelProto) read by a small
// protobuf wire-format reader: the fields llama.cpp's converter and radixlm's SPM tokenizer
// need, every other field skipped. Defaults are the .proto's (model_type UNIGRAM,
// add_dummy_prefix / remove_extra_whitespaces / escape_whitespaces true, unk 0, bos 1, eos 2,
// pad -1). A malformed file is InvalidArgument naming `path` and what is wrong (a truncated
// varint or field, an unknown wire type, a piece without text or with an unknown type, a
// piece twice, no pieces).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace radixlm::hf {

struct SentencePieceModel {
  // ModelProto.SentencePiece.Type: NORMAL 1, UNKNOWN 2, CONTROL 3, USER_DEFINED 4, UNUSED 5,
  // BYTE 6 (the same numbers as llama.cpp's token types).
  struct Piece {
    std::string text;
    float score = 0.0f;
    int32_t type = 1;
  };
  std::vector<Piece> pieces;  // by id
  // TrainerSpec.
  int32_t model_type = 1;  // UNIGRAM 1, BPE 2, WORD 3, CHAR 4
  bool byte_fallback = false;
  int32_t unk_id = 0, bos_id = 1, eos_id = 2, pad_id = -1;
  // NormalizerSpec.
  std::string normalizer_name;  // "identity", "nmt_nfkc", ... ("" when absent)
  bool has_precompiled_charsmap = false;
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  bool escape_whitespaces = true;
};

StatusOr<SentencePieceModel> ParseSentencePieceModel(std::string_view bytes,
                                                     const std::string& path);

// Reads and parses the file; NotFound when it cannot be read.
StatusOr<SentencePieceModel> ReadSentencePieceModel(const std::string& path);

}  // namespace radixlm::hf
