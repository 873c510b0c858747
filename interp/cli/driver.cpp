// Argument helpers shared by the subcommands.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "interp/cli/commands.h"

namespace ss::cli {

bool readable(const std::string& file) {
  // Only a regular file (Note [Only regular source files] in checker.cpp).
  std::error_code ec;
  if (std::filesystem::exists(file, ec) &&
      !std::filesystem::is_regular_file(file, ec)) {
    std::cerr << "error: IOError: cannot read '" << file
              << "': not a regular file\n";
    return false;
  }
  if (std::ifstream(file)) return true;
  std::cerr << "error: IOError: cannot read '" << file << "'\n";
  return false;
}

}  // namespace ss::cli
