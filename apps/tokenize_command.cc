// `radixlm tokenize [--model-path FILE] [--ids] [--add-special] [--parse-special] TEXT`:
// tokenizes TEXT (or --file / --stdin) with a GGUF model's tokenizer and prints the tokens.
#include <CLI/CLI.hpp>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "apps/commands.h"
#include "gguf/gguf_file.h"
#include "hf/model_file.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"
#include "util/model_path.h"

namespace radixlm::apps {
namespace {

struct TokenizeOptions {
  std::string model_path = "default";
  std::string text;
  std::string file;
  bool from_stdin = false;
  bool ids_only = false;
  bool add_special = false;
  bool parse_special = false;
  bool show_count = false;
  bool no_escape = false;
};

void Fail(const std::string& message) {
  std::fprintf(stderr, "radixlm tokenize: %s\n", message.c_str());
  SetExitCode(1);
}

// The piece between quotes: control bytes escaped so every token stays on one line, and bytes
// that are not whole UTF-8 characters (a byte-fallback token) shown as \xNN.
std::string Printable(std::string_view piece) {
  std::string out;
  for (size_t pos = 0; pos < piece.size();) {
    const size_t start = pos;
    const uint32_t cp = tokenizer::DecodeUtf8(piece, &pos);
    const auto c = static_cast<unsigned char>(piece[start]);
    const bool invalid = cp == tokenizer::kReplacementChar && pos == start + 1;
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c == 0x7F || invalid) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out.append(piece.substr(start, pos - start));
    }
  }
  return out;
}

// llama-tokenize's escapes in the text argument: \n \t \r \\ \" \' \xHH.
std::string ProcessEscapes(const std::string& in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '\\' || i + 1 == in.size()) {
      out.push_back(in[i]);
      continue;
    }
    const char e = in[++i];
    switch (e) {
      case 'n':
        out.push_back('\n');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case '\\':
        out.push_back('\\');
        break;
      case '"':
        out.push_back('"');
        break;
      case '\'':
        out.push_back('\'');
        break;
      case 'x':
        if (i + 2 < in.size() && std::isxdigit(static_cast<unsigned char>(in[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(in[i + 2]))) {
          out.push_back(static_cast<char>(std::stoi(in.substr(i + 1, 2), nullptr, 16)));
          i += 2;
          break;
        }
        [[fallthrough]];
      default:
        out.push_back('\\');
        out.push_back(e);
    }
  }
  return out;
}

bool ReadInput(const TokenizeOptions& opt, std::string* text) {
  const int sources = !opt.text.empty() + !opt.file.empty() + opt.from_stdin;
  if (sources > 1) {
    Fail("give the text as an argument, with --file or with --stdin, not several");
    return false;
  }
  if (!opt.file.empty()) {
    std::ifstream in(opt.file, std::ios::binary);
    if (!in) {
      Fail("cannot open " + opt.file);
      return false;
    }
    text->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } else if (opt.from_stdin) {
    text->assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    *text = opt.no_escape ? opt.text : ProcessEscapes(opt.text);
  }
  return true;
}

void Run(const TokenizeOptions& opt) {
  std::string text;
  if (!ReadInput(opt, &text)) return;
  StatusOr<std::string> path = ResolveModelPath(opt.model_path);
  if (!path.ok()) return Fail(path.status().ToString());
  auto file = hf::OpenModelFile(*path, {});  // a GGUF or a Hugging Face folder
  if (!file.ok()) return Fail(*path + ": " + file.status().ToString());
  auto tok = tokenizer::Tokenizer::FromGguf(**file);
  if (!tok.ok()) return Fail(*path + ": " + tok.status().ToString());

  const std::vector<int32_t> ids = (*tok)->Encode(text, opt.add_special, opt.parse_special);
  if (opt.ids_only) {
    std::string line = "[";
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i > 0) line += ", ";
      line += std::to_string(ids[i]);
    }
    std::printf("%s]\n", line.c_str());
  } else {
    for (int32_t id : ids) {
      std::printf("%6d -> '%s'\n", id, Printable((*tok)->TokenPiece(id)).c_str());
    }
  }
  if (opt.show_count) std::printf("Total number of tokens: %zu\n", ids.size());
}

const bool kTokenizeRegistered = RegisterCommand("tokenize", [](CLI::App& app) {
  auto opt = std::make_shared<TokenizeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tokenize",
      "Tokenize text with a GGUF model's tokenizer; prints one line per token ('ID -> "
      "'piece'') or, with --ids, one JSON array of ids.");
  cmd->add_option("text", opt->text, "Text to tokenize (or use --file / --stdin)");
  cmd->add_option("--model-path,-m", opt->model_path,
                  "GGUF file; 'default' = the default model (gemma-3-270m Q4_K_M)")
      ->capture_default_str();
  cmd->add_option("--file,-f", opt->file, "Read the text from this file");
  cmd->add_flag("--stdin", opt->from_stdin, "Read the text from standard input");
  cmd->add_flag("--ids", opt->ids_only, "Print only the ids, as a JSON array like [2, 9259]");
  cmd->add_flag("--add-special", opt->add_special,
                "Add BOS/EOS as the model's add_bos/add_eos say (default: off; llama.cpp's "
                "llama-tokenize adds BOS unless --no-bos)");
  cmd->add_flag("--parse-special", opt->parse_special,
                "Turn control-token text like <start_of_turn> into its id (default: off, such "
                "text is tokenized as plain text; llama-tokenize parses unless "
                "--no-parse-special). User-defined tokens always match.");
  cmd->add_flag("--show-count", opt->show_count, "Also print the number of tokens");
  cmd->add_flag("--no-escape", opt->no_escape,
                "Take the text argument literally (default: \\n \\t \\r \\\\ \\\" \\' \\xHH "
                "are unescaped, as llama-tokenize does)");
  cmd->callback([opt] { Run(*opt); });
});

}  // namespace
}  // namespace radixlm::apps
