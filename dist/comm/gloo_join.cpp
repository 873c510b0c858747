// Joining a job's Gloo meshes (gloo_join.h).
#include "dist/comm/gloo_join.h"

#include <gloo/context.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/address.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "dist/comm/gloo_pair_auth.h"
#include "dist/comm/group_store.h"
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
// peer does (a scanner of loopback ports wins that race easily) would take
// the peer's place, and the listener would read the stranger's bytes as
// the peer's: a frame shaped like Gloo's op header aborts the worker
// (issue 32, item 5).
//
// What we do, since Gloo gives no hook: every connection to a pair's port
// proves it comes from a peer of this job before Gloo reads a byte of it
// (Note [A proof before Gloo reads] in gloo_pair_auth.cpp, around the
// `accept` and `connect` Gloo calls): the key is random per group, put in
// the store by rank 0 (a directory only this user can read; across hosts
// it is derived from the job's key), and a stranger's connection is
// dropped while the listener waits on for the peer. A stranger no longer
// takes a place, so the job goes on without a retry. An attempt still
// fails when a connect fails (a peer's process gone, or its port taken
// away): the rank that saw it says so in the store, the others' store
// waits end at once (AttemptStore), and it connects to the ports its peers
// published for it, so that none waits in Gloo's accept for a rank that
// gave up. Once every rank has said how its attempt ended, all of them
// start over with fresh pairs (new ports) if any failed, up to kAttempts
// times, then end with an error that says why: never a hang.
constexpr int kAttempts = 3;
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
    if (!rendezvous::wait_for_keys(
            *store, keys, timeout, std::chrono::milliseconds(5), [&] {
              peer_left();
            }))
      throw std::runtime_error("Wait timeout for the other ranks (" +
                               std::to_string(timeout.count()) + " ms)");
  }
};

// The listening addresses in a rank's key of a mesh (connectFullMesh
// stores one per pair, [size] - 1 of them, in the order of the peers).
std::vector<sockaddr_storage> pair_addresses(const std::vector<char>& all,
                                             int size) {
  std::vector<sockaddr_storage> out;
  if (size < 2) return out;
  const size_t each = all.size() / static_cast<size_t>(size - 1);
  if (each == 0) return out;
  for (size_t k = 0; (k + 1) * each <= all.size(); ++k) {
    try {
      gloo::transport::tcp::Address a(
          std::vector<char>(all.begin() + static_cast<long>(k * each),
                            all.begin() + static_cast<long>((k + 1) * each)));
      out.push_back(a.getSockaddr());
    } catch (const std::exception&) {
      return out;  // not an address: Gloo will say so
    }
  }
  return out;
}

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
               int rank,
               int size,
               std::chrono::milliseconds timeout)
      : fs_(fs),
        mesh_(std::move(mesh)),
        attempt_(std::move(attempt)),
        rank_(rank),
        size_(size),
        timeout_(timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    if (rank_key(key) == rank_) mine_ = pair_addresses(data, size_);
    fs_.set(mesh_ + "/" + key, data);
  }
  // Gloo gets keys it never waited for (connectFullMesh's host names):
  // wait here, so that this wait too ends when the attempt is given up.
  // A rank's key holds its pairs' addresses: ours are set before the
  // peers' are read, and each pair is told to the proofs (Note [A proof
  // before Gloo reads]).
  std::vector<char> get(const std::string& key) override {
    wait({key});
    std::vector<char> v = fs_.get(mesh_ + "/" + key);
    const int peer = rank_key(key);
    if (peer >= 0 && peer != rank_) {
      const auto theirs = pair_addresses(v, size_);
      const size_t k = static_cast<size_t>(rank_ > peer ? rank_ - 1 : rank_);
      const size_t j = static_cast<size_t>(peer > rank_ ? peer - 1 : peer);
      if (k < theirs.size() && j < mine_.size())
        expect_pair(mine_[j], theirs[k]);
    }
    return v;
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
  // The rank whose address list [key] is (connectFullMesh's keys are the
  // ranks' numbers), or -1.
  static int rank_key(const std::string& key) {
    if (key.empty() || key.size() > 6 ||
        !std::all_of(key.begin(), key.end(), [](char c) {
          return c >= '0' && c <= '9';
        }))
      return -1;
    return std::stoi(key);
  }
  JobFiles& fs_;
  std::string mesh_, attempt_;
  int rank_, size_;
  std::vector<sockaddr_storage> mine_;  // this rank's listeners, by peer
  std::chrono::milliseconds timeout_;
};

// Connects to each port the peers published for their pairs with [rank]
// in [store] (with this attempt's proof: the connect is one of those
// Note [A proof before Gloo reads] covers), and hangs up: a peer waiting
// in Gloo's accept for us, who gave up, goes on (and then finds the
// attempt given up).
void release_peers(AttemptStore& store, int rank, int size) {
  for (int i = 0; i < size; ++i) {
    if (i == rank || !store.has(std::to_string(i))) continue;
    std::vector<sockaddr_storage> all =
        pair_addresses(store.get(std::to_string(i)), size);
    size_t k = static_cast<size_t>(rank > i ? rank - 1 : rank);
    if (k < all.size()) knock(all[k]);
  }
}

std::string reason_of(const std::exception& e, int rank) {
  return "rank " + std::to_string(rank) + ": " + e.what();
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
  // The key of this group's proofs (Note [A proof before Gloo reads]).
  net::JobKey key;
  if (net::has_process_job_key()) {
    // A job across hosts: every rank holds the job's key, so the group's
    // is derived from it and is never stored.
    key = net::process_job_key().derive("gloo pair proof " + prefix);
  } else {
    const std::string key_name = prefix + ".secret";
    if (rank == 0) {
      const net::JobKey fresh = net::JobKey::generate();
      fs.set(key_name,
             std::vector<char>(fresh.bytes.begin(), fresh.bytes.end()));
    }
    fs.wait_or_left({key_name}, timeout);
    std::vector<char> kv = fs.get(key_name);
    if (kv.size() != key.bytes.size())
      throw std::runtime_error("the rendezvous store's key for " + prefix +
                               " is not " + std::to_string(key.bytes.size()) +
                               " bytes");
    std::memcpy(key.bytes.data(), kv.data(), kv.size());
  }

  std::string last;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const std::string ap = attempt_prefix(prefix, attempt);
    // Outlives the attempt's contexts: their listeners are covered until
    // they close (Note [A proof before Gloo reads]).
    PairProofScope proofs(key, ap, timeout);
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
            rank,
            size,
            timeout));
        auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
        ctx->setTimeout(timeout);
        ctx->connectFullMesh(*stores.back(), device);
        (m == 0 ? out.main : out.lanes.emplace_back()) = ctx;
      }
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
  throw JoinError("the workers could not connect in " +
                  std::to_string(kAttempts) + " tries (last: " + last + ")");
}

}  // namespace ss::dist::detail
