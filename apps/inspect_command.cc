// `radixlm inspect [FILE]`: prints a GGUF file's header, metadata, tensor table and a summary.
// FILE may be "default" (the default model, see util/model_path.h); that is also the default.
// A Hugging Face folder is shown as the GGUF radixlm reads it (with --quantization: the tensor
// types it would serve).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "apps/commands.h"
#include "gguf/gguf_describe.h"
#include "gguf/gguf_file.h"
#include "hf/model_file.h"
#include "util/model_path.h"

namespace radixlm::apps {
namespace {

struct InspectOptions {
  std::string file = "default";
  std::string quantization;
  gguf::DescribeOptions describe;
  bool no_tensors = false;
};

void RunInspect(InspectOptions opts) {
  StatusOr<std::string> path = ResolveModelPath(opts.file);
  if (!path.ok()) {
    std::fprintf(stderr, "inspect: %s\n", path.status().ToString().c_str());
    SetExitCode(1);
    return;
  }
  // A Hugging Face folder is shown as the GGUF radixlm reads it (what it found on stderr).
  hf::ModelFileOptions file_options;
  file_options.quantization = opts.quantization;
  file_options.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  StatusOr<std::unique_ptr<gguf::GgufFile>> file = hf::OpenModelFile(*path, file_options);
  if (!file.ok()) {
    std::fprintf(stderr, "inspect: %s\n", file.status().ToString().c_str());
    SetExitCode(1);
    return;
  }
  opts.describe.tensor_table = !opts.no_tensors;
  const std::string text = gguf::DescribeGguf(**file, opts.describe);
  std::fwrite(text.data(), 1, text.size(), stdout);
}

const bool kInspectRegistered = RegisterCommand("inspect", [](CLI::App& app) {
  auto opts = std::make_shared<InspectOptions>();
  CLI::App* cmd =
      app.add_subcommand("inspect", "Print a GGUF file's header, metadata, tensors and summary");
  cmd->add_option("file", opts->file,
                  "GGUF file, Hugging Face checkpoint folder, or \"default\" for the default model")
      ->capture_default_str();
  cmd->add_option("--quantization", opts->quantization,
                  "Hugging Face folders: q8_0 | q4_k | q6_k, as serve would quantize them");
  cmd->add_option("--max-items", opts->describe.max_items, "Array items shown before abbreviating")
      ->capture_default_str();
  cmd->add_option("--max-string", opts->describe.max_string_bytes,
                  "String bytes shown before abbreviating")
      ->capture_default_str();
  cmd->add_flag("--no-tensors", opts->no_tensors, "Omit the tensor table");
  cmd->callback([opts] { RunInspect(*opts); });
});

}  // namespace
}  // namespace radixlm::apps
