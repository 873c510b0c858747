#pragma once
// A file to remove if a fatal signal ends the process while it exists: a
// checkpoint's temporary (Note [Temporaries on a fatal signal] in
// fatal_signal_unlink.cpp).

#include <signal.h>

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

/// While alive (or until release()), SIGINT, SIGTERM and SIGHUP are held
/// back on this thread: a file made under it can be registered with
/// UnlinkOnFatalSignal before any of them can end the process.
class BlockFatalSignals {
 public:
  BlockFatalSignals();
  ~BlockFatalSignals() { release(); }
  void release();
  BlockFatalSignals(const BlockFatalSignals&) = delete;
  BlockFatalSignals& operator=(const BlockFatalSignals&) = delete;

 private:
  sigset_t old_;
  bool held_ = false;
};

}  // namespace ss::eval
