#include "frontend/language.h"

namespace radixlm::frontend {
namespace {

Node Make(NodeKind kind, std::string name = "") {
  Node n;
  n.kind = kind;
  n.name = std::move(name);
  return n;
}

}  // namespace

Expr::Expr(const char* text) : Expr(std::string(text)) {}

Expr::Expr(std::string text) {
  Node n = Make(NodeKind::kConstantText);
  n.text = std::move(text);
  nodes_.push_back(std::move(n));
}

Expr& Expr::operator+=(const Expr& other) {
  nodes_.insert(nodes_.end(), other.nodes_.begin(), other.nodes_.end());
  return *this;
}

Expr operator+(Expr a, const Expr& b) {
  a += b;
  return a;
}

Expr gen(std::string name, GenOptions options) {
  Node n = Make(NodeKind::kGen, std::move(name));
  n.gen = std::move(options);
  return Expr(std::move(n));
}

Expr gen_int(std::string name, GenOptions options) {
  options.regex = kIntRegex;
  options.json_schema.reset();
  options.ebnf.reset();
  return gen(std::move(name), std::move(options));
}

Expr gen_string(std::string name, GenOptions options) {
  options.regex = kStringRegex;
  options.json_schema.reset();
  options.ebnf.reset();
  return gen(std::move(name), std::move(options));
}

Expr select(std::string name, std::vector<std::string> options, SelectMethod method) {
  Node n = Make(NodeKind::kSelect, std::move(name));
  n.options = std::move(options);
  n.select_method = method;
  return Expr(std::move(n));
}

Expr image(std::string path) {
  Node n = Make(NodeKind::kImage);
  n.text = std::move(path);
  return Expr(std::move(n));
}

Expr image(std::vector<uint8_t> bytes) {
  Node n = Make(NodeKind::kImage);
  n.image = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  return Expr(std::move(n));
}

Expr role_begin(std::string name) { return Expr(Make(NodeKind::kRoleBegin, std::move(name))); }
Expr role_end(std::string name) { return Expr(Make(NodeKind::kRoleEnd, std::move(name))); }

Expr role(std::string name, const Expr& content) {
  return role_begin(name) + content + role_end(name);
}
Expr system(const Expr& content) { return role("system", content); }
Expr system(const char* content) { return role("system", Expr(content)); }
Expr user(const Expr& content) { return role("user", content); }
Expr assistant(const Expr& content) { return role("assistant", content); }

}  // namespace radixlm::frontend
