#pragma once
// Reading a source file from the disk: the one reader of the checker (a
// program and its imports) and of `ss lsp` (the imports it reads for a
// check, to know what they held).

#include <optional>
#include <string>

namespace ss::diag {

/// [path]'s bytes when it is a regular file (Note [Only regular source
/// files]); nullopt when it is not one or cannot be read.
std::optional<std::string> read_source(const std::string& path);

}  // namespace ss::diag
