#include "dist/comm/host_staged_comm.h"

#include "ops/backend/recorded_step.h"

namespace ss::dist {

// Note [Collectives through the host]
// A GPU rank talks NCCL to its peers when each has a GPU of its own (NCCL
// refuses two ranks on one GPU). Where they share one (the device check's
// one GPU running `cuda[0 1 2]`'s workers, scripts/gpu_check.sh), the same
// collectives go through the host: each device tensor is copied to the
// host, the host transport runs the collective, and the result is copied
// into the device tensor in place. The checks and the payload log are this
// communicator's (begin_<op>, on the device tensors), so a run logs what
// it would over NCCL; the host transport keeps a log of its own. It is
// also the stand-in GPU's NCCL (tests/stand_in_gpu/stand_in_gpu.cpp).
// Inside a recorded step (Note [Recorded steps] in
// interp/devices/recorded_calls.cpp) the same work is recorded as a host
// call (ops::StepRecorder::host_call): the copies and the host
// collective run at each replay, in their place among the step's work, on
// the recording thread's order, which is the same on every rank (the
// gradient buckets are queued there too while a step records: Note [A
// recorded step's collectives] in dist/comm/nccl/nccl_comm.cpp). So the
// probe before a recording does not count these copies as reads (they are
// recordable); a collective of host values does count, as the host takes
// part in it. The payload log holds what was recorded, once: a replay
// logs nothing.
HostStagedComm::HostStagedComm(std::unique_ptr<Communicator> host,
                               ops::Device device)
    : host_(std::move(host)), device_(device) {}

void HostStagedComm::through_host(std::vector<Tensor> reads,
                                  std::vector<Tensor> writes,
                                  HostFn fn) {
  bool host_values = false;
  for (const auto* list : {&reads, &writes})
    for (const Tensor& t : *list)
      host_values |= t.defined() && t.device().kind == ops::Device::Kind::Cpu;
  ops::StepRecorder* rec = ops::step_recorder(device_.kind);
  if (rec && rec->recording() && !host_values)
    return rec->host_call(std::move(reads), std::move(writes), std::move(fn));
  if (host_values) ops::note_host_dependency();
  const ops::RecordableRead recordable;
  std::vector<Tensor> in, out;
  for (const Tensor& t : reads) in.push_back(t.to(ops::Device{}));
  for (const Tensor& t : writes)
    out.push_back(Tensor::empty(t.shape(), t.dtype()));
  fn(in, out);
  for (size_t i = 0; i < writes.size(); ++i) writes[i].copy_from(out[i]);
}

void HostStagedComm::check_usable(CollectiveOp op) {
  if (closed_)
    detail::fail(CollectiveError::Kind::Other,
                 op,
                 rank(),
                 -1,
                 "this communicator was closed");
}

void HostStagedComm::all_reduce(Tensor& t, ReduceOp op, const Options& o) {
  begin_all_reduce(t);
  Communicator* h = host_.get();
  through_host({t}, {t}, [h, op, o](auto& in, auto& out) {
    h->all_reduce(in[0], op, o);
    out[0] = in[0];
  });
}

void HostStagedComm::all_gather(const Tensor& in,
                                Tensor& out,
                                const Options& o) {
  begin_all_gather(in, out);
  Communicator* h = host_.get();
  through_host(
      {in}, {out}, [h, o](auto& r, auto& w) { h->all_gather(r[0], w[0], o); });
}

void HostStagedComm::all_gather_v(const Tensor& in,
                                  Tensor& out,
                                  const std::vector<int64_t>& rows,
                                  const Options& o) {
  begin_all_gather_v(in, out, rows);
  Communicator* h = host_.get();
  through_host({in}, {out}, [h, rows, o](auto& r, auto& w) {
    h->all_gather_v(r[0], w[0], rows, o);
  });
}

void HostStagedComm::reduce_scatter(const Tensor& in,
                                    Tensor& out,
                                    ReduceOp op,
                                    const Options& o) {
  begin_reduce_scatter(in, out);
  Communicator* h = host_.get();
  through_host({in}, {out}, [h, op, o](auto& r, auto& w) {
    h->reduce_scatter(r[0], w[0], op, o);
  });
}

void HostStagedComm::broadcast(Tensor& t, int root, const Options& o) {
  begin_broadcast(t, root);
  Communicator* h = host_.get();
  through_host({t}, {t}, [h, root, o](auto& r, auto& w) {
    h->broadcast(r[0], root, o);
    w[0] = r[0];
  });
}

void HostStagedComm::send(const Tensor& t, int dst, const Options& o) {
  check_usable(CollectiveOp::Send);
  check_point_to_point(t, dst, CollectiveOp::Send);
  Communicator* h = host_.get();
  through_host({t}, {}, [h, dst, o](auto& r, auto&) { h->send(r[0], dst, o); });
  record(CollectiveOp::Send, t.numel(), t.dtype());
}

void HostStagedComm::recv(Tensor& t, int src, const Options& o) {
  check_usable(CollectiveOp::Recv);
  check_point_to_point(t, src, CollectiveOp::Recv);
  Communicator* h = host_.get();
  through_host({}, {t}, [h, src, o](auto&, auto& w) { h->recv(w[0], src, o); });
  record(CollectiveOp::Recv, t.numel(), t.dtype());
}

void HostStagedComm::send_recv(
    const Tensor& out, int dst, Tensor& in, int src, const Options& o) {
  check_usable(CollectiveOp::Send);
  if (dst >= 0) check_point_to_point(out, dst, CollectiveOp::Send);
  if (src >= 0) check_point_to_point(in, src, CollectiveOp::Recv);
  std::vector<Tensor> reads, writes;
  if (dst >= 0) reads.push_back(out);
  if (src >= 0) writes.push_back(in);
  Communicator* h = host_.get();
  through_host(reads, writes, [h, dst, src, o](auto& r, auto& w) {
    Tensor none;
    h->send_recv(
        dst >= 0 ? r[0] : Tensor(), dst, src >= 0 ? w[0] : none, src, o);
  });
  if (dst >= 0) record(CollectiveOp::Send, out.numel(), out.dtype());
  if (src >= 0) record(CollectiveOp::Recv, in.numel(), in.dtype());
}

void HostStagedComm::barrier(const Options& o) {
  begin_barrier();
  Communicator* h = host_.get();
  through_host({}, {}, [h, o](auto&, auto&) { h->barrier(o); });
}

void HostStagedComm::close() {
  closed_ = true;
  host_->close();
}

}  // namespace ss::dist
