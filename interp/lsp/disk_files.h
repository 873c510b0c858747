#pragma once
// The files on the disk that checks read, read again only when they
// changed (Note [Disk files read again when changed]).

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

namespace ss::lsp {

// Note [Disk files read again when changed]: a check reads the imports it
// does not have open from the disk, each time, so that a file changed
// there shows at the next check (as `ss check` would show it); 2,000
// documents importing one hub that imports 200 files read 402,000 files,
// a quarter of the time of their checks. So each file's text is kept with
// what stat(2) said of it, and read again when the file's identity (device
// and inode), size or modification time differ, or when it was read less
// than kRacyNs after that time: a file written twice within one tick of
// the file system's clock, with one size, would otherwise look unchanged
// (git calls such an entry racily clean).

/// The texts of the disk's files as they were last read.
class DiskFiles {
 public:
  /// [path]'s text when it is a regular file (diag::read_source), nullopt
  /// otherwise.
  std::optional<std::string> read(const std::string& path);

 private:
  struct Seen {
    uint64_t dev = 0, ino = 0, size = 0;
    int64_t mtime_ns = 0;
    int64_t read_ns = 0;  // when the text was read
    std::string text;
  };
  std::unordered_map<std::string, Seen> files_;
};

}  // namespace ss::lsp
