// Parser: tokens -> TemplateAst, following jinja2's grammar and operator precedence
// (jinja2/parser.py): condexpr < or < and < not < compare < +,- < ~ < *,/,//,% < ** < unary,
// with postfix (., [], call) and then filters / tests binding tighter than any binary operator.
#pragma once

#include <memory>
#include <string_view>

#include "chat/ast.h"

namespace radixlm::chat {

// Parses a whole template. Throws TemplateError(kSyntax) with the offending token's position.
std::unique_ptr<TemplateAst> ParseTemplate(std::string_view source);

}  // namespace radixlm::chat
