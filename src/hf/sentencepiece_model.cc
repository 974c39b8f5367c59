#include "hf/sentencepiece_model.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <unordered_set>

namespace radixlm::hf {
namespace {

// Protobuf wire types.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kFixed64 = 1;
constexpr uint32_t kLengthDelimited = 2;
constexpr uint32_t kFixed32 = 5;

// One message's fields in order. Each Next() reads a tag and its value; errors name `what`
// (the message) and the field number.
class WireReader {
 public:
  WireReader(std::string_view data, std::string what) : data_(data), what_(std::move(what)) {}

  bool done() const { return pos_ >= data_.size(); }

  // The next field: its number and wire type, and its value in `varint` (kVarint, kFixed32,
  // kFixed64: the raw bits) or `bytes` (kLengthDelimited).
  Status Next(uint32_t* field, uint32_t* wire, uint64_t* varint, std::string_view* bytes) {
    uint64_t tag = 0;
    RADIXLM_RETURN_IF_ERROR(ReadVarint(&tag, "a field tag"));
    *field = static_cast<uint32_t>(tag >> 3);
    *wire = static_cast<uint32_t>(tag & 7);
    if (*field == 0) return Error("field number 0");
    const std::string name = "field " + std::to_string(*field);
    switch (*wire) {
      case kVarint:
        return ReadVarint(varint, name);
      case kFixed64:
      case kFixed32: {
        const size_t n = *wire == kFixed64 ? 8 : 4;
        if (data_.size() - pos_ < n) return Error(name + " is truncated");
        *varint = 0;
        for (size_t i = 0; i < n; ++i) {
          *varint |= uint64_t{static_cast<uint8_t>(data_[pos_ + i])} << (8 * i);
        }
        pos_ += n;
        return Status::Ok();
      }
      case kLengthDelimited: {
        uint64_t len = 0;
        RADIXLM_RETURN_IF_ERROR(ReadVarint(&len, name + "'s length"));
        if (len > data_.size() - pos_) return Error(name + " runs past the end of its message");
        *bytes = data_.substr(pos_, len);
        pos_ += len;
        return Status::Ok();
      }
      default:
        return Error(name + " has wire type " + std::to_string(*wire) +
                     " (groups and unknown types are not read)");
    }
  }

  Status Error(const std::string& msg) const {
    return InvalidArgument(what_ + ": " + msg + " (byte " + std::to_string(pos_) + ")");
  }

 private:
  Status ReadVarint(uint64_t* out, const std::string& name) {
    *out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return Error(name + " is a truncated varint");
      const auto b = static_cast<uint8_t>(data_[pos_++]);
      *out |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) return Status::Ok();
    }
    return Error(name + " is a varint longer than 10 bytes");
  }

  std::string_view data_;
  std::string what_;
  size_t pos_ = 0;
};

float FloatBits(uint64_t bits) {
  const auto u = static_cast<uint32_t>(bits);
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// An int32 field: protobuf writes negative values as 10-byte varints of their 64-bit form.
int32_t Int32(uint64_t v) { return static_cast<int32_t>(static_cast<int64_t>(v)); }

Status ParsePiece(std::string_view bytes, const std::string& what, SentencePieceModel::Piece* p) {
  WireReader r(bytes, what);
  bool has_text = false;
  while (!r.done()) {
    uint32_t field = 0, wire = 0;
    uint64_t v = 0;
    std::string_view b;
    RADIXLM_RETURN_IF_ERROR(r.Next(&field, &wire, &v, &b));
    if (field == 1 && wire == kLengthDelimited) {
      p->text = std::string(b);
      has_text = true;
    } else if (field == 2 && wire == kFixed32) {
      p->score = FloatBits(v);
    } else if (field == 3 && wire == kVarint) {
      if (v < 1 || v > 6) return r.Error("type " + std::to_string(v) + " is not 1..6");
      p->type = static_cast<int32_t>(v);
    } else if (field <= 3) {
      return r.Error("field " + std::to_string(field) + " has the wrong wire type");
    }
  }
  if (!has_text || p->text.empty()) return r.Error("no piece text");
  return Status::Ok();
}

Status ParseTrainerSpec(std::string_view bytes, const std::string& what, SentencePieceModel* m) {
  WireReader r(bytes, what);
  while (!r.done()) {
    uint32_t field = 0, wire = 0;
    uint64_t v = 0;
    std::string_view b;
    RADIXLM_RETURN_IF_ERROR(r.Next(&field, &wire, &v, &b));
    if (wire != kVarint) continue;
    switch (field) {
      case 3:
        m->model_type = Int32(v);
        break;
      case 35:
        m->byte_fallback = v != 0;
        break;
      case 40:
        m->unk_id = Int32(v);
        break;
      case 41:
        m->bos_id = Int32(v);
        break;
      case 42:
        m->eos_id = Int32(v);
        break;
      case 43:
        m->pad_id = Int32(v);
        break;
      default:
        break;
    }
  }
  return Status::Ok();
}

Status ParseNormalizerSpec(std::string_view bytes, const std::string& what, SentencePieceModel* m) {
  WireReader r(bytes, what);
  while (!r.done()) {
    uint32_t field = 0, wire = 0;
    uint64_t v = 0;
    std::string_view b;
    RADIXLM_RETURN_IF_ERROR(r.Next(&field, &wire, &v, &b));
    if (field == 1 && wire == kLengthDelimited) m->normalizer_name = std::string(b);
    if (field == 2 && wire == kLengthDelimited) m->has_precompiled_charsmap = !b.empty();
    if (field == 3 && wire == kVarint) m->add_dummy_prefix = v != 0;
    if (field == 4 && wire == kVarint) m->remove_extra_whitespaces = v != 0;
    if (field == 5 && wire == kVarint) m->escape_whitespaces = v != 0;
  }
  return Status::Ok();
}

}  // namespace

StatusOr<SentencePieceModel> ParseSentencePieceModel(std::string_view bytes,
                                                     const std::string& path) {
  SentencePieceModel m;
  WireReader r(bytes, path);
  std::unordered_set<std::string_view> seen;
  while (!r.done()) {
    uint32_t field = 0, wire = 0;
    uint64_t v = 0;
    std::string_view b;
    RADIXLM_RETURN_IF_ERROR(r.Next(&field, &wire, &v, &b));
    if (field > 3) continue;  // self_test_data, denormalizer_spec, extensions
    if (wire != kLengthDelimited) {
      return r.Error("field " + std::to_string(field) + " is not a message");
    }
    if (field == 1) {
      const std::string what = path + ": piece " + std::to_string(m.pieces.size());
      SentencePieceModel::Piece p;
      RADIXLM_RETURN_IF_ERROR(ParsePiece(b, what, &p));
      m.pieces.push_back(std::move(p));
    } else if (field == 2) {
      RADIXLM_RETURN_IF_ERROR(ParseTrainerSpec(b, path + ": trainer_spec", &m));
    } else {
      RADIXLM_RETURN_IF_ERROR(ParseNormalizerSpec(b, path + ": normalizer_spec", &m));
    }
  }
  if (m.pieces.empty()) return InvalidArgument(path + ": no pieces (not a SentencePiece model?)");
  for (size_t i = 0; i < m.pieces.size(); ++i) {
    if (!seen.insert(m.pieces[i].text).second) {
      return InvalidArgument(path + ": piece " + std::to_string(i) + " '" + m.pieces[i].text +
                             "' appears twice");
    }
  }
  return m;
}

StatusOr<SentencePieceModel> ReadSentencePieceModel(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  const std::string bytes = text.str();
  return ParseSentencePieceModel(bytes, path);
}

}  // namespace radixlm::hf
