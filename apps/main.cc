// radixlm: one binary, subcommands registered by apps/*_command.cc files.
#include <CLI/CLI.hpp>

#include "apps/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"radixlm: an LLM serving engine built around a radix tree of KV caches"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "radixlm 0.1.0");
  radixlm::apps::AddRegisteredCommands(app);
  CLI11_PARSE(app, argc, argv);
  return radixlm::apps::ExitCode();
}
