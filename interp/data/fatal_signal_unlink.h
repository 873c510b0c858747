#pragma once
// A checkpoint's temporary, removed if a fatal signal ends the process
// while it exists (Note [Temporaries on a fatal signal] in
// fatal_signal_unlink.cpp).

#include <string>

namespace ss::data {

/// mkostemp([path_template], O_CLOEXEC), "...XXXXXX", made and registered
/// as one step that a fatal signal's handler waits for: while this is
/// alive, SIGINT (when it would end the process), SIGTERM and SIGHUP
/// unlink the file before the process dies of them. fd() is -1 (errno
/// set) when it could not be made; the fd is the caller's to close.
class TemporaryFile {
 public:
  explicit TemporaryFile(std::string path_template);
  ~TemporaryFile();
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  int slot_ = -1;
};

}  // namespace ss::data
