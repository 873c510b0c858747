// Argument helpers shared by the subcommands.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "diag/diagnostic.h"
#include "interp/cli/commands.h"

namespace ss::cli {

namespace {

// A file that cannot be read: an IOError with no `.ss` location, printed
// by diag's printer as every error is.
void print_cannot_read(const std::string& file, const std::string& why) {
  std::cerr << diag::render_terminal(
      diag::unlocated("IOError", "cannot read '" + file + "'" + why),
      diag::SourceMap());
}

}  // namespace

bool readable(const std::string& file) {
  // Only a regular file (Note [Only regular source files] in checker.cpp).
  std::error_code ec;
  if (std::filesystem::exists(file, ec) &&
      !std::filesystem::is_regular_file(file, ec)) {
    print_cannot_read(file, ": not a regular file");
    return false;
  }
  if (std::ifstream(file)) return true;
  print_cannot_read(file, "");
  return false;
}

}  // namespace ss::cli
