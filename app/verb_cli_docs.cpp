// `transnormer completion bash` and `transnormer manpage`: the bash completion script and the man
// page, generated from the command line itself (app/cli_docs.h), on stdout.
#include <iostream>

#include "app/cli_docs.h"
#include "app/verbs.h"
#include "core/platform/version.h"

namespace tn::app {

Action add_completion_verb(CLI::App& app) {
  auto shell = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("completion", "Print the shell completion script (bash), made from the command line");
  sub->add_option("shell", *shell, "the shell: bash")->required()->check(CLI::IsMember({"bash"}));
  return [&app, shell]() {  // the action owns the shell's string, which the option writes into
    std::cout << bash_completion(app) << std::flush;
    return 0;
  };
}

Action add_manpage_verb(CLI::App& app) {
  app.add_subcommand("manpage", "Print the man page (roff), made from the command line: man -l <(transnormer manpage)");
  return [&app]() {
    std::cout << man_page(app, std::string("transnormer ") + program_version()) << std::flush;
    return 0;
  };
}

}  // namespace tn::app
