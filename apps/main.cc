// radixlm: one binary, subcommands registered by apps/*_command.cc files.
#include <CLI/CLI.hpp>
#include <csignal>

#include "apps/commands.h"
#include "util/sanitizers.h"

int main(int argc, char** argv) {
  if constexpr (!radixlm::kAddressSanitizer && !radixlm::kThreadSanitizer) {
    // UCX (linked for prefill/decode disaggregation) installs handlers for these signals when it
    // loads, which print a backtrace from inside the handler: after heap corruption that can
    // deadlock in malloc and leave a crashed server hanging with its clients. The default action
    // ends the process, so a supervisor sees the crash. (Sanitizer builds keep their handlers.)
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, SIG_DFL);
  }
  CLI::App app{"radixlm: an LLM serving engine built around a radix tree of KV caches"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "radixlm 0.1.0");
  radixlm::apps::AddRegisteredCommands(app);
  CLI11_PARSE(app, argc, argv);
  return radixlm::apps::ExitCode();
}
