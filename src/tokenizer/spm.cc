#include "tokenizer/spm.h"

#include <algorithm>
#include <queue>

#include "tokenizer/unicode.h"

namespace radixlm::tokenizer {
namespace {

struct Symbol {
  int32_t prev;
  int32_t next;
  uint32_t offset;  // into the text
  uint32_t size;    // bytes; 0 once merged into its left neighbour
};

struct Bigram {
  float score;
  int32_t left;
  int32_t right;
  uint32_t size;  // left.size + right.size when queued; stale if that changed
};

// Highest score first; among equal scores the leftmost pair.
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

void SpmEncoder::Encode(std::string_view text, std::vector<int32_t>* out) const {
  if (text.empty()) return;
  std::vector<Symbol> symbols;
  symbols.reserve(text.size());
  for (size_t offset = 0; offset < text.size();) {
    const size_t len =
        std::min(Utf8LenFromLead(static_cast<uint8_t>(text[offset])), text.size() - offset);
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back(Symbol{index - 1, offset + len == text.size() ? -1 : index + 1,
                             static_cast<uint32_t>(offset), static_cast<uint32_t>(len)});
    offset += len;
  }

  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const uint32_t size = symbols[left].size + symbols[right].size;
    const int32_t token = index_->Find(text.substr(symbols[left].offset, size));
    if (token < 0) return;
    queue.push(Bigram{(*scores_)[token], left, right, size});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(symbols.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const Bigram bigram = queue.top();
    queue.pop();
    Symbol& left = symbols[bigram.left];
    Symbol& right = symbols[bigram.right];
    if (left.size == 0 || right.size == 0 || left.size + right.size != bigram.size) continue;
    left.size += right.size;
    right.size = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = bigram.left;
    try_add(left.prev, bigram.left);
    try_add(bigram.left, left.next);
  }

  for (int32_t i = 0; i != -1; i = symbols[i].next) {
    const Symbol& s = symbols[i];
    const std::string_view piece = text.substr(s.offset, s.size);
    const int32_t token = index_->Find(piece);
    if (token >= 0) {
      out->push_back(token);
      continue;
    }
    for (char c : piece) {
      const int32_t byte_token = byte_tokens_[static_cast<uint8_t>(c)];
      if (byte_token >= 0) out->push_back(byte_token);
    }
  }
}

}  // namespace radixlm::tokenizer
