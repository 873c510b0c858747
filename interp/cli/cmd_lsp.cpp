// `ss lsp [--devices SPEC] [-D NAME=SIZE]...`: the language server on
// stdio (interp/lsp/server.h). The options apply to every document, as
// `ss check`'s do; an editor may give the device list in
// initializationOptions instead.
#include <unistd.h>

#include <iostream>

#include "interp/cli/commands.h"
#include "interp/cli/help.h"
#include "interp/lsp/server.h"

namespace ss::cli {

int cmd_lsp(const std::vector<std::string>& args) {
  check::Options opts;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (ProgramOption o = program_option("lsp", args, i, opts);
        o != ProgramOption::NotMine) {
      if (o == ProgramOption::Bad) return kExitUsage;
    } else if (a == "--help" || a == "-h") {
      std::cout << command_help("lsp");
      return kExitOk;
    } else {
      std::cerr << "ss lsp: unknown argument '" << a << "'\n";
      return kExitUsage;
    }
  }
  return lsp::serve(STDIN_FILENO, STDOUT_FILENO, std::cerr, std::move(opts));
}

}  // namespace ss::cli
