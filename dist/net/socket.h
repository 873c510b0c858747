#pragma once
// TCP sockets for several hosts (issue 26): an owned descriptor, connect,
// listen and accept, and whole reads and writes, each bounded by a deadline
// so that a silent or slow peer is an error, never a hang. Every socket is
// non-blocking and close-on-exec; waits are poll()s.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ss::dist::net {

/// A connection failed, closed, timed out or sent what it must not.
/// what() is a sentence naming the peer where it is known.
struct NetError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

inline Deadline deadline_in(std::chrono::milliseconds ms) {
  return Clock::now() + ms;
}

/// An owned file descriptor, closed when it goes.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd();
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_ = -1;
};

/// A pipe that ends another thread's poll(): read_fd() in its poll set,
/// wake() from any thread (a server's stop).
class WakePipe {
 public:
  WakePipe();
  int read_fd() const { return read_.get(); }
  void wake();

 private:
  Fd read_, write_;
};

/// HOST:PORT (an IPv4 address or a name; [v6]:port for IPv6).
struct Endpoint {
  std::string host;
  uint16_t port = 0;
  std::string str() const;
};
/// Parses "ADDR:PORT"; throws NetError saying what is wrong.
Endpoint parse_endpoint(std::string_view text);

/// A listening socket on [host]:[port] (port 0: the kernel picks one).
Fd listen_tcp(const std::string& host, uint16_t port, int backlog = 64);
/// The local port (and address) a socket is bound to.
Endpoint local_endpoint(int fd);
/// The local address this host sends from to reach [host] (a name or an
/// address): the address a peer there can reach us at.
std::string source_address_to(const std::string& host);
/// The address of the peer of a connected socket.
Endpoint peer_endpoint(int fd);
/// Connects to [to] before [deadline] (retrying a refused connection until
/// then: the listener may not be up yet).
Fd connect_tcp(const Endpoint& to, Deadline deadline);
/// The next connection on [listener], or an invalid Fd at [deadline].
Fd accept_tcp(int listener, Deadline deadline);

/// Reads exactly [n] bytes; NetError when the peer closes first or
/// [deadline] passes ([what]: what was being read, for the message).
void read_exact(
    int fd, void* buf, size_t n, Deadline deadline, std::string_view what);
/// Writes all [n] bytes before [deadline]. [midway], when given, is set
/// to 1 as soon as some of the bytes but not all are written.
void write_all(int fd,
               const void* buf,
               size_t n,
               Deadline deadline,
               std::string_view what,
               std::atomic<uint32_t>* midway = nullptr);
/// Whether [fd] is readable (or closed) before [deadline]; false at it.
bool wait_readable(int fd, Deadline deadline);
/// Whether [fd] is writable (a non-blocking connect has ended, well or
/// not) before [deadline]; false at it.
bool wait_writable(int fd, Deadline deadline);
/// Reads what is there without waiting, up to [cap] bytes: the count, 0 at
/// the peer's EOF, -1 when nothing is there yet.
long read_some(int fd, void* buf, size_t cap);

}  // namespace ss::dist::net
