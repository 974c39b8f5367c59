// The frontend language's expressions: what a program appends to its state.
//
//   s += system("You are terse.");
//   s += user("Q: " + question);
//   s += assistant(gen("answer", {.max_tokens = 64, .stop = {"\n"}}));
//   s += select("verdict", {"yes", "no"});
//   s += user(image("photo.png") + "What is in the picture?");
//
// An Expr is a sequence of IR nodes; strings convert to constant text, `+` concatenates, and a
// role wraps its content in RoleBegin / RoleEnd (rendered with the model's chat template).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/gen_options.h"
#include "frontend/ir.h"

namespace radixlm::frontend {

class Expr {
 public:
  Expr() = default;
  Expr(const char* text);  // NOLINT(google-explicit-constructor): constant text
  Expr(std::string text);  // NOLINT(google-explicit-constructor): constant text
  explicit Expr(Node node) { nodes_.push_back(std::move(node)); }

  Expr& operator+=(const Expr& other);
  const std::vector<Node>& nodes() const { return nodes_; }

 private:
  std::vector<Node> nodes_;
};

Expr operator+(Expr a, const Expr& b);

// The model continues the text; the result is appended and stored as variable `name` ("" : not
// stored). Unset options come from the run's defaults.
Expr gen(std::string name, GenOptions options = {});
// gen constrained to an integer / a double-quoted string (SGLang's gen_int / gen_string).
Expr gen_int(std::string name, GenOptions options = {});
Expr gen_string(std::string name, GenOptions options = {});

// The model picks one of `options` (see SelectMethod); the pick is appended and stored.
Expr select(std::string name, std::vector<std::string> options,
            SelectMethod method = SelectMethod::kTokenLengthNormalized);

// An image at this point of the prompt (SGLang's sgl.image): a PNG, JPEG, WebP or GIF file,
// read when the node runs (an unreadable path fails the state with NotFound naming it), or the
// file's bytes. The text gets the image marker (kImageMarker) and the state the image; gen then
// sends both, as the server's chat path sends a chat's image parts, and the engine places the
// image's tokens as its projector's model expects. A model without a projector fails the gen
// (InvalidArgument). select after an image is Unimplemented (its options are scored by calls
// that carry text only); fork after one commits no prefix (the branches still share it through
// the radix tree, which keys an image by its content).
Expr image(std::string path);
Expr image(std::vector<uint8_t> bytes);

// Chat roles: `content` between the role's prefix and suffix.
Expr role(std::string name, const Expr& content);
Expr system(const Expr& content);
// Without this overload, `system("...")` in code with `using namespace radixlm::frontend`
// would silently call ::system(const char*) from <cstdlib>; with it the call is ambiguous there
// (write frontend::system, or the program inside a namespace nested in radixlm::frontend).
Expr system(const char* content);
Expr user(const Expr& content);
Expr assistant(const Expr& content);
// Open / close a role explicitly (content appended in between by separate `+=`).
Expr role_begin(std::string name);
Expr role_end(std::string name);

}  // namespace radixlm::frontend
