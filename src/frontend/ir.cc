#include "frontend/ir.h"

#include <nlohmann/json.hpp>

namespace radixlm::frontend {

const char* NodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kConstantText:
      return "ConstantText";
    case NodeKind::kGen:
      return "Gen";
    case NodeKind::kSelect:
      return "Select";
    case NodeKind::kFork:
      return "Fork";
    case NodeKind::kGetForkItem:
      return "GetForkItem";
    case NodeKind::kVariable:
      return "Variable";
    case NodeKind::kRoleBegin:
      return "RoleBegin";
    case NodeKind::kRoleEnd:
      return "RoleEnd";
    case NodeKind::kConcatenateAndAppend:
      return "ConcatenateAndAppend";
    case NodeKind::kCommitLazy:
      return "CommitLazy";
    case NodeKind::kImage:
      return "Image";
  }
  return "?";
}

const char* SelectMethodName(SelectMethod method) {
  switch (method) {
    case SelectMethod::kTokenLengthNormalized:
      return "token_length_normalized";
    case SelectMethod::kGreedyToken:
      return "greedy_token";
    case SelectMethod::kUnconditionalLikelihoodNormalized:
      return "unconditional_likelihood_normalized";
  }
  return "?";
}

std::string Node::ToString() const {
  std::string out = NodeKindName(kind);
  switch (kind) {
    case NodeKind::kConstantText:
      return out + "(" + nlohmann::json(text).dump() + ")";
    case NodeKind::kGen: {
      const std::string opts = DescribeGenOptions(gen);
      return out + "(" + name + (opts.empty() ? "" : ", " + opts) + ")";
    }
    case NodeKind::kSelect:
      return out + "(" + name + ", " + nlohmann::json(options).dump() + ", " +
             SelectMethodName(select_method) + ")";
    case NodeKind::kFork:
      return out + "(#" + std::to_string(fork_id) + ", " + std::to_string(fork_size) + ")";
    case NodeKind::kGetForkItem:
      return out + "(#" + std::to_string(fork_id) + "[" + std::to_string(fork_index) + "], " +
             name + ")";
    case NodeKind::kConcatenateAndAppend:
      return out + "(#" + std::to_string(fork_id) + ")";
    case NodeKind::kVariable:
    case NodeKind::kRoleBegin:
    case NodeKind::kRoleEnd:
      return out + "(" + name + ")";
    case NodeKind::kCommitLazy:
      return out;
    case NodeKind::kImage:
      if (!text.empty()) return out + "(" + nlohmann::json(text).dump() + ")";
      return out + "(" + std::to_string(image == nullptr ? 0 : image->size()) + " bytes)";
  }
  return out;
}

void ProgramIr::Append(Node node) {
  std::lock_guard<std::mutex> lock(mu_);
  nodes_.push_back(std::move(node));
}

std::vector<Node> ProgramIr::Nodes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return nodes_;
}

std::string PrintIr(const ProgramIr& ir, int indent) {
  std::string out;
  const std::string pad(static_cast<size_t>(indent) * 2, ' ');
  for (const Node& node : ir.Nodes()) {
    out += pad + node.ToString() + "\n";
    for (size_t b = 0; b < node.branches.size(); ++b) {
      out += pad + "  branch " + std::to_string(b) + ":\n";
      out += PrintIr(*node.branches[b], indent + 2);
    }
  }
  return out;
}

}  // namespace radixlm::frontend
