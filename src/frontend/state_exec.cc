// State: executing IR nodes (on the state's worker thread, or inline when tracing).
#include <fstream>
#include <iterator>

#include "frontend/state.h"

namespace radixlm::frontend {
namespace {

// Tracing: the first operation that needs the model ends the program's constant prefix.
void RecordConstantPrefix(Runtime& runtime, const std::string& text) {
  std::lock_guard<std::mutex> lock(runtime.trace_mu);
  if (!runtime.constant_prefix.has_value()) runtime.constant_prefix = text;
}

}  // namespace

void State::AppendText(const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  data_.text += text;
}

Status State::Execute(const Node& node) {
  switch (node.kind) {
    case NodeKind::kConstantText:
      AppendText(node.text);
      return Status::Ok();
    case NodeKind::kGen:
      return ExecuteGen(node);
    case NodeKind::kSelect:
      return ExecuteSelect(node);
    case NodeKind::kRoleBegin:
    case NodeKind::kRoleEnd:
      return ExecuteRole(node);
    case NodeKind::kImage:
      return ExecuteImage(node);
    case NodeKind::kVariable: {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = data_.vars.find(node.name);
      if (it == data_.vars.end()) {
        if (runtime_->backend == nullptr) return Status::Ok();  // tracing: values unknown
        return NotFound("no variable '" + node.name + "' to append");
      }
      data_.text += it->second;
      return Status::Ok();
    }
    case NodeKind::kFork:
    case NodeKind::kGetForkItem:
    case NodeKind::kConcatenateAndAppend:
    case NodeKind::kCommitLazy:
      return Internal(std::string(NodeKindName(node.kind)) +
                      " is executed by fork / join, not appended");
  }
  return Internal("unknown IR node");
}

Status State::ExecuteRole(const Node& node) {
  std::lock_guard<std::mutex> lock(mu_);
  const ChatRoles* roles = runtime_->roles;
  if (node.kind == NodeKind::kRoleBegin) {
    if (!data_.role_stack.empty()) {
      return InvalidArgument("role '" + node.name + "' begins inside role '" +
                             data_.role_stack.back() + "' (roles do not nest)");
    }
    RADIXLM_ASSIGN_OR_RETURN(std::string prefix, roles->Prefix(node.name, data_.last_ended_role));
    data_.text += prefix;
    data_.role_stack.push_back(node.name);
    return Status::Ok();
  }
  if (data_.role_stack.empty() || data_.role_stack.back() != node.name) {
    return InvalidArgument("role '" + node.name + "' ends but " +
                           (data_.role_stack.empty() ? std::string("no role")
                                                     : "role '" + data_.role_stack.back() + "'") +
                           " is open");
  }
  RADIXLM_ASSIGN_OR_RETURN(std::string suffix, roles->Suffix(node.name));
  data_.text += suffix;
  data_.role_stack.pop_back();
  data_.last_ended_role = node.name;
  return Status::Ok();
}

Status State::ExecuteImage(const Node& node) {
  ImageBytes bytes = node.image;
  if (bytes == nullptr && runtime_->backend != nullptr) {  // tracing reads no file
    if (node.text.empty()) return InvalidArgument("image() was given an empty path");
    std::ifstream in(node.text, std::ios::binary);
    if (!in) return NotFound("image '" + node.text + "' cannot be read");
    auto read = std::make_shared<std::vector<uint8_t>>((std::istreambuf_iterator<char>(in)),
                                                       std::istreambuf_iterator<char>());
    if (in.bad()) return NotFound("image '" + node.text + "' cannot be read");
    bytes = std::move(read);
  }
  std::lock_guard<std::mutex> lock(mu_);
  data_.text += kImageMarker;
  data_.images.push_back(std::move(bytes));
  return Status::Ok();
}

Backend* State::PromptOrTrace(const Node& node, std::string* prompt,
                              std::vector<ImageBytes>* images) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    *prompt = data_.text;
    if (images != nullptr) *images = data_.images;
  }
  Backend* backend = runtime_->backend;
  if (backend == nullptr) {
    RecordConstantPrefix(*runtime_, *prompt);
    std::lock_guard<std::mutex> lock(mu_);
    if (!node.name.empty()) data_.vars[node.name] = "";
  }
  return backend;
}

Status State::ExecuteGen(const Node& node) {
  std::string prompt;
  std::vector<ImageBytes> images;
  Backend* backend = PromptOrTrace(node, &prompt, &images);
  if (backend == nullptr) return Status::Ok();
  const GenOptions options = MergeGenOptions(runtime_->default_gen, node.gen);
  const SamplingParams params = ToSamplingParams(options);
  RADIXLM_ASSIGN_OR_RETURN(GenerateReply reply,
                           images.empty() ? backend->Generate(prompt, params)
                                          : backend->GenerateWithImages(prompt, images, params));
  std::lock_guard<std::mutex> lock(mu_);
  data_.text += reply.text;
  if (!node.name.empty()) {
    data_.vars[node.name] = reply.text;
    data_.replies[node.name] = std::move(reply);
  }
  return Status::Ok();
}

Status State::ExecuteSelect(const Node& node) {
  if (node.options.empty()) return InvalidArgument("select '" + node.name + "' has no options");
  std::string prompt;
  std::vector<ImageBytes> images;
  Backend* backend = PromptOrTrace(node, &prompt, &images);
  if (backend == nullptr) return Status::Ok();
  if (!images.empty()) {
    return Unimplemented("select '" + node.name +
                         "' after an image is not supported: its options are scored by calls "
                         "that carry text only (use gen)");
  }
  RADIXLM_ASSIGN_OR_RETURN(SelectDecision d,
                           SelectOption(*backend, prompt, node.options, node.select_method));
  std::lock_guard<std::mutex> lock(mu_);
  const std::string& chosen = node.options[d.chosen];
  data_.text += chosen;
  if (!node.name.empty()) {
    data_.vars[node.name] = chosen;
    data_.decisions[node.name] = std::move(d);
  }
  return Status::Ok();
}

}  // namespace radixlm::frontend
