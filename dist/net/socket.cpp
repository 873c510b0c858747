// TCP sockets with deadlines (socket.h).
#include "dist/net/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace ss::dist::net {

namespace {

std::string errno_text(int e) {
  return std::strerror(e);
}

// Milliseconds left until [d], at least 0, for poll().
int ms_left(Deadline d) {
  auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(d - Clock::now());
  return left.count() <= 0
             ? 0
             : static_cast<int>(std::min<int64_t>(left.count(), 1 << 30));
}

// Waits for [events] on [fd] until [d]: false at the deadline.
bool wait_for(int fd, short events, Deadline d) {
  for (;;) {
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, ms_left(d));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) throw NetError("poll: " + errno_text(errno));
  }
}

void set_options(int fd) {
  int one = 1;
  // Control frames are small and answered at once: no Nagle delay.
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// The addresses [ep] names, for a stream socket.
addrinfo* resolve(const Endpoint& ep, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* out = nullptr;
  const std::string port = std::to_string(ep.port);
  int r = ::getaddrinfo(
      ep.host.empty() ? nullptr : ep.host.c_str(), port.c_str(), &hints, &out);
  if (r != 0)
    throw NetError("cannot resolve " + ep.str() + ": " + gai_strerror(r));
  return out;
}

Endpoint endpoint_of(const sockaddr_storage& a) {
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (a.ss_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(&a);
    ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    port = ntohs(in->sin_port);
  } else if (a.ss_family == AF_INET6) {
    auto* in = reinterpret_cast<const sockaddr_in6*>(&a);
    ::inet_ntop(AF_INET6, &in->sin6_addr, host, sizeof host);
    port = ntohs(in->sin6_port);
  }
  return {host, port};
}

}  // namespace

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

WakePipe::WakePipe() {
  int p[2];
  if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
    throw NetError("pipe: " + errno_text(errno));
  read_ = Fd(p[0]);
  write_ = Fd(p[1]);
}

void WakePipe::wake() {
  char b = 1;
  (void)!::write(write_.get(), &b, 1);
}

std::string Endpoint::str() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Endpoint parse_endpoint(std::string_view text) {
  const std::string t(text);
  std::string host, port;
  if (!t.empty() && t.front() == '[') {
    size_t close = t.find(']');
    if (close == std::string::npos || close + 1 >= t.size() ||
        t[close + 1] != ':')
      throw NetError("'" + t + "' is not [ADDR]:PORT");
    host = t.substr(1, close - 1);
    port = t.substr(close + 2);
  } else {
    size_t colon = t.rfind(':');
    if (colon == std::string::npos || colon == 0)
      throw NetError("'" + t + "' is not ADDR:PORT");
    host = t.substr(0, colon);
    port = t.substr(colon + 1);
  }
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) > 65535)
    throw NetError("'" + t + "': the port is a number from 0 to 65535");
  return {host, static_cast<uint16_t>(std::stoul(port))};
}

Fd listen_tcp(const std::string& host, uint16_t port, int backlog) {
  addrinfo* ai = resolve({host, port}, true);
  std::string why = "no address";
  for (addrinfo* a = ai; a; a = a->ai_next) {
    Fd fd(::socket(a->ai_family,
                   a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                   a->ai_protocol));
    if (!fd.valid()) continue;
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) == 0 &&
        ::listen(fd.get(), backlog) == 0) {
      ::freeaddrinfo(ai);
      return fd;
    }
    why = errno_text(errno);
  }
  ::freeaddrinfo(ai);
  throw NetError("cannot listen on " + Endpoint{host, port}.str() + ": " + why);
}

Endpoint local_endpoint(int fd) {
  sockaddr_storage a{};
  socklen_t n = sizeof a;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n) != 0)
    throw NetError("getsockname: " + errno_text(errno));
  return endpoint_of(a);
}

std::string source_address_to(const std::string& host) {
  // A UDP socket's connect sends nothing: it only picks the route, and
  // with it the local address the kernel would send from.
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* ai = nullptr;
  const int r = ::getaddrinfo(host.c_str(), "9", &hints, &ai);
  if (r != 0) throw NetError("cannot resolve " + host + ": " + gai_strerror(r));
  std::string why = "no address";
  for (addrinfo* a = ai; a; a = a->ai_next) {
    Fd fd(::socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) continue;
    if (::connect(fd.get(), a->ai_addr, a->ai_addrlen) == 0) {
      ::freeaddrinfo(ai);
      return local_endpoint(fd.get()).host;
    }
    why = errno_text(errno);
  }
  ::freeaddrinfo(ai);
  throw NetError("no route to " + host + ": " + why);
}

Endpoint peer_endpoint(int fd) {
  sockaddr_storage a{};
  socklen_t n = sizeof a;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &n) != 0)
    return {"?", 0};
  return endpoint_of(a);
}

Fd connect_tcp(const Endpoint& to, Deadline deadline) {
  std::string why;
  for (;;) {
    addrinfo* ai = resolve(to, false);
    for (addrinfo* a = ai; a; a = a->ai_next) {
      Fd fd(::socket(a->ai_family,
                     a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                     a->ai_protocol));
      if (!fd.valid()) continue;
      int r = ::connect(fd.get(), a->ai_addr, a->ai_addrlen);
      if (r != 0 && errno == EINPROGRESS) {
        if (!wait_for(fd.get(), POLLOUT, deadline)) {
          why = "timed out";
          continue;
        }
        int err = 0;
        socklen_t n = sizeof err;
        ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &n);
        r = err == 0 ? 0 : -1;
        errno = err;
      }
      if (r == 0) {
        ::freeaddrinfo(ai);
        set_options(fd.get());
        return fd;
      }
      why = errno_text(errno);
    }
    ::freeaddrinfo(ai);
    if (Clock::now() >= deadline)
      throw NetError("cannot connect to " + to.str() + ": " + why);
    // Refused or unreachable for now: the listener may still be starting.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Fd accept_tcp(int listener, Deadline deadline) {
  for (;;) {
    int fd =
        ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      set_options(fd);
      return Fd(fd);
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      throw NetError("accept: " + errno_text(errno));
    if (!wait_for(listener, POLLIN, deadline)) return Fd();
  }
}

void read_exact(
    int fd, void* buf, size_t n, Deadline deadline, std::string_view what) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    // Waits first, so that a blocking descriptor (a worker's stdin) keeps
    // the deadline too; read(), not recv(): that stdin is a pipe.
    if (!wait_for(fd, POLLIN, deadline))
      throw NetError(std::string(what) + ": timed out");
    ssize_t r = ::read(fd, p, n);
    if (r > 0) {
      p += r;
      n -= static_cast<size_t>(r);
      continue;
    }
    if (r == 0)
      throw NetError(std::string(what) + ": the peer closed the connection");
    if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
    throw NetError(std::string(what) + ": " + errno_text(errno));
  }
}

void write_all(int fd,
               const void* buf,
               size_t n,
               Deadline deadline,
               std::string_view what,
               std::atomic<uint32_t>* midway) {
  auto* p = static_cast<const char*>(buf);
  while (n > 0) {
    ssize_t r = ::send(fd, p, n, MSG_NOSIGNAL);
    if (r > 0) {
      p += r;
      n -= static_cast<size_t>(r);
      if (midway && n > 0) midway->store(1);
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
      throw NetError(std::string(what) + ": " + errno_text(errno));
    if (!wait_for(fd, POLLOUT, deadline))
      throw NetError(std::string(what) + ": timed out");
  }
}

bool wait_readable(int fd, Deadline deadline) {
  return wait_for(fd, POLLIN, deadline);
}

bool wait_writable(int fd, Deadline deadline) {
  return wait_for(fd, POLLOUT, deadline);
}

long read_some(int fd, void* buf, size_t cap) {
  for (;;) {
    ssize_t r = ::recv(fd, buf, cap, 0);
    if (r >= 0) return static_cast<long>(r);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return -1;
    throw NetError("read: " + errno_text(errno));
  }
}

}  // namespace ss::dist::net
