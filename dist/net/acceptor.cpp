// Accepting and authenticating a job's connections (acceptor.h).
#include "dist/net/acceptor.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

namespace ss::dist::net {

Acceptor::Acceptor(Fd listener,
                   const JobKey& key,
                   Role me,
                   std::chrono::milliseconds handshake_time,
                   int max_pending)
    : listener_(std::move(listener)),
      endpoint_(local_endpoint(listener_.get())),
      key_(key),
      me_(me),
      handshake_time_(handshake_time),
      max_pending_(max_pending) {
  accept_thread_ = std::thread([this] { accept_loop(); });
}

Acceptor::~Acceptor() {
  stop_ = true;
  wake_.wake();
  accept_thread_.join();
  // Handshake threads are detached; each ends within its deadline and
  // counts itself out.
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return pending_ == 0; });
}

void Acceptor::accept_loop() {
  while (!stop_) {
    pollfd p[2] = {{listener_.get(), POLLIN, 0}, {wake_.read_fd(), POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) continue;  // EINTR
    if (stop_ || p[1].revents) return;
    Fd conn = accept_tcp(listener_.get(), Clock::now());
    if (!conn.valid()) continue;
    if (pending_ >= max_pending_) {
      std::lock_guard<std::mutex> lock(mu_);
      ++refused_;
      last_refusal_ = "too many connections at once from " +
                      peer_endpoint(conn.get()).str();
      continue;  // closed here
    }
    ++pending_;
    std::thread([this, c = std::move(conn)]() mutable {
      authenticate(std::move(c));
    }).detach();
  }
}

void Acceptor::authenticate(Fd conn) {
  const std::string peer = peer_endpoint(conn.get()).str();
  try {
    handshake(conn.get(), key_, me_, deadline_in(handshake_time_));
    std::lock_guard<std::mutex> lock(mu_);
    if (!stop_) ready_.push_back(std::move(conn));
    ready_cv_.notify_all();
  } catch (const NetError& e) {
    std::lock_guard<std::mutex> lock(mu_);
    ++refused_;
    last_refusal_ = peer + ": " + e.what();
  }
  std::lock_guard<std::mutex> lock(mu_);
  --pending_;
  idle_cv_.notify_all();
}

Fd Acceptor::take(Deadline deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!ready_cv_.wait_until(lock, deadline, [&] { return !ready_.empty(); }))
    return Fd();
  Fd f = std::move(ready_.front());
  ready_.pop_front();
  return f;
}

int Acceptor::refused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}

std::string Acceptor::last_refusal() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_refusal_;
}

}  // namespace ss::dist::net
