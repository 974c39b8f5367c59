// Lexer: template source -> tokens, with jinja2's whitespace rules as HF transformers
// configures them (trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False).
//
// Whitespace control happens here, exactly where jinja2's lexer does it:
//   * newlines are normalized (\r\n, \r -> \n) and one trailing newline is dropped;
//   * `{%-` / `{{-` / `{#-` strip all whitespace before the tag, `-%}` / `-}}` / `-#}` after;
//   * lstrip_blocks: spaces/tabs between a line start and `{%` or `{#` are removed
//     (`{%+` opts out);
//   * trim_blocks: one newline right after `%}` or `#}` is removed (`+%}` opts out);
//   * comments vanish, and `{% raw %}...{% endraw %}` becomes text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace radixlm::chat {

enum class TokenKind {
  kText,           // template data between tags (value = the text)
  kVariableBegin,  // {{
  kVariableEnd,    // }}
  kBlockBegin,     // {%
  kBlockEnd,       // %}
  kName,           // identifiers and keywords (value = the name)
  kString,         // value = the decoded string
  kInteger,        // int_value
  kFloat,          // float_value
  kOperator,       // value = the operator spelling: "+", "//", "==", "(", ...
  kEnd,            // end of the template
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string value;
  int64_t int_value = 0;
  double float_value = 0.0;
  int line = 1;    // 1-based
  int column = 1;  // 1-based, in code points
};

// Tokenizes a whole template. Throws TemplateError(kSyntax) with a position on malformed input
// (unclosed tag or comment, bad string escape, unbalanced brackets, stray characters).
std::vector<Token> Tokenize(std::string_view source);

}  // namespace radixlm::chat
