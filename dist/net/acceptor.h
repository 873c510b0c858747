#pragma once
// The controller's side of a job's TCP connections (issue 26): accepts
// on a listening socket and authenticates each connection on its own
// thread (Note [Authenticated connections]), so that a stranger that
// connects and says nothing holds up no worker.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dist/net/auth.h"
#include "dist/net/socket.h"

namespace ss::dist::net {

class Acceptor {
 public:
  /// Takes [listener]; each connection must complete the handshake as the
  /// peer of [me] within [handshake_time]. At most [max_pending]
  /// handshakes run at once; a connection beyond them is closed at once.
  Acceptor(Fd listener,
           const JobKey& key,
           Role me,
           std::chrono::milliseconds handshake_time =
               std::chrono::milliseconds(3000),
           int max_pending = 64);
  ~Acceptor();  // stops accepting, closes what is pending, joins
  Acceptor(const Acceptor&) = delete;
  Acceptor& operator=(const Acceptor&) = delete;

  /// Where it listens.
  Endpoint endpoint() const { return endpoint_; }
  /// The next authenticated connection (in the order they completed), or
  /// an invalid Fd at [deadline].
  Fd take(Deadline deadline);
  /// Connections refused so far, and why the last one was.
  int refused() const;
  std::string last_refusal() const;

 private:
  void accept_loop();
  void authenticate(Fd conn);

  Fd listener_;
  Endpoint endpoint_;
  JobKey key_;
  Role me_;
  std::chrono::milliseconds handshake_time_;
  int max_pending_;
  WakePipe wake_;  // ends accept_loop's poll
  std::atomic<bool> stop_{false};
  std::atomic<int> pending_{0};
  mutable std::mutex mu_;
  std::condition_variable ready_cv_, idle_cv_;
  std::deque<Fd> ready_;
  int refused_ = 0;
  std::string last_refusal_;
  std::thread accept_thread_;
};

}  // namespace ss::dist::net
