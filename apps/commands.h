// Subcommand registry for the radixlm CLI. Each subcommand lives in apps/<name>_command.cc
// and registers itself at static-initialization time:
//
//   static const bool kRegistered = radixlm::apps::RegisterCommand(
//       "inspect", [](CLI::App& app) { ... app.add_subcommand(...) ... });
//
// A subcommand's callback reports failure through SetExitCode().
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace radixlm::apps {

using CommandSetup = std::function<void(CLI::App& app)>;

// Order of registration does not matter; subcommands are added sorted by name.
bool RegisterCommand(const char* name, CommandSetup setup);
void AddRegisteredCommands(CLI::App& app);

int ExitCode();
void SetExitCode(int code);

}  // namespace radixlm::apps
