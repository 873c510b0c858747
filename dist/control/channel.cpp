// The wire format, shared-memory blocks, the status board and /dev/shm
// naming (channel.h).
#include "dist/control/channel.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <random>
#include <stdexcept>

namespace ss::dist::detail {

namespace {

constexpr const char* kJobPrefix = "ssdist.";
constexpr size_t kReceiverCache = 3;
// A block's pages that a receiver has touched count in its RSS for as long
// as it keeps the block mapped: a model sent to the workers (the 108 MiB
// of params of bench/shard_params_bench.py's model) stayed in each
// worker's RSS for the whole run. Blocks larger than this are unmapped
// once read; the small ones of every step stay mapped.
constexpr size_t kKeepMappedBytes = size_t{8} << 20;

bip::permissions owner_only() {
  return bip::permissions(0600);
}

void unlink_shm(const std::string& name) {
  ::shm_unlink(("/" + name).c_str());
}

template <class F>
void for_each_shm_entry(F&& f) {
  DIR* d = ::opendir("/dev/shm");
  if (!d) return;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    f(std::string(e->d_name));
  }
  ::closedir(d);
}

}  // namespace

std::string make_job_name() {
  std::random_device rd;
  uint32_t r = rd();
  char buf[64];
  std::snprintf(buf,
                sizeof buf,
                "%s%d.%08x",
                kJobPrefix,
                static_cast<int>(::getpid()),
                r);
  return buf;
}

int job_controller_pid(const std::string& job) {
  if (job.rfind(kJobPrefix, 0) != 0) return 0;
  size_t i = std::strlen(kJobPrefix);
  int pid = 0;
  bool any = false;
  while (i < job.size() && job[i] >= '0' && job[i] <= '9') {
    pid = pid * 10 + (job[i] - '0');
    ++i;
    any = true;
    if (pid > (1 << 30)) return 0;
  }
  if (!any || i >= job.size() || job[i] != '.') return 0;
  return pid;
}

std::string queue_name(const std::string& job, bool to_worker, int rank) {
  return job + (to_worker ? ".c2w." : ".w2c.") + std::to_string(rank);
}

std::string status_name(const std::string& job) {
  return job + ".status";
}

void remove_job_objects(const std::string& job) {
  for (const std::string& n : shm_entries(job)) unlink_shm(n);
}

// Note [A job's life is a lock]
// A new pool sweeps what dead jobs left in /dev/shm and TMPDIR. It judged
// a job dead when its controller's pid (in the job's name) was gone; but a
// job in another PID namespace (a container sharing /tmp and /dev/shm)
// names a pid of its own namespace, which here is nobody's or another
// process's, and a host job swept a running container job's objects away
// (issue 32 item 6: the container's workers failed with "a bad message").
// A lock does not depend on the namespace: the controller takes an
// exclusive flock on /dev/shm/<job>.alive before it makes any other object
// of the job and holds it while it runs; the kernel releases it when the
// process ends, even by SIGKILL. A sweeper asks for the lock without
// waiting: granted, nobody holds it, and the job is dead. A job without
// the file (another build's, or a TCP job, which makes nothing in
// /dev/shm: its rendezvous dir) is judged by its pid, as before.
int hold_job_lock(const std::string& job) {
  // Locked under another name, then renamed: a sweeper never sees the
  // file unlocked (the lock belongs to the inode, which the rename keeps).
  const std::string path = "/dev/shm/" + job + ".alive";
  const std::string tmp = path + ".new";
  int fd = ::open(
      tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0 ||
      ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    ::close(fd);
    return -1;
  }
  return fd;
}

void release_job_lock(const std::string& job, int fd) {
  unlink_shm(job + ".alive");  // first: a sweeper never sees it unlocked
  ::close(fd);
}

bool job_alive(const std::string& job) {
  const std::string path = "/dev/shm/" + job + ".alive";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd >= 0) {
    const bool held =
        ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    ::close(fd);
    return held;
  }
  const int pid = job_controller_pid(job);
  return pid > 0 && !(::kill(pid, 0) == -1 && errno == ESRCH);
}

std::string job_of(const std::string& name) {
  if (job_controller_pid(name) <= 0) return "";
  // "ssdist." <pid> "." <8 hex>: the third dot-separated part ends it.
  size_t dot = name.find('.', std::strlen(kJobPrefix));
  if (dot == std::string::npos || name.size() < dot + 9) return "";
  return name.substr(0, dot + 9);
}

void sweep_stale_jobs() {
  std::map<std::string, bool> alive;  // by job, asked once each
  for_each_shm_entry([&](const std::string& name) {
    const std::string job = job_of(name);
    if (job.empty() || job_controller_pid(job) == ::getpid()) return;
    auto it = alive.find(job);
    if (it == alive.end()) it = alive.emplace(job, job_alive(job)).first;
    if (!it->second) unlink_shm(name);
  });
}

// ---- blocks ----

BlockSender::~BlockSender() {
  for (auto& b : blocks_) unlink_shm(b->name);
}

std::string BlockSender::put(const std::string& bytes, uint32_t readers) {
  const uint64_t n = bytes.size();
  Block* use = nullptr;
  for (auto& b : blocks_) {
    BlockHeader* h = b->hdr();
    if (h->readers.load(std::memory_order_acquire) == 0 && h->capacity >= n) {
      use = b.get();
      break;
    }
  }
  if (!use) {
    // Replace one free block that is too small, so the count stays bounded.
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
      if ((*it)->hdr()->readers.load(std::memory_order_acquire) == 0) {
        unlink_shm((*it)->name);
        blocks_.erase(it);
        break;
      }
    }
    constexpr uint64_t kRound = 1 << 20;
    uint64_t cap = (n + kRound - 1) / kRound * kRound;
    auto b = std::make_unique<Block>();
    b->name = prefix_ + "." + std::to_string(next_++);
    bip::shared_memory_object::remove(b->name.c_str());
    bip::shared_memory_object shm(
        bip::create_only, b->name.c_str(), bip::read_write, owner_only());
    shm.truncate(static_cast<bip::offset_t>(kBlockData + cap));
    b->region = bip::mapped_region(shm, bip::read_write);
    BlockHeader* h = b->hdr();
    h->readers.store(0, std::memory_order_relaxed);
    h->capacity = cap;
    use = b.get();
    blocks_.push_back(std::move(b));
  }
  BlockHeader* h = use->hdr();
  h->readers.store(readers, std::memory_order_relaxed);
  std::memcpy(static_cast<char*>(use->region.get_address()) + kBlockData,
              bytes.data(),
              n);
  std::atomic_thread_fence(std::memory_order_release);
  return use->name;
}

std::string BlockReceiver::take(const std::string& name, uint64_t size) {
  auto it = cache_.begin();
  for (; it != cache_.end(); ++it)
    if (it->name == name) break;
  if (it == cache_.end()) {
    bip::shared_memory_object shm(
        bip::open_only, name.c_str(), bip::read_write);
    Mapping m;
    m.name = name;
    m.region = bip::mapped_region(shm, bip::read_write);
    cache_.push_front(std::move(m));
    while (cache_.size() > kReceiverCache) cache_.pop_back();
    it = cache_.begin();
  } else if (it != cache_.begin()) {
    cache_.splice(cache_.begin(), cache_, it);
    it = cache_.begin();
  }
  auto* base = static_cast<char*>(it->region.get_address());
  auto* h = reinterpret_cast<BlockHeader*>(base);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (size > h->capacity || kBlockData + size > it->region.get_size())
    throw std::runtime_error("control channel: block " + name +
                             " is smaller than its message");
  std::string out;
  out.reserve(size);  // append copies without zero-filling first
  out.append(base + kBlockData, size);
  h->readers.fetch_sub(1, std::memory_order_acq_rel);
  if (it->region.get_size() > kKeepMappedBytes) cache_.erase(it);
  return out;
}

// ---- wire ----

size_t encode(const Message& m,
              uint64_t id,
              uint32_t flags,
              BlockSender& blocks,
              uint32_t readers,
              char* buf) {
  WireHeader h{m.kind, flags, id, m.payload.size()};
  size_t n = sizeof h;
  if (m.payload.size() <= kInlineMax) {
    std::memcpy(buf + n, m.payload.data(), m.payload.size());
    n += m.payload.size();
  } else {
    h.flags |= kFlagShm;
    std::string name = blocks.put(m.payload, readers);
    std::memcpy(buf + n, name.c_str(), name.size() + 1);
    n += name.size() + 1;
  }
  std::memcpy(buf, &h, sizeof h);
  return n;
}

Message decode(const char* buf,
               size_t n,
               BlockReceiver& blocks,
               uint32_t* flags) {
  if (n < sizeof(WireHeader))
    throw std::runtime_error("control channel: short message");
  WireHeader h;
  std::memcpy(&h, buf, sizeof h);
  Message m;
  m.kind = h.kind;
  m.id = h.id;
  if (flags) *flags = h.flags;
  if (h.flags & kFlagShm) {
    std::string name(buf + sizeof h, strnlen(buf + sizeof h, n - sizeof h));
    m.payload = blocks.take(name, h.size);
  } else {
    if (sizeof h + h.size > n)
      throw std::runtime_error("control channel: truncated message");
    m.payload.assign(buf + sizeof h, h.size);
  }
  return m;
}

// ---- status board ----

std::unique_ptr<StatusBoard> StatusBoard::create(const std::string& job,
                                                 int world) {
  auto b = std::make_unique<StatusBoard>();
  std::string name = status_name(job);
  bip::shared_memory_object::remove(name.c_str());
  bip::shared_memory_object shm(
      bip::create_only, name.c_str(), bip::read_write, owner_only());
  shm.truncate(static_cast<bip::offset_t>(sizeof(StatusSlot) * world));
  b->region_ = bip::mapped_region(shm, bip::read_write);
  b->world_ = world;
  for (int r = 0; r < world; ++r) b->set(r, "starting", false);
  return b;
}

std::unique_ptr<StatusBoard> StatusBoard::open(const std::string& job,
                                               int world) {
  auto b = std::make_unique<StatusBoard>();
  bip::shared_memory_object shm(
      bip::open_only, status_name(job).c_str(), bip::read_write);
  b->region_ = bip::mapped_region(shm, bip::read_write);
  if (b->region_.get_size() < sizeof(StatusSlot) * world)
    throw std::runtime_error("control channel: status board too small");
  b->world_ = world;
  return b;
}

StatusSlot* StatusBoard::slot(int rank) const {
  return static_cast<StatusSlot*>(region_.get_address()) + rank;
}

void StatusBoard::set(int rank, std::string_view text, bool waiting) {
  if (rank < 0 || rank >= world_) return;
  StatusSlot* s = slot(rank);
  s->seq.fetch_add(1, std::memory_order_acq_rel);  // odd: writing
  size_t n = std::min(text.size(), sizeof s->text);
  std::memcpy(s->text, text.data(), n);
  s->len = static_cast<uint32_t>(n);
  s->waiting.store(waiting ? 1 : 0, std::memory_order_relaxed);
  s->since_ms.store(monotonic_ms(), std::memory_order_relaxed);
  s->seq.fetch_add(1, std::memory_order_release);  // even: done
}

int64_t monotonic_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

std::string StatusBoard::get(int rank, bool* waiting, int64_t* since_ms) const {
  if (rank < 0 || rank >= world_) return {};
  StatusSlot* s = slot(rank);
  char text[sizeof s->text];
  uint32_t len = 0;
  bool w = false;
  int64_t since = 0;
  for (int tries = 0; tries < 1000; ++tries) {
    uint32_t s1 = s->seq.load(std::memory_order_acquire);
    len = std::min<uint32_t>(s->len, sizeof text);
    std::memcpy(text, s->text, len);
    w = s->waiting.load(std::memory_order_relaxed) != 0;
    since = s->since_ms.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    uint32_t s2 = s->seq.load(std::memory_order_relaxed);
    if (s1 == s2 && (s1 & 1) == 0)
      break;  // else: a write in progress, or its writer died
  }
  if (waiting) *waiting = w;
  if (since_ms) *since_ms = since;
  return std::string(text, len);
}

// ---- queue operations ----

namespace {
bool lock_timeout(const bip::interprocess_exception& e) {
  return e.get_error_code() == bip::timeout_when_locking_error;
}
boost::posix_time::ptime after_ms(int ms) {
  return boost::posix_time::microsec_clock::universal_time() +
         boost::posix_time::milliseconds(ms);
}
}  // namespace

QResult q_try_send(bip::message_queue& q, const void* buf, size_t n) {
  try {
    return q.try_send(buf, n, 0) ? QResult::Ok : QResult::Again;
  } catch (const bip::interprocess_exception& e) {
    if (lock_timeout(e)) return QResult::LockTimeout;
    throw;
  }
}

QResult q_try_receive(bip::message_queue& q, void* buf, size_t cap, size_t* n) {
  try {
    bip::message_queue::size_type got = 0;
    unsigned prio = 0;
    bool ok = q.try_receive(buf, cap, got, prio);
    *n = got;
    return ok ? QResult::Ok : QResult::Again;
  } catch (const bip::interprocess_exception& e) {
    if (lock_timeout(e)) return QResult::LockTimeout;
    throw;
  }
}

QResult q_timed_receive(
    bip::message_queue& q, void* buf, size_t cap, size_t* n, int ms) {
  try {
    bip::message_queue::size_type got = 0;
    unsigned prio = 0;
    bool ok = q.timed_receive(buf, cap, got, prio, after_ms(ms));
    *n = got;
    return ok ? QResult::Ok : QResult::Again;
  } catch (const bip::interprocess_exception& e) {
    if (lock_timeout(e)) return QResult::LockTimeout;
    throw;
  }
}

QResult q_timed_send(bip::message_queue& q, const void* buf, size_t n, int ms) {
  try {
    return q.timed_send(buf, n, 0, after_ms(ms)) ? QResult::Ok : QResult::Again;
  } catch (const bip::interprocess_exception& e) {
    if (lock_timeout(e)) return QResult::LockTimeout;
    throw;
  }
}

}  // namespace ss::dist::detail

namespace ss::dist {

std::vector<std::string> shm_entries(const std::string& job) {
  std::vector<std::string> out;
  if (job.empty()) return out;
  const std::string prefix = job + ".";
  detail::for_each_shm_entry([&](const std::string& name) {
    if (name.rfind(prefix, 0) == 0) out.push_back(name);
  });
  return out;
}

}  // namespace ss::dist
