// Argument helpers shared by the subcommands.
#include <fstream>
#include <iostream>

#include "interp/cli/commands.h"

namespace ss::cli {

bool readable(const std::string& file) {
  if (std::ifstream(file)) return true;
  std::cerr << "error: IOError: cannot read '" << file << "'\n";
  return false;
}

}  // namespace ss::cli
