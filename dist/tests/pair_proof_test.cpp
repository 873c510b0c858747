// dist/comm/gloo_pair_auth: the process's accept and connect hand Gloo only
// connections that proved they are a peer's (Note [A proof before Gloo
// reads]), tried here on a listener of our own with strangers that send
// junk, a wrong proof, a right proof for another listener, or nothing.
// Run: ss_tests "[pair_proof]".
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <string>

#include "dist/comm/gloo_pair_auth.h"

using namespace ss::dist;
using namespace std::chrono_literals;

namespace {

struct Listener {
  int fd = -1;
  sockaddr_storage at{};
  Listener() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 8) == 0);  // strangers queue before accept
    socklen_t len = sizeof at;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&at), &len);
  }
  ~Listener() { ::close(fd); }
};

// A stranger's connection to [to] that writes [bytes] (nothing if empty)
// and stays open; the descriptor.
int stranger(const sockaddr_storage& to, const std::string& bytes) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  // The system's connect: outside a scope, ss's connect is it.
  REQUIRE(::connect(fd,
                    reinterpret_cast<const sockaddr*>(&to),
                    sizeof(sockaddr_in)) == 0);
  if (!bytes.empty())
    REQUIRE(::write(fd, bytes.data(), bytes.size()) ==
            static_cast<ssize_t>(bytes.size()));
  return fd;
}

// Whether the other end closed [fd] within a second.
bool closed_by_peer(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 1000) <= 0) return false;
  char c;
  return ::recv(fd, &c, 1, MSG_DONTWAIT) == 0 || (errno == ECONNRESET);
}

uint16_t port_of(int fd, bool peer) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (peer)
    ::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len);
  else
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

net::JobKey key_of(uint8_t b) {
  net::JobKey k;
  k.bytes.fill(b);
  return k;
}

}  // namespace

TEST_CASE("ss's accept and connect are the ones libgloo calls",
          "[pair_proof]") {
  CHECK(detail::pair_proofs_in_effect());
}

TEST_CASE("outside a join, accept is accept", "[pair_proof]") {
  Listener l;
  int s = stranger(l.at, "junk");
  int c = ::accept(l.fd, nullptr, nullptr);
  REQUIRE(c >= 0);
  CHECK(port_of(c, true) == port_of(s, false));
  ::close(c);
  ::close(s);
}

TEST_CASE(
    "inside a join, accept hands over only the connection that proved "
    "it is a peer's",
    "[pair_proof]") {
  Listener l, other;
  detail::PairProofScope scope(key_of(7), "job.a0", 10s);
  // A right proof, for another listener: read raw (accept4 is the system
  // call), then replayed to this one.
  auto elsewhere = std::async(std::launch::async, [&] {
    detail::PairProofScope mine(key_of(7), "job.a0", 10s);
    detail::knock(other.at);
  });
  std::string replayed(40, '\0');
  {
    int raw = ::accept4(other.fd, nullptr, nullptr, SOCK_CLOEXEC);
    REQUIRE(raw >= 0);
    REQUIRE(::recv(raw, replayed.data(), replayed.size(), MSG_WAITALL) == 40);
    ::close(raw);
  }
  elsewhere.get();
  CHECK(replayed.substr(0, 8) == "SSPAIR01");
  // Queued before the peer: junk, a wrong proof, the replayed one, and a
  // silent one.
  int junk = stranger(l.at, std::string(64, '\x5a'));
  int wrong = stranger(l.at, "SSPAIR01" + std::string(32, '\0'));
  int replay = stranger(l.at, replayed);
  int silent = stranger(l.at, "");

  // The peer knocks from a thread of its own, with the job's key.
  uint16_t peer_port = 0;
  auto peer = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(200ms);
    detail::PairProofScope mine(key_of(7), "job.a0", 10s);
    detail::knock(l.at);
  });
  sockaddr_in from{};
  socklen_t len = sizeof from;
  const auto t0 = std::chrono::steady_clock::now();
  int c = ::accept(l.fd, reinterpret_cast<sockaddr*>(&from), &len);
  peer.get();
  REQUIRE(c >= 0);
  CHECK(std::chrono::steady_clock::now() - t0 < 5s);
  peer_port = ntohs(from.sin_port);
  CHECK(peer_port == port_of(c, true));
  // Not one of the strangers'; each of theirs was closed.
  for (int s : {junk, wrong, replay, silent}) {
    CHECK(port_of(s, false) != peer_port);
    CHECK(closed_by_peer(s));
    ::close(s);
  }
  // What follows the proof is the peer's to read: knock wrote only the
  // proof and hung up, so the stream ends here.
  char b;
  CHECK(::recv(c, &b, 1, 0) == 0);
  ::close(c);
}

TEST_CASE("a proof made with another job's key is a stranger's",
          "[pair_proof]") {
  Listener l;
  detail::PairProofScope scope(key_of(1), "job.a0", 800ms);
  // Another job's rank, in a process of its own (in this one its key
  // would be armed too): its connection is dropped, and nothing else
  // comes, so accept gives up at the timeout.
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    detail::PairProofScope mine(key_of(2), "job.a0", 800ms);
    detail::knock(l.at);
    ::_exit(0);
  }
  errno = 0;
  int c = ::accept(l.fd, nullptr, nullptr);
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(c == -1);
  CHECK(errno == ETIMEDOUT);
}

TEST_CASE(
    "inside a join, a listener no peer proves itself to gives up at the "
    "join's timeout",
    "[pair_proof]") {
  Listener l;
  detail::PairProofScope scope(key_of(9), "job.a0", 300ms);
  int silent = stranger(l.at, "");
  const auto t0 = std::chrono::steady_clock::now();
  errno = 0;
  int c = ::accept(l.fd, nullptr, nullptr);
  const auto took = std::chrono::steady_clock::now() - t0;
  CHECK(c == -1);
  CHECK(errno == ETIMEDOUT);
  CHECK(took >= 250ms);
  CHECK(took < 2s);
  CHECK(closed_by_peer(silent));
  ::close(silent);
}

// Gloo's rule (tcp/pair.cc, Pair::connect): the side whose port, as a
// network-order number, is the higher connects.
static bool connects_from(const sockaddr_storage& mine,
                          const sockaddr_storage& peers) {
  return reinterpret_cast<const sockaddr_in*>(&mine)->sin_port -
             reinterpret_cast<const sockaddr_in*>(&peers)->sin_port >
         0;
}

TEST_CASE(
    "a listener let go whose port the next listener gets is not let go: "
    "its peer's proven connection is the one accepted",
    "[pair_proof]") {
  // Note [A port let go is let go once]: Gloo closes the listener of a
  // pair this side connects from, then connects; the next mesh's listener
  // may be given the same port, and its peer connects to it.
  detail::PairProofScope scope(key_of(4), "job.a0", 5s);
  Listener peer;
  auto mine = std::make_unique<Listener>();
  while (!connects_from(mine->at, peer.at)) mine = std::make_unique<Listener>();
  const sockaddr_storage freed = mine->at;
  detail::expect_pair(freed, peer.at);
  mine.reset();  // Gloo closes the listener, then connects to the peer
  int to_peer = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(::connect(to_peer,
                    reinterpret_cast<const sockaddr*>(&peer.at),
                    sizeof(sockaddr_in)) == 0);
  // The next listener, on the port just freed.
  int next = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int on = 1;
  ::setsockopt(next, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  REQUIRE(::bind(next,
                 reinterpret_cast<const sockaddr*>(&freed),
                 sizeof(sockaddr_in)) == 0);
  REQUIRE(::listen(next, 8) == 0);
  // Its peer proves itself and hangs up; what accept hands over is that
  // connection (its stream ends after the proof), not one of our own
  // (which would stay open and silent).
  detail::knock(freed);
  int c = ::accept(next, nullptr, nullptr);
  REQUIRE(c >= 0);
  pollfd p{c, POLLIN, 0};
  REQUIRE(::poll(&p, 1, 2000) == 1);
  char b;
  CHECK(::recv(c, &b, 1, 0) == 0);
  ::close(c);
  ::close(next);
  ::close(to_peer);
}
