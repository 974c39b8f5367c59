#include "apps/commands.h"

#include <map>
#include <string>

namespace radixlm::apps {

namespace {
std::map<std::string, CommandSetup>& Registry() {
  static std::map<std::string, CommandSetup> registry;
  return registry;
}
int g_exit_code = 0;
}  // namespace

bool RegisterCommand(const char* name, CommandSetup setup) {
  Registry().emplace(name, std::move(setup));
  return true;
}

void AddRegisteredCommands(CLI::App& app) {
  for (auto& [name, setup] : Registry()) setup(app);
}

int ExitCode() { return g_exit_code; }
void SetExitCode(int code) { g_exit_code = code; }

}  // namespace radixlm::apps
