#include "chat/harmony.h"

#include <algorithm>
#include <cctype>

namespace radixlm::chat {
namespace {

constexpr std::string_view kStart = "<|start|>";
constexpr std::string_view kChannel = "<|channel|>";
constexpr std::string_view kMessage = "<|message|>";
constexpr std::string_view kConstrain = "<|constrain|>";
constexpr std::string_view kEnd = "<|end|>";
constexpr std::string_view kCall = "<|call|>";
constexpr std::string_view kReturn = "<|return|>";
constexpr std::string_view kMarkers[] = {kStart, kChannel, kMessage, kConstrain,
                                         kEnd,   kCall,    kReturn};
constexpr std::string_view kTo = "to=";
// A header longer than this (or one with a newline) is text, not a header still arriving.
constexpr size_t kMaxHeader = 256;

struct Found {
  size_t at = std::string_view::npos;
  std::string_view marker;
};

// The first marker at or after `pos`.
Found FindMarker(std::string_view text, size_t pos) {
  while ((pos = text.find("<|", pos)) != std::string_view::npos) {
    for (std::string_view m : kMarkers) {
      if (text.substr(pos).starts_with(m)) return {pos, m};
    }
    ++pos;
  }
  return {};
}

// Where a message may open at or after `pos` (<|start|> or <|channel|>).
size_t FindOpening(std::string_view text, size_t pos) {
  for (Found f = FindMarker(text, pos); f.at != std::string_view::npos;
       f = FindMarker(text, f.at + 1)) {
    if (f.marker == kStart || f.marker == kChannel) return f.at;
  }
  return std::string_view::npos;
}

// Length of the longest suffix of `text` that is a proper prefix of a marker.
size_t HeldMarkerPrefix(std::string_view text) {
  size_t held = 0;
  for (std::string_view m : kMarkers) {
    for (size_t n = std::min(text.size(), m.size() - 1); n > held; --n) {
      if (text.substr(text.size() - n) == m.substr(0, n)) {
        held = n;
        break;
      }
    }
  }
  return held;
}

std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t j = i;
    while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
    if (j > i) words.push_back(text.substr(i, j - i));
    i = j;
  }
  return words;
}

bool IsRecipient(std::string_view word) { return word.starts_with(kTo) && word.size() > 3; }

bool TooLongForHeader(std::string_view text) {
  return text.size() > kMaxHeader || text.find('\n') != std::string_view::npos;
}

// The role header between <|start|> and <|channel|> ("assistant", "assistant to=functions.f"),
// or, at the output's start, the text before the first <|channel|> (" to=functions.f").
bool ReadRole(std::string_view role, bool after_start, std::string* recipient) {
  if (TooLongForHeader(role)) return false;
  const std::vector<std::string_view> words = Words(role);
  if (after_start ? words.empty() : words.size() != 1) return false;
  for (size_t k = after_start ? 1 : 0; k < words.size(); ++k) {
    if (!IsRecipient(words[k])) return false;
    *recipient = std::string(words[k].substr(kTo.size()));
  }
  return !after_start || !IsRecipient(words[0]);
}

// Whether `text`, at the output's start with no marker yet, may still grow into " to=f".
bool MayBecomeRole(std::string_view text) {
  const std::vector<std::string_view> words = Words(text);
  if (words.empty()) return true;
  if (words.size() > 1 || TooLongForHeader(text)) return false;
  const std::string_view w = words[0];
  if (!std::isspace(static_cast<unsigned char>(text.back()))) {
    return w.starts_with(kTo) || kTo.starts_with(w);
  }
  return IsRecipient(w);
}

// "CHANNEL[ to=R][ TYPE]" (a <|constrain|> marker already turned into a space).
bool ReadChannelHeader(std::string_view header, HarmonyPart* part) {
  if (TooLongForHeader(header)) return false;
  const std::vector<std::string_view> words = Words(header);
  if (words.empty() || IsRecipient(words[0])) return false;
  part->channel = std::string(words[0]);
  for (size_t k = 1; k < words.size(); ++k) {
    if (IsRecipient(words[k])) part->recipient = std::string(words[k].substr(kTo.size()));
  }
  return true;
}

enum class MessageStatus { kMessage, kPending, kNotMessage };

struct MessageScan {
  MessageStatus status = MessageStatus::kNotMessage;
  HarmonyPart part;
  size_t end = 0;                             // kMessage: one past the message
  size_t held_from = std::string_view::npos;  // kMessage, !final: the body's unsettled tail
};

MessageScan ScanMessage(std::string_view text, size_t pos, bool final) {
  MessageScan out;
  HarmonyPart& part = out.part;
  part.is_message = true;
  size_t i = pos;
  const bool after_start = text.substr(i).starts_with(kStart);
  if (after_start) i += kStart.size();
  if (after_start || !text.substr(i).starts_with(kChannel)) {
    const Found channel = FindMarker(text, i);
    if (channel.at == std::string_view::npos) {
      const std::string_view role = text.substr(i);
      const bool may_grow = after_start ? !TooLongForHeader(role) : MayBecomeRole(role);
      if (!final && may_grow) out.status = MessageStatus::kPending;
      // A marker may be arriving at the end of the role ("<|start|>assistant<|chan").
      return out;
    }
    if (channel.marker != kChannel) return out;
    if (!ReadRole(text.substr(i, channel.at - i), after_start, &part.recipient)) return out;
    i = channel.at;
  }
  // The channel header, up to <|message|>; a second <|channel|> starts it again (the stray
  // "<|channel|>commentary to=assistant" prefix).
  i += kChannel.size();
  std::string header;
  while (true) {
    const Found m = FindMarker(text, i);
    if (m.at == std::string_view::npos) {
      header.append(text.substr(i));
      if (!final && !TooLongForHeader(header)) out.status = MessageStatus::kPending;
      return out;
    }
    header.append(text.substr(i, m.at - i));
    i = m.at + m.marker.size();
    if (m.marker == kChannel) {
      header.clear();
    } else if (m.marker == kConstrain) {
      header += ' ';
    } else if (m.marker == kMessage) {
      break;
    } else {
      return out;  // the message ends before its header does
    }
  }
  if (!ReadChannelHeader(header, &part)) return out;
  // The body, up to its terminator; <|start|> or <|channel|> closes it as well (a message whose
  // end marker the model left out).
  const size_t body = i;
  out.status = MessageStatus::kMessage;
  for (Found t = FindMarker(text, i); t.at != std::string_view::npos;
       t = FindMarker(text, t.at + t.marker.size())) {
    if (t.marker == kMessage || t.marker == kConstrain) continue;
    part.body = text.substr(body, t.at - body);
    const bool terminator = t.marker == kEnd || t.marker == kCall || t.marker == kReturn;
    part.closed = terminator;
    out.end = terminator ? t.at + t.marker.size() : t.at;
    part.raw = text.substr(pos, out.end - pos);
    return out;
  }
  size_t end = text.size();
  if (!final) {
    end -= HeldMarkerPrefix(text.substr(body));
    out.held_from = end;
  }
  part.body = text.substr(body, end - body);
  part.raw = text.substr(pos, end - pos);
  out.end = end;
  return out;
}

}  // namespace

HarmonyScan ScanHarmony(std::string_view text, bool final) {
  HarmonyScan out;
  out.pending_from = text.size();
  size_t plain_from = 0;  // plain text not yet added starts here
  auto flush_plain = [&](size_t to) {
    if (to <= plain_from) return;
    HarmonyPart plain;
    plain.raw = text.substr(plain_from, to - plain_from);
    out.parts.push_back(std::move(plain));
  };
  size_t pos = 0;
  while (pos < text.size()) {
    const std::string_view rest = text.substr(pos);
    if (pos == 0 || rest.starts_with(kStart) || rest.starts_with(kChannel)) {
      MessageScan m = ScanMessage(text, pos, final);
      if (m.status == MessageStatus::kPending) {
        flush_plain(pos);
        out.pending_from = pos;
        return out;
      }
      if (m.status == MessageStatus::kMessage) {
        flush_plain(pos);
        out.parts.push_back(std::move(m.part));
        if (m.held_from != std::string_view::npos) {
          out.pending_from = m.held_from;
          return out;
        }
        pos = plain_from = m.end;
        continue;
      }
    }
    const size_t next = FindOpening(text, pos + 1);
    if (next == std::string_view::npos) break;
    pos = next;
  }
  size_t end = text.size();
  if (!final) {
    end -= HeldMarkerPrefix(text.substr(plain_from));
    out.pending_from = end;
  }
  flush_plain(end);
  return out;
}

}  // namespace radixlm::chat
