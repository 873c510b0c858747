#include "dist/comm/gloo_comm.h"

#include <gloo/allgather.h>
#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/buffer.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <cstring>
#include <mutex>
#include <regex>

#include "dist/comm/gloo_join.h"
#include "dist/comm/group_store.h"
#include "dist/rendezvous/store.h"

namespace ss::dist {

using Kind = CollectiveError::Kind;
using types::DType;

namespace {

using RedFn = void (*)(void*, const void*, const void*, size_t);

template <class T>
RedFn reduce_fn(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return static_cast<RedFn>(&gloo::sum<T>);
    case ReduceOp::Max:
      return static_cast<RedFn>(&gloo::max<T>);
    case ReduceOp::Min:
      return static_cast<RedFn>(&gloo::min<T>);
    case ReduceOp::Prod:
      return static_cast<RedFn>(&gloo::product<T>);
  }
  return nullptr;
}

template <class T>
void allreduce_t(const std::shared_ptr<gloo::Context>& ctx,
                 void* p,
                 size_t n,
                 ReduceOp op,
                 const Options& o) {
  gloo::AllreduceOptions g(ctx);
  g.setOutput(static_cast<T*>(p), n);
  g.setReduceFunction(reduce_fn<T>(op));
  g.setTag(static_cast<uint32_t>(o.tag & 0xffffff));
  g.setTimeout(o.timeout);
  gloo::allreduce(g);
}

// Gloo wants a non-null pointer even for empty parts.
unsigned char g_empty[8];
void* nonnull(void* p) {
  return p ? p : g_empty;
}
void* nonnull(const void* p) {
  return p ? const_cast<void*>(p) : static_cast<void*>(g_empty);
}

uint64_t p2p_slot(uint64_t tag, uint32_t seq) {
  return (uint64_t{0x20} << 56) | ((tag & 0xffffff) << 32) | seq;
}

// Waits on posted unbound-buffer sends and receives until one deadline.
class Waits {
 public:
  Waits(int rank, std::chrono::milliseconds timeout)
      : rank_(rank),
        timeout_(timeout),
        deadline_(std::chrono::steady_clock::now() + timeout) {}
  // A Timeout CollectiveError naming [op] and [peer] when it doesn't end.
  void send(gloo::transport::UnboundBuffer& b, CollectiveOp op, int peer) {
    if (!b.waitSend(left())) late(op, peer);
  }
  void recv(gloo::transport::UnboundBuffer& b, CollectiveOp op, int peer) {
    if (!b.waitRecv(left())) late(op, peer);
  }
  // Before the buffers go away after a failure.
  static void abort(gloo::transport::UnboundBuffer* sb,
                    gloo::transport::UnboundBuffer* rb) {
    try {
      if (sb) sb->abortWaitSend();
      if (rb) rb->abortWaitRecv();
    } catch (...) {
    }
  }

 private:
  std::chrono::milliseconds left() const {
    return std::max(std::chrono::milliseconds(1),
                    std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline_ - std::chrono::steady_clock::now()));
  }
  [[noreturn]] void late(CollectiveOp op, int peer) const {
    detail::fail(CollectiveError::Kind::Timeout,
                 op,
                 rank_,
                 peer,
                 "timed out after " + std::to_string(timeout_.count()) + " ms");
  }
  int rank_;
  std::chrono::milliseconds timeout_;
  std::chrono::steady_clock::time_point deadline_;
};

std::mutex g_host_mu;
std::string g_host = "127.0.0.1";

int port_of(const std::string& addr) {
  // "[127.0.0.1]:40123" or "[127.0.0.1]:40123$7"
  static const std::regex re(R"(\]:(\d+))");
  std::smatch m;
  if (std::regex_search(addr, m, re)) return std::stoi(m[1].str());
  return -1;
}

}  // namespace

void set_gloo_host(const std::string& host) {
  std::lock_guard<std::mutex> lock(g_host_mu);
  g_host = host;
}

std::string gloo_host() {
  std::lock_guard<std::mutex> lock(g_host_mu);
  return g_host;
}

GlooComm::GlooComm(int rank,
                   int size,
                   const std::string& store_dir,
                   const std::string& prefix,
                   std::chrono::milliseconds connect_timeout)
    : rank_(rank), size_(size) {
  if (size < 1 || rank < 0 || rank >= size)
    detail::fail(Kind::Other,
                 CollectiveOp::Connect,
                 rank,
                 -1,
                 "rank " + std::to_string(rank) + " out of range for " +
                     std::to_string(size) + " ranks");
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = gloo_host();
    device_ = gloo::transport::tcp::CreateDevice(attr);
    // Note [A stranger's connection] (gloo_join.cpp): the meshes are
    // joined so that only the peers' connections reach Gloo.
    const int lanes = size >= 2 && size <= kSyncRanks ? kLanes : 0;
    detail::JoinedMeshes joined = detail::join_meshes(
        rank, size, store_dir, prefix, lanes, device_, connect_timeout);
    ctx_ = joined.main;
    for (int lane = 0; lane < lanes; ++lane) {
      auto& sctx = joined.lanes[lane];
      for (int r = 0; r < size; ++r)
        if (r != rank) sctx->getPair(r)->setSync(true, false);
      sync_ctx_[lane] = sctx;
      sync_timeout_ = connect_timeout;
    }
    std::unique_ptr<rendezvous::Store> fs = rendezvous::open_store(store_dir);
    gloo::rendezvous::PrefixStore store(prefix, *fs);
    // Publish this rank's listening port so errors can name the peer.
    if (size > 1) {
      int other = rank == 0 ? 1 : 0;
      std::string me = ctx_->getPair(other)->address().str();
      store.set("ss_addr_" + std::to_string(rank),
                std::vector<char>(me.begin(), me.end()));
      for (int r = 0; r < size; ++r) {
        if (r == rank) continue;
        std::string key = "ss_addr_" + std::to_string(r);
        store.wait({key}, connect_timeout);
        auto v = store.get(key);
        int port = port_of(std::string(v.begin(), v.end()));
        if (port > 0) port_rank_[port] = r;
      }
    }
    if (lanes > 0 && detail::ShmExchange::wanted(store_dir))
      shm_ = detail::ShmExchange::join(
          rank, size, store_dir, prefix, lanes, connect_timeout);
  } catch (const CollectiveError&) {
    throw;
  } catch (const detail::JoinError& e) {
    close();
    detail::fail(Kind::Other, CollectiveOp::Connect, rank_, -1, e.what());
  } catch (...) {
    translate(CollectiveOp::Connect, -1);
  }
}

void GlooComm::leave_unjoined(const std::string& store_dir,
                              const std::string& prefix) {
  detail::leave_unjoined(store_dir, prefix);
}

GlooComm::~GlooComm() {
  try {
    shm_.reset();
    for (auto& c : sync_ctx_) c.reset();
    ctx_.reset();
    device_.reset();
  } catch (...) {
  }
}

void GlooComm::close() {
  if (!broken_) {
    broken_ = true;
    broken_why_ = "the communicator was closed";
  }
  if (shm_) shm_->close();
  for (auto& c : sync_ctx_) c.reset();
  ctx_.reset();
  device_.reset();
}

void GlooComm::check_usable(CollectiveOp op) {
  if (broken_ || !ctx_)
    detail::fail(
        Kind::Other, op, rank_, -1, "communicator unusable: " + broken_why_);
}

int GlooComm::peer_of_message(const std::string& msg) const {
  static const std::regex re(R"(\]:(\d+))");
  for (auto it = std::sregex_iterator(msg.begin(), msg.end(), re);
       it != std::sregex_iterator();
       ++it) {
    auto f = port_rank_.find(std::stoi((*it)[1].str()));
    if (f != port_rank_.end()) return f->second;
  }
  return -1;
}

void GlooComm::translate(CollectiveOp op, int peer) {
  std::string what;
  bool gloo_io = false;
  std::optional<Kind> known;  // the shared-memory exchange says which
  try {
    throw;
  } catch (const CollectiveError&) {
    close();
    throw;
  } catch (const detail::ShmFailure& e) {
    what = e.what();
    known = e.kind;
    peer = e.peer;
  } catch (const gloo::IoException& e) {
    what = e.what();
    gloo_io = true;
  } catch (const gloo::Exception& e) {
    what = e.what();
  } catch (const std::exception& e) {  // gloo::EnforceNotMet and the rest
    what = e.what();
  } catch (...) {
    what = "unknown exception";
  }
  Kind k = Kind::Other;
  const bool app_timeout =
      what.find("Application timeout caused pair closure") != std::string::npos;
  if (known)
    k = *known;
  else if (!app_timeout && (what.find("Timed out") != std::string::npos ||
                            what.find("timed out") != std::string::npos ||
                            what.find("Wait timeout") != std::string::npos ||
                            // a sync pair's socket (Note [Direct exchange])
                            what.find("Read timeout") != std::string::npos ||
                            what.find("Write timeout") != std::string::npos ||
                            what.find("Timeout") != std::string::npos))
    k = Kind::Timeout;
  else if (app_timeout || what.find("closed by peer") != std::string::npos ||
           what.find("reset by peer") != std::string::npos ||
           what.find("Connection closed") != std::string::npos ||
           what.find("Broken pipe") != std::string::npos ||
           what.find("Connection refused") != std::string::npos ||
           (gloo_io && what.find("EOF") != std::string::npos))
    k = Kind::PeerGone;
  if (peer < 0) peer = peer_of_message(what);
  close();
  broken_why_ = std::string("an earlier ") + collective_name(op) + " failed";
  std::string msg = what;
  if (k == Kind::PeerGone)
    msg = (peer >= 0 ? "rank " + std::to_string(peer) : std::string("a peer")) +
          " is gone (" + what + ")";
  detail::fail(k, op, rank_, peer, msg);
}

// Note [Two ranks exchange]
// With two ranks, Gloo's ring all-reduce runs a reduce-scatter and an
// all-gather, two dependent phases of segmented messages; on loopback TCP
// with the cores busy it took 1.1-3.9 ms for the README MLP's 813 KB of
// gradients (and BCUBE 0.44 ms). Sending each rank's whole buffer to the
// other at once over the same Gloo pair and reducing locally moves the
// same bytes in one phase: 0.22-0.34 ms (a 2-float loss: 93 against 115
// µs). Both ranks compute mine ⊕ theirs with a commutative ⊕ (sum, max,
// min, product), so their results are bit-identical. Calls with the
// default timeout go the direct exchange instead (Note [Direct exchange],
// the same idea without the event loop); this path serves calls with a
// timeout of their own.
template <class T>
void GlooComm::pair_all_reduce(T* p, int64_t n, ReduceOp op, const Options& o) {
  const uint64_t tag = o.tag & 0xffffff;
  uint32_t seq;
  {
    std::lock_guard<std::mutex> lk(pair_mu_);
    seq = pair_seq_[tag]++;
  }
  const uint64_t slot = (uint64_t{0x21} << 56) | (tag << 32) | seq;
  const int peer = 1 - rank_;
  const size_t bytes = static_cast<size_t>(n) * sizeof(T);
  std::vector<T> theirs(static_cast<size_t>(n));
  auto rb = ctx_->createUnboundBuffer(theirs.data(), bytes);
  auto sb = ctx_->createUnboundBuffer(p, bytes);
  try {
    rb->recv(peer, slot, 0, bytes);
    sb->send(peer, slot, 0, bytes);
    Waits waits(rank_, o.timeout);
    waits.send(*sb, CollectiveOp::AllReduce, peer);
    waits.recv(*rb, CollectiveOp::AllReduce, peer);
  } catch (...) {
    Waits::abort(sb.get(), rb.get());
    throw;
  }
  reduce_fn<T>(op)(p, p, theirs.data(), static_cast<size_t>(n));
}

// Note [Direct exchange]
// Gloo's TCP transport reads every socket on one event-loop thread per
// process: a message that arrives while the main thread computes waits
// for that thread to be scheduled, and then for a wake-up of the main
// thread. On two cores shared by busy workers that waiting dominated a
// small step. So up to kSyncRanks ranks connect one more mesh per lane
// (Options::lane: the main thread's, the gradient buckets' thread's) whose
// pairs are in Gloo's sync mode (no event loop: the calling thread writes
// and reads the socket itself), and a lane's all-reduces with the default
// timeout (the sync pairs' read timeout) exchange whole buffers on it.
// Measured with a 2-float and an 813 KB all-reduce between 0.5 ms of
// computation, beyond that computation (gloo_exchange_test.cpp,
// "[dist_bench]"): 2 ranks 0.93-1.18 ms (p90 2.6-3.5 ms, scheduler ticks)
// on the event loop, 0.27-0.66 ms (p90 0.65-0.9 ms) exchanged directly;
// 3 ranks (Gloo's ring) 2.2-3.6 ms (p90 7.7-7.9 ms), 1.9 ms (p90 2.1 ms).
// The README MLP's step at batch 64 went from 2.2-2.7 to 1.0 ms on
// cpu[0 1] and from about 3.9 to 2.7 ms on cpu[0 1 2].
//
// Each rank sends its buffer to every other and reduces the world's
// buffers in rank order (b0 ⊕ b1 ⊕ b2), so every rank computes the same
// bits. It goes in chunks of kChunk bytes: a rank writes chunk i to every
// peer, then reads every peer's chunk i. A write blocks at most until the
// peer has read the chunk before, which it does without waiting for
// anyone, and one chunk always fits in the socket's buffers (Gloo sizes
// SO_SNDBUF to the message), so the exchange cannot deadlock. A lane is
// one thread per rank calling in the same order on every rank, so each
// mesh's sockets carry one call at a time. Calls with another timeout, and
// more ranks, keep the event loop (pair_all_reduce, Gloo's ring).
bool GlooComm::use_direct(const Options& o) const {
  return o.lane >= 0 && o.lane < kLanes && sync_ctx_[o.lane] &&
         o.timeout == sync_timeout_;
}

void GlooComm::direct_exchange(const std::vector<const void*>& send,
                               const std::vector<void*>& recv,
                               size_t bytes,
                               int lane) {
  if (shm_) return shm_->exchange(send, recv, bytes, lane, sync_timeout_);
  constexpr size_t kChunk = size_t{64} << 10;
  const int slot = sync_slot_[lane]++ & 0x7fffffff;
  std::vector<std::unique_ptr<gloo::transport::Buffer>> sb(size_), rb(size_);
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    auto& pair = sync_ctx_[lane]->getPair(r);
    rb[r] = pair->createRecvBuffer(slot, recv[r], bytes);
    sb[r] = pair->createSendBuffer(slot, const_cast<void*>(send[r]), bytes);
  }
  for (size_t off = 0; off < bytes; off += kChunk) {
    const size_t len = std::min(kChunk, bytes - off);
    for (int r = 0; r < size_; ++r)
      if (r != rank_) {
        sb[r]->send(off, len, off);
        sb[r]->waitSend();
      }
    for (int r = 0; r < size_; ++r)
      if (r != rank_) rb[r]->waitRecv();
  }
}

// The peers' buffers of [n] values each, rank r's at theirs(r).
template <class T>
struct PeerBuffers {
  PeerBuffers(int world, int me, int64_t values)
      : rank(me),
        n(static_cast<size_t>(values)),
        // Written whole by the peers before it is read: not zeroed.
        all(std::make_unique_for_overwrite<T[]>(n * (world - 1))) {}
  T* theirs(int r) const { return all.get() + n * (r < rank ? r : r - 1); }
  int rank;
  size_t n;
  std::unique_ptr<T[]> all;
};

// Note [Large direct all-reduces]
// The direct all-reduce holds every peer's whole buffer (and a third rank
// its own again): 108 MiB beside a [3072 3072] f32 gradient on cpu[0 1 2],
// a third of data parallel's peak above its params, gradients and AdamW
// state. From kSplitBytes on, a buffer whose values divide among the ranks
// goes in two exchanges instead: the direct reduce-scatter (each rank
// reduces its block, in rank order) and an exchange of the reduced blocks
// into place. Every rank gets the same bits, those of the one-exchange
// sum, holding one block of each peer; it sends 2/world of the buffer to
// each peer rather than all of it.
constexpr size_t kSplitBytes = size_t{4} << 20;

template <class T>
void GlooComm::direct_all_reduce(T* p, int64_t n, ReduceOp op, int lane) {
  ++direct_calls_;
  if (static_cast<size_t>(n) * sizeof(T) >= kSplitBytes && n % size_ == 0) {
    const int64_t block = n / size_;
    T* mine = p + static_cast<size_t>(block) * rank_;
    {
      auto reduced = std::make_unique_for_overwrite<T[]>(block);
      direct_reduce_scatter(p, reduced.get(), block, op, lane);
      std::copy(reduced.get(), reduced.get() + block, mine);
    }
    std::vector<const void*> send(size_, mine);
    std::vector<void*> recv(size_, nullptr);
    for (int r = 0; r < size_; ++r)
      if (r != rank_) recv[r] = p + static_cast<size_t>(block) * r;
    direct_exchange(send, recv, static_cast<size_t>(block) * sizeof(T), lane);
    return;
  }
  // Every peer's buffer (mine stays in p).
  PeerBuffers<T> others(size_, rank_, n);
  std::vector<const void*> send(size_, p);
  std::vector<void*> recv(size_, nullptr);
  for (int r = 0; r < size_; ++r)
    if (r != rank_) recv[r] = others.theirs(r);
  direct_exchange(send, recv, static_cast<size_t>(n) * sizeof(T), lane);
  auto theirs = [&](int r) { return others.theirs(r); };
  // b0 ⊕ b1 ⊕ ... in rank order, into p. A rank after the first two keeps
  // its own buffer aside: p receives b0 ⊕ b1 first.
  const size_t count = static_cast<size_t>(n);
  RedFn f = reduce_fn<T>(op);
  std::vector<T> mine;
  if (rank_ >= 2) mine.assign(p, p + count);
  auto buffer = [&](int r) -> const T* {
    if (r != rank_) return theirs(r);
    return rank_ >= 2 ? mine.data() : p;
  };
  f(p, buffer(0), buffer(1), count);
  for (int r = 2; r < size_; ++r) f(p, p, buffer(r), count);
}

// Note [Direct reduce-scatter]
// A reduce-scatter as an all-reduce and a slice (Gloo's own reduce-scatter
// is old-style: deps.md §5) sends every rank the whole buffer and holds it
// three times more (a copy, the peers' buffers): `shard params` reduce-
// scatters each whole gradient, and on cpu[0 1 2] a [3072 3072] f32 one
// cost 144 MB of a worker's peak. On the sync mesh each rank instead sends
// block r of its buffer to rank r alone and receives its own block from
// every peer, in chunks as the direct all-reduce does (the same deadlock
// argument), and reduces the world's blocks in rank order, b0 ⊕ b1 ⊕ ...:
// the bits of the all-reduce's block, a (world - 1)/world of the bytes.
template <class T>
void GlooComm::direct_reduce_scatter(
    const T* in, T* out, int64_t n, ReduceOp op, int lane) {
  // Every peer's block r = rank_ (mine stays in in).
  PeerBuffers<T> others(size_, rank_, n);
  std::vector<const void*> send(size_, nullptr);
  std::vector<void*> recv(size_, nullptr);
  for (int r = 0; r < size_; ++r)
    if (r != rank_) {
      send[r] = in + static_cast<size_t>(n) * r;
      recv[r] = others.theirs(r);
    }
  direct_exchange(send, recv, static_cast<size_t>(n) * sizeof(T), lane);
  auto theirs = [&](int r) { return others.theirs(r); };
  auto block = [&](int r) -> const T* {
    return r == rank_ ? in + static_cast<size_t>(n) * rank_ : theirs(r);
  };
  const size_t count = static_cast<size_t>(n);
  RedFn f = reduce_fn<T>(op);
  f(out, block(0), block(1), count);
  for (int r = 2; r < size_; ++r) f(out, out, block(r), count);
}

// The direct reduce-scatter of [in] into [out] ([n] values a rank) when the
// sync mesh serves [o] and the dtype is one it reduces; false otherwise.
bool GlooComm::try_direct_reduce_scatter(const Tensor& in,
                                         Tensor& out,
                                         ReduceOp op,
                                         const Options& o) {
  if (!use_direct(o) || size_ < 2) return false;
  const int64_t n = out.numel();
  switch (in.dtype()) {
    case DType::F32:
      direct_reduce_scatter(in.data<float>(), out.data<float>(), n, op, o.lane);
      return true;
    case DType::F64:
      direct_reduce_scatter(
          in.data<double>(), out.data<double>(), n, op, o.lane);
      return true;
    case DType::I32:
      direct_reduce_scatter(
          in.data<int32_t>(), out.data<int32_t>(), n, op, o.lane);
      return true;
    case DType::I64:
      direct_reduce_scatter(
          in.data<int64_t>(), out.data<int64_t>(), n, op, o.lane);
      return true;
    default:
      return false;  // halves: in f32 through the all-reduce
  }
}

// One path for every dtype: the direct exchange, two ranks' exchange on the
// event loop, or Gloo's ring.
template <class T>
void GlooComm::typed_all_reduce(T* p,
                                int64_t n,
                                ReduceOp op,
                                const Options& o) {
  if (use_direct(o)) return direct_all_reduce(p, n, op, o.lane);
  if (size_ == 2) return pair_all_reduce(p, n, op, o);
  allreduce_t<T>(ctx_, p, n, op, o);
}

void GlooComm::raw_all_reduce(
    void* p, int64_t n, DType dt, ReduceOp op, const Options& o) {
  if (n == 0 || size_ == 1) return;
  switch (dt) {
    case DType::F32:
      return typed_all_reduce(static_cast<float*>(p), n, op, o);
    case DType::F64:
      return typed_all_reduce(static_cast<double*>(p), n, op, o);
    case DType::I32:
      return typed_all_reduce(static_cast<int32_t*>(p), n, op, o);
    case DType::I64:
      return typed_all_reduce(static_cast<int64_t*>(p), n, op, o);
    case DType::BF16:
    case DType::F16: {
      // In f32, rounded once (Note [Half-precision reductions]).
      std::vector<float> wide = detail::widen_half(p, n, dt);
      typed_all_reduce(wide.data(), n, op, o);
      detail::narrow_half(wide.data(), p, n, dt);
      return;
    }
    default:
      throw std::logic_error("unsupported dtype");
  }
}

void GlooComm::all_reduce(Tensor& t, ReduceOp op, const Options& o) {
  const auto cop = CollectiveOp::AllReduce;
  begin_all_reduce(t);
  try {
    raw_all_reduce(t.raw(), t.numel(), t.dtype(), op, o);
  } catch (...) {
    translate(cop, -1);
  }
}

void GlooComm::all_gather(const Tensor& in, Tensor& out, const Options& o) {
  const auto cop = CollectiveOp::AllGather;
  begin_all_gather(in, out);
  if (in.nbytes() == 0) return;
  try {
    if (size_ == 1) {
      std::memcpy(out.raw(), in.raw(), in.nbytes());
      return;
    }
    gloo::AllgatherOptions g(ctx_);
    g.setInput(static_cast<unsigned char*>(nonnull(in.raw())), in.nbytes());
    g.setOutput(static_cast<unsigned char*>(out.raw()), in.nbytes() * size_);
    g.setTag(static_cast<uint32_t>(o.tag & 0xffffff));
    g.setTimeout(o.timeout);
    gloo::allgather(g);
  } catch (...) {
    translate(cop, -1);
  }
}

void GlooComm::all_gather_v(const Tensor& in,
                            Tensor& out,
                            const std::vector<int64_t>& rows,
                            const Options& o) {
  const auto cop = CollectiveOp::AllGatherV;
  begin_all_gather_v(in, out, rows);
  const size_t row_bytes =
      detail::row_elems(in) * types::dtype_size(in.dtype());
  if (out.nbytes() == 0) return;
  try {
    if (size_ == 1) {
      std::memcpy(out.raw(), in.raw(), in.nbytes());
      return;
    }
    std::vector<size_t> counts(size_);
    for (int r = 0; r < size_; ++r) counts[r] = rows[r] * row_bytes;
    gloo::AllgathervOptions g(ctx_);
    g.setInput(static_cast<unsigned char*>(nonnull(in.raw())), in.nbytes());
    g.setOutput(static_cast<unsigned char*>(out.raw()), counts);
    g.setTag(static_cast<uint32_t>(o.tag & 0xffffff));
    g.setTimeout(o.timeout);
    gloo::allgatherv(g);
  } catch (...) {
    translate(cop, -1);
  }
}

void GlooComm::reduce_scatter(const Tensor& in,
                              Tensor& out,
                              ReduceOp op,
                              const Options& o) {
  const auto cop = CollectiveOp::ReduceScatter;
  begin_reduce_scatter(in, out);
  // deps.md §5: Gloo's only reduce-scatter is old-style, and old-style ops
  // slow down later new-style ones on the same context: the sync mesh's
  // (Note [Direct reduce-scatter]), else all-reduce + slice.
  try {
    if (out.numel() > 0 && try_direct_reduce_scatter(in, out, op, o)) return;
    Tensor tmp = in.clone();
    raw_all_reduce(tmp.raw(), tmp.numel(), tmp.dtype(), op, o);
    std::memcpy(
        out.raw(),
        static_cast<const unsigned char*>(tmp.raw()) + rank_ * out.nbytes(),
        out.nbytes());
  } catch (...) {
    translate(cop, -1);
  }
}

void GlooComm::broadcast(Tensor& t, int root, const Options& o) {
  const auto cop = CollectiveOp::Broadcast;
  begin_broadcast(t, root);
  if (t.nbytes() == 0 || size_ == 1) return;
  try {
    gloo::BroadcastOptions g(ctx_);
    g.setRoot(root);
    g.setOutput(static_cast<unsigned char*>(t.raw()), t.nbytes());
    g.setTag(static_cast<uint32_t>(o.tag & 0xffffff));
    g.setTimeout(o.timeout);
    gloo::broadcast(g);
  } catch (...) {
    translate(cop, rank_ == root ? -1 : root);
  }
}

void GlooComm::barrier(const Options& o) {
  const auto cop = CollectiveOp::Barrier;
  begin_barrier();
  if (size_ == 1) return;
  try {
    gloo::BarrierOptions g(ctx_);
    g.setTag(static_cast<uint32_t>(o.tag & 0xffffff));
    g.setTimeout(o.timeout);
    gloo::barrier(g);
  } catch (...) {
    translate(cop, -1);
  }
}

void GlooComm::send(const Tensor& t, int dst, const Options& o) {
  Tensor none;
  send_recv(t, dst, none, -1, o);
}

void GlooComm::recv(Tensor& t, int src, const Options& o) {
  send_recv(Tensor(), -1, t, src, o);
}

void GlooComm::send_recv(
    const Tensor& out, int dst, Tensor& in, int src, const Options& o) {
  const auto sop = CollectiveOp::Send, rop = CollectiveOp::Recv;
  check_usable(dst >= 0 ? sop : rop);
  if (dst >= 0) {
    check_point_to_point(out, dst, sop);
    if (dst == rank_)
      detail::fail(Kind::Other, sop, rank_, dst, "cannot send to itself");
  }
  if (src >= 0) {
    check_point_to_point(in, src, rop);
    if (src == rank_)
      detail::fail(Kind::Other, rop, rank_, src, "cannot receive from itself");
  }
  const uint64_t tag = o.tag & 0xffffff;
  std::unique_ptr<gloo::transport::UnboundBuffer> sb, rb;
  CollectiveOp cur = src >= 0 ? rop : sop;
  int peer = src >= 0 ? src : dst;
  try {
    if (src >= 0) {
      rb = ctx_->createUnboundBuffer(nonnull(in.raw()), in.nbytes());
      rb->recv(src, p2p_slot(tag, recv_seq_[{src, tag}]++), 0, in.nbytes());
    }
    if (dst >= 0) {
      record(sop, out.numel(), out.dtype());
      sb = ctx_->createUnboundBuffer(nonnull(out.raw()), out.nbytes());
      sb->send(dst, p2p_slot(tag, send_seq_[{dst, tag}]++), 0, out.nbytes());
    }
    Waits waits(rank_, o.timeout);
    if (sb) {
      cur = sop;
      peer = dst;
      waits.send(*sb, sop, dst);
    }
    if (rb) {
      cur = rop;
      peer = src;
      waits.recv(*rb, rop, src);
      record(rop, in.numel(), in.dtype());
    }
  } catch (...) {
    Waits::abort(sb.get(), rb.get());
    translate(cur, peer);
  }
}

}  // namespace ss::dist
