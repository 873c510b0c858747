// Gloo's TCP pairs proven before Gloo reads a byte (gloo_pair_auth.h).
#include "dist/comm/gloo_pair_auth.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <vector>

namespace ss::dist::detail {

// Note [A proof before Gloo reads]
// Gloo's TCP pairs (the 2022 snapshot Debian ships) authenticate nothing:
// the listening side of a pair accepts the first connection on its port and
// reads it as its peer's (Note [A stranger's connection] in gloo_join.cpp
// has the details). Reading a stranger's bytes is not only a wrong peer: a
// frame that looks like Gloo's op header (48 bytes) makes Gloo's event
// loop fail an enforce on a thread where nothing catches it, and the
// worker dies of SIGABRT (issue 32, item 5: another local user could abort
// every worker of every job). So no byte of a connection may reach Gloo
// before the connection proves it is a peer's, and Gloo has no hook for
// that: the proof happens around the two calls Gloo makes, `accept` and
// `connect`, which this file defines for the whole process. The `ss`
// binary and the test binaries link it, so the dynamic linker binds
// libgloo's calls to these functions (the executable's symbols come before
// libc's); everything else in ss calls accept4 and its own sockets.
//
//   connect: on a thread inside a PairProofScope, to an address the
//     joining thread read from the rendezvous store as a pair's (the only
//     connects that go there are Gloo's, and release_peers'), the connect
//     completes (Gloo's socket is non-blocking: polled, with the join's
//     timeout), then the proof is written, then Gloo gets 0: it registers
//     the socket, sees it writable and takes it as connected. Any other
//     connect is the system call, untouched.
//   accept: while any scope is alive, the listener's waiting connections
//     are all taken, and each is read (without waiting on it alone: a
//     silent stranger holds up nobody) until one has sent a right proof;
//     that one is Gloo's, the others are closed. A wrong proof, or a
//     connection that closes, is dropped at once; connections past 16
//     pending drop the oldest. Outside every scope, accept is accept.
//
// The proof is 8 bytes of magic and HMAC-SHA256(key, label, the listener's
// address and port): the key is the join's (random per group, kept in the
// private rendezvous directory; across hosts derived from the job's key:
// docs/trust.md), the label the attempt's store prefix. It is one-way, so
// the connecting side waits on nobody (a two-way handshake would have the
// joining thread wait on the peer's event loop, which may be reading
// another pair's proof). A proof seen on the network is good for one
// listener of one attempt, which closes as soon as the first good proof
// arrives: the sender's own connection carries it first. After the proof
// the bytes are Gloo's, as before: not encrypted (docs/several-hosts.md).
//
// While accept waits, the device's event loop waits with it (Gloo calls
// accept from its loop thread): only while a join is connecting, and for a
// peer that is connecting at that moment, or at most the join's timeout.

namespace {

constexpr char kMagic[8] = {'S', 'S', 'P', 'A', 'I', 'R', '0', '1'};
constexpr size_t kProofBytes = sizeof kMagic + 32;
constexpr size_t kMaxPending = 16;
using Proof = std::array<char, kProofBytes>;
using Clock = std::chrono::steady_clock;

struct Armed {
  bool used = false;
  net::JobKey key;
  std::string label;
  std::chrono::milliseconds timeout{0};
};

std::mutex g_mu;
std::vector<Armed> g_armed;  // slots; a free one has used == false
std::atomic<bool> g_noted{false};

// The joining thread's scope, for its connects.
struct ThreadArm {
  bool on = false;
  Armed armed;
  std::vector<sockaddr_storage> expected;  // peers' listeners we connect to
  std::vector<std::string> let_go;  // our listener of each, nobody will use
};
thread_local ThreadArm t_arm;

// Listeners (address_bytes) of pairs this process connects from, and the
// connection of our own each was given to hand Gloo (-1: none yet). An
// entry lives from expect_pair until Gloo's connect for its pair, which
// Gloo makes just after closing the listener (Note [A port let go is let go
// once]).
std::vector<std::pair<std::string, int>> g_let_go;

// Note [A port let go is let go once]
// A listener is let go by its address, since accept sees only the
// listening socket. Once Gloo closes it (in Pair::connect, just before its
// connect to the peer), the kernel may give its port to the next listener
// this process binds: the next mesh's pair, whose peer does connect to it.
// Were the entry still there, that listener would be let go too: the
// peer's proven connection closed as a stranger's (a reset, with its proof
// unread), Gloo handed our own connection, and the peer's pair failing
// with "Connection reset by peer" after the join had said it was made (CI
// saw it once, on a run of many joins). So the entry goes at Gloo's
// connect for its pair, while no other listener can hold the port.
void forget_let_go(const std::string& listener) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (auto it = g_let_go.begin(); it != g_let_go.end(); ++it)
    if (it->first == listener) {
      if (it->second >= 0) ::close(it->second);
      g_let_go.erase(it);
      return;
    }
}

// Family, port and address: what both ends know of the listener.
std::string address_bytes(const sockaddr_storage& a) {
  std::string s(1, static_cast<char>(a.ss_family));
  if (a.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
    s.append(reinterpret_cast<const char*>(&in->sin_port), 2);
    s.append(reinterpret_cast<const char*>(&in->sin_addr), 4);
  } else if (a.ss_family == AF_INET6) {
    const auto* in = reinterpret_cast<const sockaddr_in6*>(&a);
    s.append(reinterpret_cast<const char*>(&in->sin6_port), 2);
    s.append(reinterpret_cast<const char*>(&in->sin6_addr), 16);
  }
  return s;
}

Proof proof_for(const Armed& a, const sockaddr_storage& listener) {
  std::string input = "shapescript gloo pair v1";
  input.push_back('\0');
  input += a.label;
  input.push_back('\0');
  input += address_bytes(listener);
  const auto mac = net::hmac_sha256(a.key, input);
  Proof p{};
  std::memcpy(p.data(), kMagic, sizeof kMagic);
  std::memcpy(p.data() + sizeof kMagic, mac.data(), mac.size());
  return p;
}

std::optional<sockaddr_storage> local_address(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return std::nullopt;
  return a;
}

bool is_tcp(int fd) {
  auto a = local_address(fd);
  int type = 0;
  socklen_t len = sizeof type;
  return a && (a->ss_family == AF_INET || a->ss_family == AF_INET6) &&
         ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
         type == SOCK_STREAM;
}

bool proves(const Proof& got, int fd, const std::vector<Armed>& armed) {
  auto local = local_address(fd);
  if (!local) return false;
  for (const Armed& a : armed) {
    const Proof want = proof_for(a, *local);
    if (CRYPTO_memcmp(got.data(), want.data(), want.size()) == 0) return true;
  }
  return false;
}

void note_dropped() {
  // Once per process: the user learns that something connects to the
  // job's ports (the worker's stderr reaches the user, prefixed).
  if (!g_noted.exchange(true))
    std::fprintf(stderr,
                 "note: a connection to this worker's port did not prove "
                 "it is a peer of this job and was dropped; something else "
                 "connects to the job's ports (see docs/trust.md)\n");
}

int system_accept(int fd, sockaddr* addr, socklen_t* len) {
  return ::accept4(fd, addr, len, 0);
}

int system_connect(int fd, const sockaddr* addr, socklen_t len) {
  return static_cast<int>(::syscall(SYS_connect, fd, addr, len));
}

// The length connect takes for an address of [family].
socklen_t length_of(sa_family_t family) {
  return family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

bool same_address(const sockaddr_storage& a, const sockaddr* b) {
  if (a.ss_family != b->sa_family) return false;
  sockaddr_storage bs{};
  std::memcpy(&bs, b, length_of(b->sa_family));
  return address_bytes(a) == address_bytes(bs);
}

// Gloo's rule for which side of a pair connects (tcp/pair.cc,
// Pair::connect): the addresses compared byte for byte, then the ports'
// network-order values subtracted; the higher side connects.
bool this_side_connects(const sockaddr_storage& mine,
                        const sockaddr_storage& peers) {
  int rv = 0;
  if (mine.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&mine);
    const auto* b = reinterpret_cast<const sockaddr_in*>(&peers);
    rv = std::memcmp(&a->sin_addr, &b->sin_addr, sizeof(in_addr));
    if (rv == 0) rv = a->sin_port - b->sin_port;
  } else {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&mine);
    const auto* b = reinterpret_cast<const sockaddr_in6*>(&peers);
    rv = std::memcmp(&a->sin6_addr, &b->sin6_addr, sizeof(in6_addr));
    if (rv == 0) rv = a->sin6_port - b->sin6_port;
  }
  return rv > 0;
}

bool is_let_go(const sockaddr_storage& listener) {
  const std::string key = address_bytes(listener);
  std::lock_guard<std::mutex> lock(g_mu);
  for (const auto& [k, fd] : g_let_go)
    if (k == key) return true;
  return false;
}

// A connection of our own to [listener], accepted from it: what Gloo gets
// from a listener it is about to close (the Note). Its other end stays
// open until the scope ends, so Gloo's end never reads anything; Gloo
// closes its end when it connects the pair from this side.
int own_connection(int listener, const sockaddr_storage& at) {
  int mine = ::socket(at.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (mine < 0) return -1;
  const socklen_t len = length_of(at.ss_family);
  if (system_connect(mine, reinterpret_cast<const sockaddr*>(&at), len) != 0) {
    ::close(mine);
    return -1;
  }
  auto own = local_address(mine);
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (own && Clock::now() < deadline) {
    pollfd p{listener, POLLIN, 0};
    ::poll(&p, 1, 100);
    int c = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    sockaddr_storage peer{};
    socklen_t plen = sizeof peer;
    ::getpeername(c, reinterpret_cast<sockaddr*>(&peer), &plen);
    if (address_bytes(peer) != address_bytes(*own)) {
      ::close(c);  // a stranger's, queued before ours
      note_dropped();
      continue;
    }
    std::lock_guard<std::mutex> lock(g_mu);
    for (auto& [k, fd] : g_let_go)
      if (k == address_bytes(at) && fd < 0) {
        fd = mine;
        return c;
      }
    ::close(c);
    break;  // let go meanwhile (the scope ended): nobody keeps ours
  }
  ::close(mine);
  return -1;
}

struct Pending {
  int fd;
  Proof got{};
  size_t n = 0;
};

int accept_with_proof(int listener, sockaddr* addr, socklen_t* addrlen) {
  std::vector<Armed> armed;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    for (const Armed& a : g_armed)
      if (a.used) armed.push_back(a);
  }
  if (armed.empty() || !is_tcp(listener))
    return system_accept(listener, addr, addrlen);
  std::chrono::milliseconds timeout{0};
  for (const Armed& a : armed) timeout = std::max(timeout, a.timeout);
  const auto deadline = Clock::now() + timeout;
  // Gloo closes the listener when accept returns: non-blocking is ours.
  ::fcntl(listener, F_SETFL, ::fcntl(listener, F_GETFL) | O_NONBLOCK);

  std::vector<Pending> pending;
  auto drop = [&](size_t i) {
    ::close(pending[i].fd);
    pending.erase(pending.begin() + static_cast<long>(i));
  };
  auto give_up = [&](int err) {
    while (!pending.empty()) drop(0);
    errno = err;
    return -1;
  };
  const auto at = local_address(listener);
  for (;;) {
    if (at && is_let_go(*at)) {
      while (!pending.empty()) drop(0);
      int c = own_connection(listener, *at);
      if (c < 0) errno = ECONNABORTED;
      return c;
    }
    for (;;) {  // every connection waiting on the listener
      int c =
          ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (c < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        return give_up(errno);
      }
      if (pending.size() == kMaxPending) {
        drop(0);
        note_dropped();
      }
      pending.push_back({c});
    }
    for (size_t i = 0; i < pending.size();) {  // what each has sent
      Pending& p = pending[i];
      ssize_t r = ::recv(p.fd, p.got.data() + p.n, kProofBytes - p.n, 0);
      if (r < 0 &&
          (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        ++i;
        continue;
      }
      if (r <= 0) {  // closed or failed before its proof
        drop(i);
        continue;
      }
      p.n += static_cast<size_t>(r);
      if (p.n < kProofBytes) continue;  // read again: more may be there
      if (!proves(p.got, p.fd, armed)) {
        drop(i);
        note_dropped();
        continue;
      }
      const int fd = p.fd;
      pending.erase(pending.begin() + static_cast<long>(i));
      while (!pending.empty()) drop(0);
      if (addr && addrlen) ::getpeername(fd, addr, addrlen);
      return fd;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - Clock::now());
    if (left.count() <= 0) return give_up(ETIMEDOUT);
    std::vector<pollfd> fds{{listener, POLLIN, 0}};
    for (const Pending& p : pending) fds.push_back({p.fd, POLLIN, 0});
    ::poll(fds.data(),
           fds.size(),
           static_cast<int>(std::min<long long>(left.count(), 5)));
  }
}

// Connects [fd] to [addr] and sends [armed]'s proof for it; 0 or -1 with
// errno, as connect.
int connect_and_prove(int fd,
                      const sockaddr* addr,
                      socklen_t len,
                      const Armed& armed) {
  if (system_connect(fd, addr, len) != 0 && errno != EINPROGRESS) return -1;
  const auto deadline = Clock::now() + armed.timeout;
  try {  // until connected (Gloo's socket is non-blocking)
    if (!net::wait_writable(fd, deadline)) {
      errno = ETIMEDOUT;
      return -1;
    }
  } catch (const net::NetError&) {
    return -1;  // poll's errno
  }
  int err = 0;
  socklen_t elen = sizeof err;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0) return -1;
  if (err != 0) {
    errno = err;
    return -1;
  }
  sockaddr_storage to{};
  std::memcpy(&to, addr, std::min<size_t>(len, sizeof to));
  const Proof proof = proof_for(armed, to);
  try {
    net::write_all(fd, proof.data(), proof.size(), deadline, "a pair's proof");
  } catch (const net::NetError&) {
    errno = ECONNRESET;
    return -1;
  }
  return 0;
}

int connect_with_proof(int fd, const sockaddr* addr, socklen_t len) {
  ThreadArm& t = t_arm;
  if (!t.on || addr == nullptr) return system_connect(fd, addr, len);
  const auto e = std::find_if(
      t.expected.begin(), t.expected.end(), [&](const sockaddr_storage& a) {
        return same_address(a, addr);
      });
  if (e == t.expected.end()) return system_connect(fd, addr, len);
  // Gloo has closed this pair's listener (Note [A port let go is let go
  // once]).
  std::string& listener = t.let_go[static_cast<size_t>(e - t.expected.begin())];
  if (!listener.empty()) {
    forget_let_go(listener);
    listener.clear();
  }
  return connect_and_prove(fd, addr, len, t.armed);
}

}  // namespace

PairProofScope::PairProofScope(const net::JobKey& key,
                               std::string label,
                               std::chrono::milliseconds timeout) {
  Armed a{true, key, std::move(label), timeout};
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto free = std::find_if(
        g_armed.begin(), g_armed.end(), [](const Armed& s) { return !s.used; });
    if (free == g_armed.end()) free = g_armed.insert(g_armed.end(), Armed{});
    *free = a;
    slot_ = static_cast<size_t>(free - g_armed.begin());
  }
  t_arm = ThreadArm{};
  t_arm.on = true;
  t_arm.armed = std::move(a);
}

PairProofScope::~PairProofScope() {
  for (const std::string& mine : t_arm.let_go)
    if (!mine.empty()) forget_let_go(mine);
  std::lock_guard<std::mutex> lock(g_mu);
  g_armed[slot_] = Armed{};
  t_arm = ThreadArm{};
}

void expect_pair(const sockaddr_storage& mine, const sockaddr_storage& peers) {
  if (!t_arm.on || mine.ss_family != peers.ss_family ||
      !this_side_connects(mine, peers))
    return;
  t_arm.expected.push_back(peers);
  t_arm.let_go.push_back(address_bytes(mine));
  std::lock_guard<std::mutex> lock(g_mu);
  g_let_go.emplace_back(address_bytes(mine), -1);
}

void knock(const sockaddr_storage& to) {
  if (!t_arm.on) return;
  int fd = ::socket(to.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  const socklen_t len = length_of(to.ss_family);
  (void)connect_and_prove(
      fd, reinterpret_cast<const sockaddr*>(&to), len, t_arm.armed);
  ::close(fd);
}

bool pair_proofs_in_effect() {
  // Asked of the dynamic linker, which binds libgloo's calls the same way.
  return ::dlsym(RTLD_DEFAULT, "accept") ==
             reinterpret_cast<void*>(&::accept) &&
         ::dlsym(RTLD_DEFAULT, "connect") ==
             reinterpret_cast<void*>(&::connect);
}

}  // namespace ss::dist::detail

// The process's accept and connect (Note [A proof before Gloo reads]).
extern "C" int accept(int fd, sockaddr* addr, socklen_t* addrlen) {
  return ss::dist::detail::accept_with_proof(fd, addr, addrlen);
}

extern "C" int connect(int fd, const sockaddr* addr, socklen_t len) {
  return ss::dist::detail::connect_with_proof(fd, addr, len);
}
