#include "tokenizer/unigram.h"

#include <algorithm>
#include <string>

#include "tokenizer/unicode.h"

namespace radixlm::tokenizer {
namespace {

constexpr double kUnkPenalty = 10.0;  // tokenizers' K_UNK_PENALTY

struct Node {
  double score = 0.0;  // the path's sum, in double as tokenizers sums its f64 scores
  int32_t start = -1;  // -1: no path ends here yet
  int32_t id = -1;
};

}  // namespace

UnigramEncoder::UnigramEncoder(const TokenIndex* index, const std::vector<std::string>* tokens,
                               const std::vector<double>* scores, Options options)
    : index_(index), scores_(scores), options_(options) {
  double min_score = 0.0;
  bool any = false;
  const size_t n = std::min<size_t>(tokens->size(), std::max(options_.n_pieces, 0));
  for (size_t id = 0; id < n; ++id) {
    max_token_bytes_ = std::max(max_token_bytes_, (*tokens)[id].size());
    const double s = id < scores->size() ? (*scores)[id] : 0.0;
    min_score = any ? std::min(min_score, s) : s;
    any = true;
  }
  unk_score_ = min_score - kUnkPenalty;
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    const char name[6] = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
    byte_tokens_[b] = Lookup(std::string_view(name, 6));
  }
}

void UnigramEncoder::Encode(std::string_view piece, std::vector<int32_t>* out) const {
  if (piece.empty()) return;
  const size_t n = piece.size();
  std::vector<Node> best(n + 1);
  best[0].start = 0;
  for (size_t start = 0; start < n;) {
    const size_t char_len =
        std::min(Utf8LenFromLead(static_cast<uint8_t>(piece[start])), n - start);
    const double base = best[start].score;
    bool has_single = false;
    const size_t longest = std::min(max_token_bytes_, n - start);
    for (size_t len = 1; len <= longest; ++len) {
      const int32_t id = Lookup(piece.substr(start, len));
      if (id < 0) continue;
      const double score = base + (*scores_)[id];
      Node& target = best[start + len];
      if (target.start < 0 || score > target.score) {
        target = Node{score, static_cast<int32_t>(start), id};
      }
      if (len == char_len) has_single = true;
    }
    if (!has_single) {
      Node& target = best[start + char_len];
      const double score = base + unk_score_;
      if (target.start < 0 || score > target.score) {
        target = Node{score, static_cast<int32_t>(start), options_.unk_id};
      }
    }
    start += char_len;
  }

  // Back from the end: the pieces of the best path, adjacent unknowns fused.
  std::vector<std::string_view> pieces;
  std::vector<bool> unknown;
  for (size_t end = n; end > 0;) {
    const Node& node = best[end];
    const auto start = static_cast<size_t>(node.start);
    const bool unk = options_.unk_id >= 0 && node.id == options_.unk_id;
    if (unk && !pieces.empty() && unknown.back()) {
      const std::string_view prev = pieces.back();  // later in the text
      pieces.back() = std::string_view(piece.data() + start,
                                       prev.data() + prev.size() - (piece.data() + start));
    } else {
      pieces.push_back(piece.substr(start, end - start));
      unknown.push_back(unk);
    }
    end = start;
  }
  for (size_t i = pieces.size(); i-- > 0;) {
    const std::string_view p = pieces[i];
    const int32_t id = Lookup(p);
    if (id >= 0) {
      out->push_back(id);
      continue;
    }
    if (options_.byte_fallback && std::all_of(p.begin(), p.end(), [this](char c) {
          return byte_tokens_[static_cast<uint8_t>(c)] >= 0;
        })) {
      for (char c : p) out->push_back(byte_tokens_[static_cast<uint8_t>(c)]);
      continue;
    }
    if (options_.unk_id >= 0) out->push_back(options_.unk_id);
  }
}

}  // namespace radixlm::tokenizer
