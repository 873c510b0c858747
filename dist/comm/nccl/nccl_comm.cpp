// The Communicator of GPU ranks: NCCL, one GPU per rank (issue 31). Built
// into the CUDA module (libss_cuda.so, Note [The CUDA module is loaded on
// demand] in ops/cuda_loader/cuda_module.cpp), whose entry ss_nccl_join
// dist/comm/transport.cpp calls; its calls into Tensor, ops and the
// Communicator's checks resolve to the executable's.
//
// Note [NCCL beside the compute stream]
// Every kernel of a device runs on its one compute stream (Note [One
// stream] in ops/cuda/cuda_memory.cu). A collective runs on a stream of
// its lane's own (Options::lane: the evaluator's thread, the gradient
// buckets' thread), with a communicator of its own: the two lanes'
// collectives are issued in the same order on every rank within a lane,
// not across lanes, and one stream (or one communicator) for both would
// let rank 0 wait in lane 1's all-reduce while rank 1 waits in lane 0's.
// The lane's stream first waits for an event recorded on the compute
// stream, so the collective reads what the kernels before it wrote; then
// the host waits for the collective's end (polling, so that a timeout or
// a peer's failure ends the call as a CollectiveError, as Gloo's do: NCCL
// itself would wait forever). A call returns with its result in place, so
// the caching allocator's blocks stay safe to hand out again (no block is
// used on the lane's stream after the call returns).
//
// Note [A recorded step's collectives]
// Inside a recorded step (Note [Recorded steps] in
// interp/devices/recorded_calls.cpp) the compute stream is being captured
// into a CUDA graph, and the host may not wait for anything on it. A
// collective then only queues: the lane's stream joins the capture
// through the event recorded on the compute stream, the NCCL call is
// captured on it, and the compute stream waits for the lane's event after
// it, so the graph holds the collective between the kernels that make its
// input and those that read its result. The gradient buckets' collectives
// (lane 1) are queued by the recording thread itself (CommThread::submit
// runs a job in place while its caller records), in the order the
// evaluator makes them, the same on every rank; the compute stream waits
// for them only at join_lanes() (the buckets' finish, and the recording's
// end), so the graph lets them run beside the rest of the backward pass,
// as the eager run's communication thread does. A replay is then one
// launch; the host waits for it with await_device(), which polls as run()
// does, so a peer that never comes is a timeout and ncclCommAbort ends
// the graph's waiting kernels, not a hang.
//
// Communicators are non-blocking (ncclConfig_t::blocking = 0): a call may
// answer ncclInProgress, and ncclCommAbort can end a collective that waits
// for a peer that never comes. A peer's connection lost is ncclRemoteError
// or ncclSystemError: PeerGone.
//
// What NCCL does not do as Gloo does: tags (collectives of one lane are
// matched in order, as every caller issues them), and a received message's
// size (a send and a recv of different sizes are the caller's bug, not a
// checked error). bf16 and f16 reduce in f32 and are rounded once, as on
// the CPU (Note [Half-precision reductions] in communicator.cpp); NCCL's
// ring adds the ranks in its own order, so a sum of 3 or more ranks may
// differ from Gloo's in the last bit (deterministic mode sums no floats
// this way: it gathers the partials and folds them in its own tree).

#include <cuda_runtime.h>
#include <nccl.h>

#include <array>
#include <chrono>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "dist/comm/communicator.h"
#include "dist/comm/group_store.h"
#include "dist/rendezvous/store.h"
#include "ops/backend/backend.h"
#include "ops/cuda/cuda_memory.h"

namespace ss::dist {

namespace {

using Kind = CollectiveError::Kind;
using Clock = std::chrono::steady_clock;
using types::DType;

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return ncclSum;
    case ReduceOp::Max:
      return ncclMax;
    case ReduceOp::Min:
      return ncclMin;
    case ReduceOp::Prod:
      return ncclProd;
  }
  return ncclSum;
}

// The dtypes NCCL reduces as themselves (halves go through f32).
ncclDataType_t nccl_type(DType d) {
  switch (d) {
    case DType::F32:
      return ncclFloat32;
    case DType::F64:
      return ncclFloat64;
    case DType::I32:
      return ncclInt32;
    case DType::I64:
      return ncclInt64;
    default:
      return ncclUint8;
  }
}

class NcclComm final : public Communicator {
 public:
  NcclComm(int rank,
           int size,
           const std::string& store,
           const std::string& prefix,
           int gpu,
           std::chrono::milliseconds timeout)
      : rank_(rank),
        size_(size),
        gpu_(gpu),
        prefix_(prefix),
        store_(rendezvous::open_store(store)) {
    lane(0, CollectiveOp::Connect, timeout);
  }

  ~NcclComm() override {
    // Abort, not destroy: every call here has ended, and a destroy of a
    // non-blocking communicator can wait for the peers' (torch's process
    // group aborts its communicators as it ends, too).
    for (Lane& l : lanes_) {
      if (l.comm) ncclCommAbort(l.comm);
      // A lane closed or failed keeps its stream and event until now.
      if (l.stream) cudaStreamDestroy(l.stream);
      if (l.done) cudaEventDestroy(l.done);
    }
    if (ready_) cudaEventDestroy(ready_);
    if (settled_) cudaEventDestroy(settled_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  ops::Device device() const override {
    return ops::Device{ops::Device::Kind::Cuda, gpu_};
  }

  void all_reduce(Tensor& t, ReduceOp op, const Options& o) override {
    Staged s(t, device());
    begin_all_reduce(s.t);
    Tensor wide = widened(s.t);
    const bool unread = wide.same_storage(s.t) && !s.copied;
    run(
        CollectiveOp::AllReduce,
        o,
        [&](ncclComm_t c, cudaStream_t st) {
          return ncclAllReduce(wide.raw(),
                               wide.raw(),
                               size_t(wide.numel()),
                               nccl_type(wide.dtype()),
                               nccl_op(op),
                               c,
                               st);
        },
        unread ? std::vector<Tensor>{wide} : std::vector<Tensor>{});
    narrow_into(wide, s.t);
    s.back(t);
  }

  void all_gather(const Tensor& in, Tensor& out, const Options& o) override {
    Staged s(in, device());
    Staged r(out, device(), in.device());
    begin_all_gather(s.t, r.t);
    run(
        CollectiveOp::AllGather,
        o,
        [&](ncclComm_t c, cudaStream_t st) {
          return ncclAllGather(
              s.t.raw(), r.t.raw(), s.t.nbytes(), ncclUint8, c, st);
        },
        !s.copied && !r.copied ? std::vector<Tensor>{s.t, r.t}
                               : std::vector<Tensor>{});
    r.back(out);
  }

  void all_gather_v(const Tensor& in,
                    Tensor& out,
                    const std::vector<int64_t>& rows,
                    const Options& o) override {
    Staged s(in, device());
    Staged r(out, device(), in.device());
    begin_all_gather_v(s.t, r.t, rows);
    const size_t row =
        size_t(detail::row_elems(s.t)) * types::dtype_size(s.t.dtype());
    run(CollectiveOp::AllGatherV, o, [&](ncclComm_t c, cudaStream_t st) {
      // One broadcast from each rank of its rows, grouped: NCCL's
      // all-gather takes equal parts only.
      ncclResult_t e = ncclGroupStart();
      size_t at = 0;
      for (int p = 0; p < size_ && e == ncclSuccess; ++p) {
        char* to = static_cast<char*>(r.t.raw()) + at;
        const size_t n = size_t(rows[size_t(p)]) * row;
        e = ncclBroadcast(
            p == rank_ ? s.t.raw() : to, to, n, ncclUint8, p, c, st);
        at += n;
      }
      ncclResult_t end = ncclGroupEnd();
      return e != ncclSuccess ? e : end;
    });
    r.back(out);
  }

  void reduce_scatter(const Tensor& in,
                      Tensor& out,
                      ReduceOp op,
                      const Options& o) override {
    Staged s(in, device());
    Staged r(out, device(), in.device());
    begin_reduce_scatter(s.t, r.t);
    Tensor wide = widened(s.t), wide_out = widened(r.t);
    const bool unread = wide_out.same_storage(r.t) && !s.copied && !r.copied;
    run(
        CollectiveOp::ReduceScatter,
        o,
        [&](ncclComm_t c, cudaStream_t st) {
          return ncclReduceScatter(wide.raw(),
                                   wide_out.raw(),
                                   size_t(wide_out.numel()),
                                   nccl_type(wide.dtype()),
                                   nccl_op(op),
                                   c,
                                   st);
        },
        unread ? std::vector<Tensor>{wide, wide_out} : std::vector<Tensor>{});
    narrow_into(wide_out, r.t);
    r.back(out);
  }

  void broadcast(Tensor& t, int root, const Options& o) override {
    Staged s(t, device());
    begin_broadcast(s.t, root);
    run(CollectiveOp::Broadcast, o, [&](ncclComm_t c, cudaStream_t st) {
      return ncclBroadcast(
          s.t.raw(), s.t.raw(), s.t.nbytes(), ncclUint8, root, c, st);
    });
    s.back(t);
  }

  void send(const Tensor& t, int dst, const Options& o) override {
    Tensor none;
    send_recv(t, dst, none, -1, o);
  }

  void recv(Tensor& t, int src, const Options& o) override {
    send_recv(Tensor(), -1, t, src, o);
  }

  void send_recv(const Tensor& out,
                 int dst,
                 Tensor& in,
                 int src,
                 const Options& o) override {
    const auto sop = CollectiveOp::Send, rop = CollectiveOp::Recv;
    check_usable(dst >= 0 ? sop : rop);
    Staged s(dst >= 0 ? out : Tensor(), device());
    Staged r(src >= 0 ? in : Tensor(), device());
    if (dst >= 0) {
      check_point_to_point(s.t, dst, sop);
      if (dst == rank_)
        detail::fail(Kind::Other, sop, rank_, dst, "cannot send to itself");
    }
    if (src >= 0) {
      check_point_to_point(r.t, src, rop);
      if (src == rank_)
        detail::fail(
            Kind::Other, rop, rank_, src, "cannot receive from itself");
    }
    run(src >= 0 ? rop : sop, o, [&](ncclComm_t c, cudaStream_t st) {
      ncclResult_t e = ncclGroupStart();
      if (e == ncclSuccess && dst >= 0)
        e = ncclSend(s.t.raw(), s.t.nbytes(), ncclUint8, dst, c, st);
      if (e == ncclSuccess && src >= 0)
        e = ncclRecv(r.t.raw(), r.t.nbytes(), ncclUint8, src, c, st);
      ncclResult_t end = ncclGroupEnd();
      return e != ncclSuccess ? e : end;
    });
    if (dst >= 0) record(sop, out.numel(), out.dtype());
    if (src >= 0) {
      r.back(in);
      record(rop, in.numel(), in.dtype());
    }
  }

  void barrier(const Options& o) override {
    begin_barrier();
    Tensor one = Tensor::zeros({1}, DType::I32, device());
    run(CollectiveOp::Barrier, o, [&](ncclComm_t c, cudaStream_t st) {
      return ncclAllReduce(one.raw(), one.raw(), 1, ncclInt32, ncclSum, c, st);
    });
  }

  void close() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_) return;
    failed_ = true;
    why_ = "this communicator was closed";
    for (Lane& l : lanes_)
      if (l.comm) ncclCommAbort(l.comm);
    for (Lane& l : lanes_) l.comm = nullptr;
  }

  // Note [A recorded step's collectives]
  void join_lanes() override {
    auto compute = static_cast<cudaStream_t>(ops::cuda::current_stream());
    for (Lane& l : lanes_)
      if (l.unjoined) {
        l.unjoined = false;
        join(CollectiveOp::AllReduce, l, compute);
        l.held.clear();
      }
  }

  void await_device(const Options& o) override {
    const auto op = CollectiveOp::AllReduce;
    check_usable(op);
    set_device(op);
    if (!settled_) cudaEventCreateWithFlags(&settled_, cudaEventDisableTiming);
    auto compute = static_cast<cudaStream_t>(ops::cuda::current_stream());
    cudaEventRecord(settled_, compute);
    await_event(settled_, op, Clock::now() + o.timeout, nullptr, [&] {
      return "a recorded step's collectives timed out after " +
             std::to_string(o.timeout.count()) +
             " ms waiting for the other ranks (NCCL)";
    });
  }

 protected:
  void check_usable(CollectiveOp op) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_) detail::fail(Kind::Other, op, rank_, -1, why_);
  }

 private:
  // A lane's communicator and stream (Note [NCCL beside the compute
  // stream]), made by its first collective on every rank together.
  struct Lane {
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr;
    /// Recording: collectives queued that the compute stream does not
    /// wait for yet (Note [A recorded step's collectives]).
    bool unjoined = false;
    std::vector<Tensor> held;  // their tensors
  };
  static constexpr int kLanes = 2;

  // A CPU tensor handed to a GPU rank (a host value the lowering
  // exchanges: a kernel signature, a count) goes through the GPU: [t] is
  // the tensor on the GPU, and back() writes the result into the caller's.
  // Another GPU's tensor is left as it is, for the checks to refuse.
  struct Staged {
    Tensor t;
    bool copied = false;
    // [x] undefined with [like] given: an output to allocate on the GPU
    // (the caller's is made on [like], the input's device, by back()).
    Staged(const Tensor& x, ops::Device gpu, ops::Device like = {}) {
      output_on = like;
      if (!x.defined()) return;
      if (x.device().kind == ops::Device::Kind::Cpu) {
        t = x.to(gpu);
        copied = true;
      } else {
        t = x;
      }
    }
    void back(Tensor& x) {
      if (!x.defined()) {
        x = output_on.kind == ops::Device::Kind::Cpu ? t.to(ops::Device{}) : t;
      } else if (copied) {
        x.copy_from(t);
      }
    }
    ops::Device output_on;
  };

  void set_device(CollectiveOp op) {
    if (cudaError_t e = cudaSetDevice(gpu_); e != cudaSuccess)
      detail::fail(Kind::Other,
                   op,
                   rank_,
                   -1,
                   std::string("cudaSetDevice: ") + cudaGetErrorString(e));
  }

  // bf16 and f16 travel as f32 for a reduction (the backend's cast: the
  // tensors are on this GPU).
  static Tensor widened(const Tensor& t) {
    return detail::is_half(t.dtype()) ? ops::cuda_backend().cast(t, DType::F32)
                                      : t;
  }
  static void narrow_into(const Tensor& wide, Tensor& t) {
    if (wide.same_storage(t)) return;
    t.copy_from(ops::cuda_backend().cast(wide, t.dtype()));
  }

  // The lane's communicator, made on first use: rank 0 draws the NCCL id
  // and puts it in the job's store under the group's prefix; every rank
  // then joins with it.
  Lane& lane(int index, CollectiveOp op, std::chrono::milliseconds timeout) {
    const int k = index < 0 || index >= kLanes ? 0 : index;
    Lane& l = lanes_[size_t(k)];
    if (l.comm) return l;
    set_device(op);
    const std::string key = prefix_ + ".nccl.lane" + std::to_string(k);
    ncclUniqueId id;
    std::vector<char> bytes;
    try {
      bytes = detail::value_of_rank0(
          *store_,
          rank_,
          prefix_,
          key,
          [&] {
            ncclUniqueId mine;
            if (ncclResult_t e = ncclGetUniqueId(&mine); e != ncclSuccess)
              throw std::runtime_error(std::string("ncclGetUniqueId: ") +
                                       ncclGetErrorString(e));
            return std::vector<char>(mine.internal,
                                     mine.internal + sizeof mine.internal);
          },
          timeout,
          std::chrono::milliseconds(1));
    } catch (const std::runtime_error& e) {
      const bool late = std::strncmp(e.what(), "Wait timeout", 12) == 0;
      detail::fail(
          late ? Kind::Timeout : Kind::PeerGone,
          CollectiveOp::Connect,
          rank_,
          -1,
          std::string("joining the NCCL group '") + prefix_ + "': " + e.what());
    }
    if (bytes.size() != sizeof id.internal)
      detail::fail(Kind::Other,
                   CollectiveOp::Connect,
                   rank_,
                   -1,
                   "the NCCL id in the store has " +
                       std::to_string(bytes.size()) + " bytes");
    std::memcpy(id.internal, bytes.data(), sizeof id.internal);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t comm = nullptr;
    const Clock::time_point until = Clock::now() + timeout;
    ncclResult_t e = ncclCommInitRankConfig(&comm, size_, id, rank_, &config);
    settle(comm, e, CollectiveOp::Connect, until, timeout);
    l.comm = comm;
    cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking);
    cudaEventCreateWithFlags(&l.done, cudaEventDisableTiming);
    if (!ready_) cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming);
    return l;
  }

  // Every later call refuses, saying why.
  void note_failure(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    failed_ = true;
    why_ = "an earlier collective failed: " + what;
  }

  [[noreturn]] void failed(Kind kind,
                           CollectiveOp op,
                           const std::string& what,
                           ncclComm_t comm) {
    note_failure(what);
    if (comm) ncclCommAbort(comm);
    for (Lane& l : lanes_)
      if (l.comm == comm) l.comm = nullptr;
    detail::fail(kind, op, rank_, -1, what);
  }

  // A failure seen outside one lane's call: every lane is aborted.
  [[noreturn]] void failed(Kind kind,
                           CollectiveOp op,
                           const std::string& what) {
    note_failure(what);
    for (Lane& l : lanes_) {
      if (l.comm) ncclCommAbort(l.comm);
      l.comm = nullptr;
    }
    detail::fail(kind, op, rank_, -1, what);
  }

  // Waits until a non-blocking call's state is no longer ncclInProgress.
  void settle(ncclComm_t comm,
              ncclResult_t e,
              CollectiveOp op,
              Clock::time_point until,
              std::chrono::milliseconds timeout) {
    while (e == ncclInProgress) {
      if (Clock::now() > until)
        failed(Kind::Timeout, op, timed_out(op, timeout), comm);
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      ncclCommGetAsyncError(comm, &e);
    }
    if (e != ncclSuccess) failed(kind_of(e), op, said(e), comm);
  }

  static Kind kind_of(ncclResult_t e) {
    return e == ncclRemoteError || e == ncclSystemError ? Kind::PeerGone
                                                        : Kind::Other;
  }
  static std::string said(ncclResult_t e) {
    std::string s = std::string("NCCL: ") + ncclGetErrorString(e);
    if (e == ncclRemoteError || e == ncclSystemError)
      s += " (a peer is gone or its connection broke)";
    return s;
  }
  std::string timed_out(CollectiveOp op,
                        std::chrono::milliseconds timeout) const {
    return std::string(collective_name(op)) + " timed out after " +
           std::to_string(timeout.count()) +
           " ms waiting for the other ranks (NCCL)";
  }

  // Issues [call] on the lane's stream after the compute stream's work,
  // then waits for it (Note [NCCL beside the compute stream]). Inside a
  // recording it only queues it (Note [A recorded step's collectives]);
  // [unread]: its tensors, when nothing reads its result on the compute
  // stream before join_lanes(): a lane but the main one may then run it
  // beside the work after it, and they are kept until then (the pool would
  // hand their bytes to that work otherwise).
  template <class Call>
  void run(CollectiveOp op,
           const Options& o,
           Call call,
           std::vector<Tensor> unread = {}) {
    set_device(op);
    Lane& l = lane(o.lane, op, o.timeout);
    const Clock::time_point until = Clock::now() + o.timeout;
    auto compute = static_cast<cudaStream_t>(ops::cuda::current_stream());
    {
      // ready_ is shared by the lanes: record and wait under the lock.
      std::lock_guard<std::mutex> lock(ready_mu_);
      cudaEventRecord(ready_, compute);
      cudaStreamWaitEvent(l.stream, ready_, 0);
    }
    settle(l.comm, call(l.comm, l.stream), op, until, o.timeout);
    cudaEventRecord(l.done, l.stream);
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    cudaStreamIsCapturing(compute, &capture);
    if (capture == cudaStreamCaptureStatusActive) {
      if (!unread.empty() && o.lane != 0) {
        l.unjoined = true;
        for (Tensor& t : unread) l.held.push_back(std::move(t));
      } else {
        join(op, l, compute);
      }
      return;
    }
    await_event(
        l.done, op, until, &l, [&] { return timed_out(op, o.timeout); });
  }

  // Polls [ev] until the work before it has run: a CUDA error, an NCCL
  // error of [only]'s communicator (of every lane's when null), or
  // [until] passing (the failure [why_late] says) fails the collective,
  // aborting that communicator (every lane's). No host wait blocks, so a
  // peer that never comes is a timeout, not a hang.
  template <class WhyLate>
  void await_event(cudaEvent_t ev,
                   CollectiveOp op,
                   Clock::time_point until,
                   Lane* only,
                   WhyLate why_late) {
    auto fail = [&](Kind kind, const std::string& what) {
      if (only)
        failed(kind, op, what, only->comm);
      else
        failed(kind, op, what);
    };
    for (;;) {
      cudaError_t q = cudaEventQuery(ev);
      if (q == cudaSuccess) return;
      if (q != cudaErrorNotReady)
        fail(Kind::Other, std::string("CUDA: ") + cudaGetErrorString(q));
      for (Lane& l : lanes_) {
        if (only && &l != only) continue;
        ncclResult_t async = ncclSuccess;
        if (l.comm) ncclCommGetAsyncError(l.comm, &async);
        if (async != ncclSuccess && async != ncclInProgress)
          fail(kind_of(async), said(async));
      }
      if (Clock::now() > until) fail(Kind::Timeout, why_late());
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  // The compute stream waits for [l]'s collectives queued so far.
  void join(CollectiveOp op, Lane& l, cudaStream_t compute) {
    if (cudaError_t e = cudaStreamWaitEvent(compute, l.done, 0);
        e != cudaSuccess)
      failed(Kind::Other, op, std::string("CUDA: ") + cudaGetErrorString(e));
  }

  int rank_, size_, gpu_;
  std::string prefix_;
  std::unique_ptr<rendezvous::Store> store_;
  std::array<Lane, kLanes> lanes_;
  cudaEvent_t ready_ = nullptr;
  cudaEvent_t settled_ = nullptr;  // await_device's
  std::mutex ready_mu_;
  std::mutex mu_;
  bool failed_ = false;
  std::string why_;
};

}  // namespace

}  // namespace ss::dist

extern "C" {
/// The CUDA module's NCCL entry (dist/comm/transport.cpp): joins [rank]
/// of [size] to the group [prefix] through the job's store at [store],
/// on GPU [gpu]. Throws CollectiveError (op Connect) when it cannot.
ss::dist::Communicator* ss_nccl_join(int rank,
                                     int size,
                                     const char* store,
                                     const char* prefix,
                                     int gpu,
                                     long long timeout_ms) {
  return new ss::dist::NcclComm(
      rank, size, store, prefix, gpu, std::chrono::milliseconds(timeout_ms));
}
}
