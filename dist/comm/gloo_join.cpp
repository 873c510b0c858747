// Joining a job's Gloo meshes (gloo_join.h).
#include "dist/comm/gloo_join.h"

#include <arpa/inet.h>
#include <gloo/context.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/address.h>
#include <gloo/transport/unbound_buffer.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>

#include "dist/net/auth.h"
#include "dist/rendezvous/store.h"

namespace ss::dist::detail {

namespace {

// Note [A stranger's connection]
// Gloo's TCP transport (the 2022 snapshot Debian ships) authenticates
// nothing. Each pair of ranks makes a listening socket of its own on
// 127.0.0.1 (port 0: the kernel's pick), publishes its address in the
// store, and the side whose address compares lower accepts the *first*
// connection that arrives on it (listen backlog 1), closes the listener
// and takes that connection for its peer's: no sequence number, no peer
// address check, no handshake (tcp/pair.cc: Pair::listen,
// handleListening). The other side connects to it. There is no hook
// before or after accept to check who connected, and the snapshot's TLS
// transport (tcp/tls, OpenSSL) is not built into Debian's libgloo. So a
// local process that connects to a listening port of a job before the
// peer does (a scanner of loopback ports wins that race easily: the peer
// polls the store every 10 ms) takes the peer's place: the peer's connect
// is refused, and the listener reads the stranger's bytes as the peer's.
// Before this, that ended every cpu[...] job's rendezvous with "a peer is
// gone", or hung it until the collective timeout (600 s) when the
// stranger stayed silent.
//
// What we do, since Gloo gives no hook: after the meshes are connected,
// every rank sends each peer, on every pair, a token (a magic, its rank,
// and a secret that rank 0 put in the store, which is a directory only
// this user can read; docs/trust.md), and checks the token it receives.
// A pair whose token is wrong or missing, or whose connect was refused,
// fails this attempt, and the rank that saw it says so in the store: the
// others' store waits and token waits end at once (AttemptStore, the
// watcher in check_tokens), and it connects to the ports its peers
// published for it, so that none waits in Gloo's accept for a rank that
// gave up. Once every rank has said how its attempt ended, all of them
// start over with fresh pairs (new ports) if any failed, up to kAttempts
// times: a stranger that tries once is survived; one that keeps winning
// the race ends the job with an error that names the port and what came
// on it, never a hang.
constexpr int kAttempts = 3;
// How long a rank waits for a peer's token: the peers connected this mesh
// with us, so they are a few steps behind at most; a connection that has
// sent no token by then is a silent stranger (or one whose bytes Gloo
// took for the head of a message that never ends).
constexpr std::chrono::milliseconds kTokenWait{4000};
constexpr uint64_t kTokenSlot = uint64_t{0x22} << 56;
constexpr size_t kTokenBytes = 32;
using Token = std::array<char, kTokenBytes>;
using Clock = std::chrono::steady_clock;

// This attempt was given up by another rank (its reason is in the store).
struct AttemptAbandoned : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Note [A peer that left before joining]
// A group joined on first use (an spmd fn's Gloo group of some mesh axes:
// Note [Spmd fns on workers]) waits in the store for every member. A
// member whose call failed before it reached the group never comes: its
// worker leaves the groups it joined (their waiting peers fail at once,
// as the world's), and for those it did not, it sets the group's `.left`
// key (leave_unjoined). Every wait of a join polls for that key too and
// ends at once with PeerLeft, so the run ends with the failed member's
// error, not at the collective timeout.
struct PeerLeft : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string left_key(const std::string& prefix) {
  return prefix + ".left";
}

// The job's store (a directory's FileStore, or the controller's across
// hosts: dist/rendezvous/store.h), with waits that end when a member left
// the group being joined (the Note).
struct JobFiles {
  explicit JobFiles(const std::string& address)
      : store(rendezvous::open_store(address)) {}
  std::unique_ptr<rendezvous::Store> store;
  std::string left;  // the group's `.left` key; empty: none
  void set(const std::string& key, const std::vector<char>& value) {
    store->set(key, value);
  }
  std::vector<char> get(const std::string& key) { return store->get(key); }
  bool check(const std::vector<std::string>& keys) {
    return store->check(keys);
  }
  void peer_left() {
    if (!left.empty() && check({left}))
      throw PeerLeft(
          "a member of this group failed before it joined it (its error "
          "is the call's)");
  }
  void wait_or_left(const std::vector<std::string>& keys,
                    std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (!check(keys)) {
      peer_left();
      if (Clock::now() > deadline)
        throw std::runtime_error("Wait timeout for the other ranks (" +
                                 std::to_string(timeout.count()) + " ms)");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
};

std::string attempt_prefix(const std::string& prefix, int attempt) {
  return prefix + ".a" + std::to_string(attempt);
}

// The keys of one mesh of one attempt, over the job's FileStore. Its waits
// use the job's timeout (a worker may start slowly) whatever Gloo passes,
// and end early when a rank has given the attempt up.
class AttemptStore : public gloo::rendezvous::Store {
 public:
  AttemptStore(JobFiles& fs,
               std::string mesh,
               std::string attempt,
               int size,
               std::chrono::milliseconds timeout)
      : fs_(fs),
        mesh_(std::move(mesh)),
        attempt_(std::move(attempt)),
        size_(size),
        timeout_(timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    fs_.set(mesh_ + "/" + key, data);
  }
  // Gloo gets keys it never waited for (connectFullMesh's host names):
  // wait here, so that this wait too ends when the attempt is given up.
  std::vector<char> get(const std::string& key) override {
    wait({key});
    return fs_.get(mesh_ + "/" + key);
  }
  void wait(const std::vector<std::string>& keys) override {
    wait(keys, timeout_);
  }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds&) override {
    std::vector<std::string> full;
    for (const std::string& k : keys) full.push_back(mesh_ + "/" + k);
    const auto deadline = Clock::now() + timeout_;
    while (!fs_.check(full)) {
      fs_.peer_left();
      if (abandoned())
        throw AttemptAbandoned("another rank gave this attempt up");
      if (Clock::now() > deadline)
        throw std::runtime_error("Wait timeout for the other ranks (" +
                                 std::to_string(timeout_.count()) + " ms)");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  bool has(const std::string& key) { return fs_.check({mesh_ + "/" + key}); }
  bool abandoned() {
    for (int r = 0; r < size_; ++r)
      if (fs_.check({attempt_ + ".fail." + std::to_string(r)})) return true;
    return false;
  }

 private:
  JobFiles& fs_;
  std::string mesh_, attempt_;
  int size_;
  std::chrono::milliseconds timeout_;
};

Token token_of(int rank, const std::string& secret) {
  Token t{};
  std::memcpy(t.data(), "ss-peer", 8);
  int64_t r = rank;
  std::memcpy(t.data() + 8, &r, 8);
  std::memcpy(
      t.data() + 16, secret.data(), std::min<size_t>(16, secret.size()));
  return t;
}

// "port 40123 of 127.0.0.1": the local end of [peer]'s pair, the port a
// stranger connected to (Gloo's Address::str prints the port's bytes
// swapped).
std::string port_of(gloo::Context& ctx, int peer) {
  try {
    auto* a = dynamic_cast<const gloo::transport::tcp::Address*>(
        &ctx.getPair(peer)->address());
    if (!a) return "its port";
    const sockaddr_storage& ss = a->getSockaddr();
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (ss.ss_family == AF_INET) {
      auto* in = reinterpret_cast<const sockaddr_in*>(&ss);
      ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
      port = ntohs(in->sin_port);
    } else if (ss.ss_family == AF_INET6) {
      auto* in = reinterpret_cast<const sockaddr_in6*>(&ss);
      ::inet_ntop(AF_INET6, &in->sin6_addr, host, sizeof host);
      port = ntohs(in->sin6_port);
    }
    return "port " + std::to_string(port) + " of " + host;
  } catch (...) {
    return "its port";
  }
}

// Every peer's token on every pair of [ctx]; throws naming the first pair
// whose connection is not a peer's.
void check_tokens(gloo::Context& ctx,
                  int rank,
                  int size,
                  const std::string& secret,
                  AttemptStore& store,
                  std::chrono::milliseconds timeout) {
  timeout = std::min(timeout, kTokenWait);
  Token mine = token_of(rank, secret);
  std::vector<Token> theirs(size);
  std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> rb(size),
      sb(size);
  for (int p = 0; p < size; ++p) {
    if (p == rank) continue;
    rb[p] = ctx.createUnboundBuffer(theirs[p].data(), kTokenBytes);
    rb[p]->recv(p, kTokenSlot);
    sb[p] = ctx.createUnboundBuffer(mine.data(), kTokenBytes);
    sb[p]->send(p, kTokenSlot);
  }
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done.load()) {
      if (store.abandoned()) {
        for (auto& b : rb)
          if (b) b->abortWaitRecv();
        for (auto& b : sb)
          if (b) b->abortWaitSend();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  struct Join {
    std::atomic<bool>& done;
    std::thread& t;
    ~Join() {
      done.store(true);
      t.join();
    }
  } join{done, watcher};
  for (int p = 0; p < size; ++p) {
    if (p == rank) continue;
    const std::string at = port_of(ctx, p);
    bool got = false;
    try {
      got = rb[p]->waitRecv(nullptr, timeout);
    } catch (const std::exception& e) {
      throw std::runtime_error(
          "the connection meant for rank " + std::to_string(p) + " on " + at +
          " is not from a peer of this job: it failed before it sent the "
          "job's token (" +
          e.what() + ")");
    }
    if (!got) throw AttemptAbandoned("another rank gave this attempt up");
    if (theirs[p] != token_of(p, secret))
      throw std::runtime_error(
          "the connection meant for rank " + std::to_string(p) + " on " + at +
          " is not from a peer of this job: it sent something other than the "
          "job's token");
  }
  for (int p = 0; p < size; ++p)
    if (p != rank && !sb[p]->waitSend(nullptr, timeout))
      throw AttemptAbandoned("another rank gave this attempt up");
}

// Connects to each port the peers published for their pairs with [rank]
// in [store], and hangs up: a peer waiting in Gloo's accept for us, who
// gave up, goes on (and then finds the attempt given up).
void release_peers(AttemptStore& store, int rank, int size) {
  for (int i = 0; i < size; ++i) {
    if (i == rank || !store.has(std::to_string(i))) continue;
    std::vector<char> all = store.get(std::to_string(i));
    size_t each = all.size() / static_cast<size_t>(size - 1);
    size_t k = static_cast<size_t>(rank > i ? rank - 1 : rank);
    if (each == 0 || (k + 1) * each > all.size()) continue;
    gloo::transport::tcp::Address a(std::vector<char>(
        all.begin() + k * each, all.begin() + (k + 1) * each));
    const sockaddr_storage& ss = a.getSockaddr();
    int fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    socklen_t len =
        ss.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    (void)::connect(fd, reinterpret_cast<const sockaddr*>(&ss), len);
    ::close(fd);
  }
}

std::string reason_of(const std::exception& e, int rank) {
  std::string what = e.what();
  // A connect to a peer's port refused, or reset once it took: the peer
  // had taken the first connection on that port, which was not ours.
  if (what.find("Connection refused") != std::string::npos ||
      what.find("Connection reset") != std::string::npos)
    return "rank " + std::to_string(rank) +
           " could not connect to a peer's port (" + what +
           "): the peer had already taken another connection on it, one "
           "that is not from a peer of this job";
  return "rank " + std::to_string(rank) + ": " + what;
}

}  // namespace

JoinedMeshes join_meshes(int rank,
                         int size,
                         const std::string& store_dir,
                         const std::string& prefix,
                         int lanes,
                         std::shared_ptr<gloo::transport::Device>& device,
                         std::chrono::milliseconds timeout) {
  JobFiles fs(store_dir);
  fs.left = left_key(prefix);
  std::string secret;
  if (net::has_process_job_key()) {
    // A job across hosts: every rank holds the job's key, so the pairs'
    // secret is derived from it (one per group) and is never stored.
    const net::JobKey k =
        net::process_job_key().derive("gloo pair token " + prefix);
    secret.assign(reinterpret_cast<const char*>(k.bytes.data()), 16);
  } else {
    const std::string secret_key = prefix + ".secret";
    if (rank == 0) {
      std::random_device rd;
      std::vector<char> s(16);
      for (char& c : s) c = static_cast<char>(rd());
      fs.set(secret_key, s);
    }
    fs.wait_or_left({secret_key}, timeout);
    std::vector<char> sv = fs.get(secret_key);
    secret.assign(sv.begin(), sv.end());
  }

  std::string last;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const std::string ap = attempt_prefix(prefix, attempt);
    std::vector<std::unique_ptr<AttemptStore>> stores;
    JoinedMeshes out;
    out.prefix = ap;
    std::string failed;
    bool abandoned = false;
    try {
      for (int m = 0; m <= lanes; ++m) {
        stores.push_back(std::make_unique<AttemptStore>(
            fs,
            ap + (m == 0 ? ".main" : ".lane" + std::to_string(m - 1)),
            ap,
            size,
            timeout));
        auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
        ctx->setTimeout(timeout);
        ctx->connectFullMesh(*stores.back(), device);
        (m == 0 ? out.main : out.lanes.emplace_back()) = ctx;
      }
      check_tokens(*out.main, rank, size, secret, *stores[0], timeout);
      for (int l = 0; l < lanes; ++l)
        check_tokens(
            *out.lanes[l], rank, size, secret, *stores[l + 1], timeout);
    } catch (const AttemptAbandoned&) {
      abandoned = true;
    } catch (const PeerLeft&) {
      throw;
    } catch (const std::exception& e) {
      failed = reason_of(e, rank);
      if (failed.find("Wait timeout") != std::string::npos) throw;
    }
    const std::string mine = ap + ".done." + std::to_string(rank);
    if (!failed.empty() || abandoned) {
      if (!failed.empty())
        fs.set(ap + ".fail." + std::to_string(rank),
               std::vector<char>(failed.begin(), failed.end()));
      for (auto& s : stores) release_peers(*s, rank, size);
      fs.set(mine, {'x'});
    } else {
      fs.set(mine, {'o', 'k'});
    }
    // Every rank says how its attempt ended; any failure: all try again.
    std::vector<std::string> done;
    for (int r = 0; r < size; ++r)
      done.push_back(ap + ".done." + std::to_string(r));
    fs.wait_or_left(done, timeout);
    std::string reasons;
    for (int r = 0; r < size; ++r) {
      std::string k = ap + ".fail." + std::to_string(r);
      if (!fs.check({k})) continue;
      std::vector<char> v = fs.get(k);
      reasons +=
          (reasons.empty() ? "" : "; ") + std::string(v.begin(), v.end());
    }
    bool all_ok = true;
    for (int r = 0; r < size; ++r) {
      std::vector<char> v = fs.get(done[r]);
      all_ok = all_ok && v.size() == 2;
    }
    if (all_ok) return out;
    last = reasons.empty() ? "a rank gave up without saying why" : reasons;
    // Said once, by rank 0: the user learns that something connects to
    // the job's ports even when the next try goes through.
    if (rank == 0 && attempt + 1 < kAttempts)
      std::fprintf(stderr,
                   "note: try %d of %d to connect the workers failed (%s); "
                   "trying again with new ports; see docs/trust.md\n",
                   attempt + 1,
                   kAttempts,
                   last.c_str());
  }
  throw StrangerError(
      "a connection that is not from a peer of this job took a place in "
      "each of its " +
      std::to_string(kAttempts) +
      " tries to connect the workers (last: " + last +
      "). Another local user or process connects to this job's ports on "
      "127.0.0.1; see docs/trust.md");
}

void leave_unjoined(const std::string& store_dir, const std::string& prefix) {
  // Every member that failed says so: the first one's key is the one.
  JobFiles fs(store_dir);
  try {
    if (!fs.check({left_key(prefix)})) fs.set(left_key(prefix), {'x'});
  } catch (const std::exception&) {
    // set by another member meanwhile
  }
}

}  // namespace ss::dist::detail
