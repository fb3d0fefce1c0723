#include "app/command_line.h"

#include <filesystem>

#include "core/platform/process/shell_quote.h"

namespace tn::app {
namespace {

std::string& kept() {
  static std::string line;
  return line;
}

}  // namespace

void keep_command_line(int argc, char** argv) {
  std::string line = argc > 0 ? std::filesystem::path(argv[0]).filename().string() : "transnormer";
  for (int i = 1; i < argc; ++i) line.append(" ").append(shell_quote(argv[i]));
  kept() = line;
}

const std::string& command_line() { return kept(); }

}  // namespace tn::app
