#pragma once
// Private to dist/control: a worker's end of the control channel, whatever
// carries it. The worker's loop (worker.cpp) receives requests, sets its
// status and replies through a ControllerLink: the shared-memory queues to
// a controller on this host (worker_shm_link.cpp), or one authenticated
// TCP connection to a controller anywhere (worker_tcp_link.cpp; issue 26).

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dist/control/control.h"

namespace ss::dist::detail {

class ControllerLink {
 public:
  virtual ~ControllerLink();

  struct Received {
    enum class Kind { Request, Nothing, Gone } kind = Kind::Nothing;
    Message m;
    uint32_t flags = 0;
    /// A request whose payload could not be read: why (m has its kind and
    /// id, so the error goes back as its reply).
    std::string bad;
  };
  /// The next request, waiting up to [ms]; Gone when the controller is.
  virtual Received receive(int ms) = 0;
  /// Sends a reply (or the hello); false when the controller is gone.
  virtual bool send(const Message& m, uint64_t id, uint32_t flags) = 0;
  /// What the worker is doing, for the controller's errors.
  virtual void set_status(std::string_view text, bool waiting) = 0;
};

/// The queues and status board of job [a.job] in /dev/shm; prints why and
/// returns null when they cannot be opened. Installs the clean-up after a
/// dead controller (Note [Workers clean up after a dead controller]).
std::unique_ptr<ControllerLink> open_shm_link(const WorkerArgs& a);

/// `ss worker --connect ADDR:PORT [--token-file F] [--slot R]`: connects,
/// proves the job's key (from the token file, else a line on stdin), says
/// hello and takes its assignment: the arguments a local worker gets on
/// its command line, which it returns in [assigned]. Throws
/// std::runtime_error saying why it cannot.
std::unique_ptr<ControllerLink> open_tcp_link(
    const std::vector<std::string>& args, std::vector<std::string>& assigned);

/// Whether [args] are a remote worker's (`--connect`).
bool connects(const std::vector<std::string>& args);

}  // namespace ss::dist::detail
