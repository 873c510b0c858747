#pragma once
// A file to remove if a fatal signal ends the process while it exists: a
// checkpoint's temporary (Note [Temporaries on a fatal signal] in
// fatal_signal_unlink.cpp).

#include <string>

namespace ss::eval {

/// While alive, SIGINT (when it would end the process), SIGTERM and SIGHUP
/// unlink [path] before the process dies of them.
class UnlinkOnFatalSignal {
 public:
  explicit UnlinkOnFatalSignal(const std::string& path);
  ~UnlinkOnFatalSignal();
  UnlinkOnFatalSignal(const UnlinkOnFatalSignal&) = delete;
  UnlinkOnFatalSignal& operator=(const UnlinkOnFatalSignal&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace ss::eval
