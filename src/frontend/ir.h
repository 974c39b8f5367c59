// The IR a frontend program becomes: a list of nodes per state, recorded as the program runs
// (`s += node` records, then executes). A fork node holds the IR of each of its branches, so
// the IR of a whole run is a tree; PrintIr renders it for debugging:
//
//   RoleBegin(user)
//   ConstantText("Q: 2+2?")
//   RoleEnd(user)
//   CommitLazy
//   Fork(#1, 2)
//     branch 0:
//       Gen(answer, max_tokens=8)
//   ...
//
// Thread safety: ProgramIr is appended to by the thread running its state and read by anyone
// (Nodes() returns a snapshot).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "frontend/gen_options.h"

namespace radixlm::frontend {

enum class NodeKind {
  kConstantText,          // text: appended as is
  kGen,                   // name, gen: the model continues the text
  kSelect,                // name, options, select_method: the model picks one option
  kFork,                  // fork_id, fork_size, branches: copies of the state
  kGetForkItem,           // fork_id, fork_index, name: a branch's variable, appended
  kVariable,              // name: the state's own variable, appended
  kRoleBegin,             // name: the role's prefix from the chat template
  kRoleEnd,               // name: the role's suffix
  kConcatenateAndAppend,  // fork_id: each branch's new text, in branch order, appended
  kCommitLazy,            // the text so far is prefilled (and pinned) before a fork
  kImage,                 // text (a file's path) or image (its bytes): an image at this point
};

// How `select` picks among options (SGLang's choices sampling methods).
enum class SelectMethod {
  kTokenLengthNormalized,  // highest mean token logprob of the option given the prefix
  kGreedyToken,            // position by position, keep the options with the best logprob
  kUnconditionalLikelihoodNormalized,  // mean of (logprob given prefix - logprob alone)
};

const char* NodeKindName(NodeKind kind);
const char* SelectMethodName(SelectMethod method);

class ProgramIr;

struct Node {
  NodeKind kind = NodeKind::kConstantText;
  std::string text;                  // kConstantText; kImage: the file's path ("": bytes given)
  std::string name;                  // variable (Gen, Select, Variable, GetForkItem) or role
  GenOptions gen;                    // kGen
  std::vector<std::string> options;  // kSelect
  SelectMethod select_method = SelectMethod::kTokenLengthNormalized;
  int64_t fork_id = -1;    // kFork, kGetForkItem, kConcatenateAndAppend
  int32_t fork_size = 0;   // kFork
  int32_t fork_index = 0;  // kGetForkItem
  std::vector<std::shared_ptr<const ProgramIr>> branches;  // kFork
  std::shared_ptr<const std::vector<uint8_t>> image;       // kImage given bytes

  // One line, e.g. `Gen(answer, max_tokens=64, stop=["\n"])`.
  std::string ToString() const;
};

// The nodes one state recorded, in order.
class ProgramIr {
 public:
  void Append(Node node);
  std::vector<Node> Nodes() const;

 private:
  mutable std::mutex mu_;
  std::vector<Node> nodes_;  // guarded by mu_
};

// The IR as indented text (branches of a fork nested under it).
std::string PrintIr(const ProgramIr& ir, int indent = 0);

}  // namespace radixlm::frontend
