// Note [Only regular source files]: a program or an import that names a
// device or a FIFO (`import "/dev/zero"`) would be read forever; only a
// regular file is read (issue 16, as the data loaders do).
#include "diag/read_source.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ss::diag {

std::optional<std::string> read_source(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace ss::diag
