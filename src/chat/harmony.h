// OpenAI's harmony format (gpt-oss): a reply is a run of messages, each
//
//   [<|start|>assistant][ to=RECIPIENT]<|channel|>CHANNEL[ to=RECIPIENT][ [<|constrain|>]TYPE]
//   <|message|>BODY then <|end|>, <|call|> or <|return|> (or the end of the text)
//
// (one line here; no newline between the parts). The generation prompt already wrote the first
// message's "<|start|>assistant", so a reply opens with "<|channel|>" or, with the recipient in
// the role header, " to=functions.f<|channel|>". `analysis` is the reasoning, `final` the
// answer, `commentary` a preamble or (with a recipient) a tool call whose body is its JSON
// arguments. <|call|> and <|return|> end the generation, so the text the parsers see usually
// stops before them. A stray "<|channel|>commentary[ to=assistant]" in front of the real
// channel (gpt-oss-20b writes one at times, llama.cpp's parser skips it) is skipped too.
//
// ScanHarmony splits text into those messages and the plain text between them. Anything that
// does not read as a message (a header without <|message|> at the end of the output, markers in
// an odd order, text before the first marker) is plain text, so a reply that is not harmony at
// all is one plain part.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace radixlm::chat {

struct HarmonyPart {
  bool is_message = false;
  std::string_view raw;  // the part's whole text (a message: its markers included)
  // Messages only:
  std::string channel;    // "analysis", "commentary", "final", ...; "" for none
  std::string recipient;  // "functions.get_weather"; "" when none
  std::string_view body;  // between <|message|> and the terminator
  bool closed = false;    // its terminator was seen
};

struct HarmonyScan {
  std::vector<HarmonyPart> parts;
  // !final only: the text from here on may still become (more of) a message's header or a
  // marker, so nothing of it is settled. text.size() when everything scanned is settled.
  size_t pending_from = 0;
};

// final == false: the text may grow; the last part holds only what more text cannot change
// (a body or plain text is cut before a suffix that may be the start of a marker, and a header
// still arriving is left for pending_from).
HarmonyScan ScanHarmony(std::string_view text, bool final);

}  // namespace radixlm::chat
