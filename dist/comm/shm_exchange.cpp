// GlooComm's direct exchange through shared memory (shm_exchange.h).
#include "dist/comm/shm_exchange.h"

#include <fcntl.h>
#include <immintrin.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "dist/rendezvous/store.h"

namespace ss::dist::detail {

// Note [Direct exchange in shared memory]
// The direct exchange (Note [Direct exchange] in gloo_comm.cpp) sends each
// rank's whole buffer to every peer over a TCP socket. On one host that is
// two copies through the kernel's loopback for every byte, and the
// kernel's share of a step showed it: the README MLP at batch 64 on
// cpu[0 1 2] spent 38% of both cores in the kernel's TCP code (perf), a
// worker's main thread as much time in the kernel as in ss. So when a
// group's ranks share this host's /dev/shm (a `cpu[...]` job, whose store
// is a directory here) its lanes exchange through a shared segment
// instead: per lane, a 1 MiB slot for each ordered pair of ranks and two
// counters, `posted` (chunks the sender wrote into the slot) and `acked`
// (chunks the receiver copied out). A chunk goes as on the sockets: a rank
// writes chunk k to each peer's slot once that peer acked chunk k - 1, then
// copies chunk k out of each peer's slot and acks it. A write waits only
// for a read that needs nothing of the writer's, so it cannot deadlock,
// and every rank receives the same bytes the sockets carried, so the
// reductions after it (in rank order) give the same bits.
//
// Waiting: a few microseconds of spinning (the peer is often about to
// post), then a futex wait on the counter (shared between processes: no
// FUTEX_PRIVATE_FLAG), woken by every post and ack. Three workers share
// two cores here, so a waiter must sleep, not spin.
//
// Failure, as the sockets report it: each rank holds an OFD lock on its
// own byte of the segment's file while it is in the group; the kernel
// drops it when the process ends (even by SIGKILL) or the rank closes.
// A waiter asks for the peers' locks every 20 ms: a free lock, or the
// peer's `closed` mark, is PeerGone within that; the deadline is the
// call's timeout. After a failure the communicator is closed, as always.
//
// Joining: rank 0 creates the segment under the name of the job's
// rendezvous directory (so the controller's cleanup and the sweep of dead
// jobs remove it, Note [A job's life is a lock]), 0600, with its memory
// allocated at once (no SIGBUS later where /dev/shm is small), and writes a
// random nonce in it; the store (the private directory) tells the others
// its name and nonce. Each maps it and checks the nonce (a rank that sees
// another /dev/shm, a container's say, does not find it or finds other
// bytes) and says so in the store; only when all did is it used, and rank
// 0 unlinks the name at once, so nothing is left behind. Otherwise every
// rank keeps the sockets.

namespace {

constexpr uint64_t kMagic = 0x3143584d53535353;  // "SSSSMXC1"
constexpr size_t kSlotBytes = size_t{1} << 20;
constexpr int kSpins = 256;
constexpr auto kLivenessEvery = std::chrono::milliseconds(20);
using Clock = std::chrono::steady_clock;

struct alignas(64) Counter {
  std::atomic<uint32_t> v;
};
static_assert(sizeof(Counter) == 64);
static_assert(std::atomic<uint32_t>::is_always_lock_free);

struct alignas(64) Header {
  uint64_t magic;
  unsigned char nonce[16];
  uint32_t size, lanes;
};

// Where everything is in a segment of [size] ranks and [lanes] lanes.
struct Layout {
  int size, lanes;
  size_t pairs() const { return static_cast<size_t>(size) * (size - 1); }
  size_t closed_at() const { return sizeof(Header); }
  size_t counters_at() const {
    return closed_at() + sizeof(Counter) * static_cast<size_t>(size);
  }
  size_t data_at() const {
    const size_t end = counters_at() + sizeof(Counter) * 2 * pairs() * lanes;
    return (end + 4095) / 4096 * 4096;
  }
  size_t bytes() const { return data_at() + kSlotBytes * pairs() * lanes; }
  // The ordered pair (src, dst)'s index among a lane's pairs.
  size_t pair(int src, int dst) const {
    return static_cast<size_t>(src) * (size - 1) +
           static_cast<size_t>(dst < src ? dst : dst - 1);
  }
  size_t posted(int lane, int src, int dst) const {
    return counters_at() +
           sizeof(Counter) * (2 * (pairs() * lane + pair(src, dst)));
  }
  size_t acked(int lane, int src, int dst) const {
    return posted(lane, src, dst) + sizeof(Counter);
  }
  size_t slot(int lane, int src, int dst) const {
    return data_at() + kSlotBytes * (pairs() * lane + pair(src, dst));
  }
};

std::atomic<uint32_t>& word(void* base, size_t at) {
  return reinterpret_cast<Counter*>(static_cast<char*>(base) + at)->v;
}

void wake(std::atomic<uint32_t>& w) {
  ::syscall(SYS_futex,
            reinterpret_cast<uint32_t*>(&w),
            FUTEX_WAKE,
            INT_MAX,
            nullptr,
            nullptr,
            0);
}

// [v] is at least [target] (the counters wrap after 2^32 chunks).
bool reached(uint32_t v, uint32_t target) {
  return static_cast<int32_t>(v - target) >= 0;
}

// Sets (or, with F_UNLCK, asks about) an OFD lock on byte [rank].
bool lock_byte(int fd, int rank, short type, int cmd, struct flock* out) {
  struct flock l {};
  l.l_type = type;
  l.l_whence = SEEK_SET;
  l.l_start = rank;
  l.l_len = 1;
  if (::fcntl(fd, cmd, &l) != 0) return false;
  if (out) *out = l;
  return true;
}

std::string hex(const unsigned char* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s.push_back(d[p[i] >> 4]);
    s.push_back(d[p[i] & 15]);
  }
  return s;
}

std::string basename_of(const std::string& dir) {
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  const size_t slash = d.rfind('/');
  return slash == std::string::npos ? d : d.substr(slash + 1);
}

// Waits up to [timeout] for [keys] in [store]; false when they never came.
// How often a join looks at the store: the segment's name and the ranks'
// word that they mapped it come within a few ms of each other.
constexpr std::chrono::milliseconds kStorePoll{1};

std::string as_string(const std::vector<char>& v) {
  return std::string(v.begin(), v.end());
}

}  // namespace

bool ShmExchange::wanted(const std::string& store) {
  const char* e = std::getenv("SHAPESCRIPT_DIRECT_EXCHANGE");
  if (e && std::string(e) == "tcp") return false;
  return store.rfind(rendezvous::kTcpStorePrefix, 0) != 0;
}

std::unique_ptr<ShmExchange> ShmExchange::join(
    int rank,
    int size,
    const std::string& store_dir,
    const std::string& prefix,
    int lanes,
    std::chrono::milliseconds timeout) {
  if (size < 2 || lanes < 1) return nullptr;
  const Layout lay{size, lanes};
  std::unique_ptr<rendezvous::Store> store = rendezvous::open_store(store_dir);
  const std::string where = prefix + ".shm";
  int fd = -1;
  void* base = MAP_FAILED;
  std::string name;
  bool ok = false;
  if (rank == 0) {
    unsigned char r[24];
    if (::getrandom(r, sizeof r, 0) == static_cast<ssize_t>(sizeof r)) {
      name = std::string("/").append(basename_of(store_dir)).append(".x");
      name += hex(r, 8);
      fd =
          ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    }
    if (fd >= 0 && ::ftruncate(fd, static_cast<off_t>(lay.bytes())) == 0 &&
        ::posix_fallocate(fd, 0, static_cast<off_t>(lay.bytes())) == 0)
      base = ::mmap(
          nullptr, lay.bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base != MAP_FAILED) {
      auto* h = static_cast<Header*>(base);
      std::memcpy(h->nonce, r + 8, sizeof h->nonce);
      h->size = static_cast<uint32_t>(size);
      h->lanes = static_cast<uint32_t>(lanes);
      h->magic = kMagic;
      ok = true;
    }
    const std::string told = ok ? name + " " + hex(r + 8, 16) : "-";
    store->set(where, std::vector<char>(told.begin(), told.end()));
  } else if (rendezvous::wait_for_keys(*store, {where}, timeout, kStorePoll)) {
    const std::string told = as_string(store->get(where));
    const size_t space = told.find(' ');
    if (space != std::string::npos) {
      name = told.substr(0, space);
      fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
      struct stat st {};
      if (fd >= 0 && ::fstat(fd, &st) == 0 &&
          static_cast<size_t>(st.st_size) == lay.bytes())
        base = ::mmap(
            nullptr, lay.bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (base != MAP_FAILED) {
        const auto* h = static_cast<const Header*>(base);
        ok = h->magic == kMagic && h->size == static_cast<uint32_t>(size) &&
             h->lanes == static_cast<uint32_t>(lanes) &&
             hex(h->nonce, sizeof h->nonce) == told.substr(space + 1);
      }
    }
  }
  ok = ok && lock_byte(fd, rank, F_WRLCK, F_OFD_SETLK, nullptr);
  // Every rank's verdict; the segment is used only when all mapped it.
  const std::string mine = where + "." + std::to_string(rank);
  store->set(mine, std::vector<char>{ok ? '1' : '0'});
  std::vector<std::string> all;
  for (int r = 0; r < size; ++r) all.push_back(where + "." + std::to_string(r));
  bool everyone = rendezvous::wait_for_keys(*store, all, timeout, kStorePoll);
  for (int r = 0; everyone && r < size; ++r)
    everyone = as_string(store->get(all[r])) == "1";
  if (rank == 0 && !name.empty()) ::shm_unlink(name.c_str());
  if (everyone)
    return std::unique_ptr<ShmExchange>(
        new ShmExchange(rank, size, lanes, fd, base, lay.bytes()));
  if (base != MAP_FAILED) ::munmap(base, lay.bytes());
  if (fd >= 0) ::close(fd);
  return nullptr;
}

ShmExchange::ShmExchange(
    int rank, int size, int lanes, int fd, void* base, size_t len)
    : rank_(rank),
      size_(size),
      lanes_(lanes),
      fd_(fd),
      base_(base),
      len_(len),
      chunks_(static_cast<size_t>(lanes), 0) {}

ShmExchange::~ShmExchange() {
  close();
  ::munmap(base_, len_);
}

void ShmExchange::close() {
  const int fd = fd_.exchange(-1);
  if (fd < 0) return;
  const Layout lay{size_, lanes_};
  word(base_, lay.closed_at() + sizeof(Counter) * rank_).store(1);
  ::close(fd);  // drops this rank's lock
}

void ShmExchange::exchange(const std::vector<const void*>& send,
                           const std::vector<void*>& recv,
                           size_t bytes,
                           int lane,
                           std::chrono::milliseconds timeout) {
  const Layout lay{size_, lanes_};
  char* base = static_cast<char*>(base_);
  const auto deadline = Clock::now() + timeout;
  // Waits until [w] reaches [target]; [peer] is the rank that moves it.
  auto wait = [&](std::atomic<uint32_t>& w, uint32_t target, int peer) {
    for (int i = 0; i < kSpins; ++i) {
      if (reached(w.load(std::memory_order_acquire), target)) return;
      _mm_pause();
    }
    auto next_check = Clock::now() + kLivenessEvery;
    for (;;) {
      const uint32_t v = w.load(std::memory_order_acquire);
      if (reached(v, target)) return;
      const auto now = Clock::now();
      if (fd_ < 0)
        throw ShmFailure(CollectiveError::Kind::Other,
                         -1,
                         "communicator unusable: it was closed");
      if (word(base_, lay.closed_at() + sizeof(Counter) * peer).load() != 0)
        throw ShmFailure(
            CollectiveError::Kind::PeerGone, peer, "it left the group");
      if (now >= next_check) {
        struct flock l {};
        if (lock_byte(fd_.load(), peer, F_WRLCK, F_OFD_GETLK, &l) &&
            l.l_type == F_UNLCK)
          throw ShmFailure(
              CollectiveError::Kind::PeerGone, peer, "its process ended");
        next_check = now + kLivenessEvery;
      }
      if (now >= deadline)
        throw ShmFailure(CollectiveError::Kind::Timeout,
                         peer,
                         "timed out after " + std::to_string(timeout.count()) +
                             " ms waiting for rank " + std::to_string(peer));
      const auto left = std::min<Clock::duration>(
          deadline - now,
          std::min<Clock::duration>(next_check - now, kLivenessEvery));
      const auto ns =
          std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      struct timespec ts {
        static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)
      };
      ::syscall(SYS_futex,
                reinterpret_cast<uint32_t*>(&w),
                FUTEX_WAIT,
                v,
                &ts,
                nullptr,
                0);
    }
  };
  uint32_t& k = chunks_[static_cast<size_t>(lane)];
  for (size_t off = 0; off < bytes; off += kSlotBytes) {
    const size_t len = std::min(kSlotBytes, bytes - off);
    ++k;
    for (int q = 0; q < size_; ++q) {
      if (q == rank_) continue;
      wait(word(base_, lay.acked(lane, rank_, q)), k - 1, q);
      std::memcpy(base + lay.slot(lane, rank_, q),
                  static_cast<const char*>(send[q]) + off,
                  len);
      auto& posted = word(base_, lay.posted(lane, rank_, q));
      posted.store(k, std::memory_order_release);
      wake(posted);
    }
    for (int q = 0; q < size_; ++q) {
      if (q == rank_) continue;
      wait(word(base_, lay.posted(lane, q, rank_)), k, q);
      std::memcpy(static_cast<char*>(recv[q]) + off,
                  base + lay.slot(lane, q, rank_),
                  len);
      auto& acked = word(base_, lay.acked(lane, q, rank_));
      acked.store(k, std::memory_order_release);
      wake(acked);
    }
  }
}

}  // namespace ss::dist::detail
