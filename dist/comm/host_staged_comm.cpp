#include "dist/comm/host_staged_comm.h"

namespace ss::dist {

// Note [Collectives through the host]
// A GPU rank talks NCCL to its peers when each has a GPU of its own (NCCL
// refuses two ranks on one GPU). Where they share one (the device check's
// one GPU running `cuda[0 1 2]`'s workers, scripts/gpu_check.sh), the same
// collectives go through the host: each device tensor is copied to the
// host, the host transport runs the collective, and the result is copied
// into the device tensor in place. The checks and the payload log are this
// communicator's (begin_<op>, on the device tensors), so a run logs what
// it would over NCCL; the host transport keeps a log of its own.
HostStagedComm::HostStagedComm(std::unique_ptr<Communicator> host,
                               ops::Device device)
    : host_(std::move(host)), device_(device) {}

namespace {

Tensor on_host(const Tensor& t) {
  return t.to(ops::Device{});
}

}  // namespace

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
  Tensor h = on_host(t);
  host_->all_reduce(h, op, o);
  t.copy_from(h);
}

void HostStagedComm::all_gather(const Tensor& in,
                                Tensor& out,
                                const Options& o) {
  begin_all_gather(in, out);
  Tensor h;
  host_->all_gather(on_host(in), h, o);
  out.copy_from(h);
}

void HostStagedComm::all_gather_v(const Tensor& in,
                                  Tensor& out,
                                  const std::vector<int64_t>& rows,
                                  const Options& o) {
  begin_all_gather_v(in, out, rows);
  Tensor h;
  host_->all_gather_v(on_host(in), h, rows, o);
  out.copy_from(h);
}

void HostStagedComm::reduce_scatter(const Tensor& in,
                                    Tensor& out,
                                    ReduceOp op,
                                    const Options& o) {
  begin_reduce_scatter(in, out);
  Tensor h;
  host_->reduce_scatter(on_host(in), h, op, o);
  out.copy_from(h);
}

void HostStagedComm::broadcast(Tensor& t, int root, const Options& o) {
  begin_broadcast(t, root);
  Tensor h = on_host(t);
  host_->broadcast(h, root, o);
  t.copy_from(h);
}

void HostStagedComm::send(const Tensor& t, int dst, const Options& o) {
  check_usable(CollectiveOp::Send);
  check_point_to_point(t, dst, CollectiveOp::Send);
  host_->send(on_host(t), dst, o);
  record(CollectiveOp::Send, t.numel(), t.dtype());
}

void HostStagedComm::recv(Tensor& t, int src, const Options& o) {
  check_usable(CollectiveOp::Recv);
  check_point_to_point(t, src, CollectiveOp::Recv);
  Tensor h = Tensor::empty(t.shape(), t.dtype());
  host_->recv(h, src, o);
  t.copy_from(h);
  record(CollectiveOp::Recv, t.numel(), t.dtype());
}

void HostStagedComm::send_recv(
    const Tensor& out, int dst, Tensor& in, int src, const Options& o) {
  check_usable(CollectiveOp::Send);
  if (dst >= 0) check_point_to_point(out, dst, CollectiveOp::Send);
  if (src >= 0) check_point_to_point(in, src, CollectiveOp::Recv);
  Tensor h_in = src >= 0 ? Tensor::empty(in.shape(), in.dtype()) : Tensor();
  host_->send_recv(dst >= 0 ? on_host(out) : Tensor(), dst, h_in, src, o);
  if (src >= 0) in.copy_from(h_in);
  if (dst >= 0) record(CollectiveOp::Send, out.numel(), out.dtype());
  if (src >= 0) record(CollectiveOp::Recv, in.numel(), in.dtype());
}

void HostStagedComm::barrier(const Options& o) {
  begin_barrier();
  host_->barrier(o);
}

void HostStagedComm::close() {
  closed_ = true;
  host_->close();
}

}  // namespace ss::dist
