#include "app/command_line.h"

#include <filesystem>

namespace tn::app {
namespace {

std::string& kept() {
  static std::string line;
  return line;
}

std::string quote(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+=./:,@%-") ==
                          std::string::npos)
    return arg;
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

void keep_command_line(int argc, char** argv) {
  std::string line = argc > 0 ? std::filesystem::path(argv[0]).filename().string() : "transnormer";
  for (int i = 1; i < argc; ++i) line += " " + quote(argv[i]);
  kept() = line;
}

const std::string& command_line() { return kept(); }

}  // namespace tn::app
