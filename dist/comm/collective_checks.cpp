// Note [One set of collective checks]
// Each collective checks its arguments on the calling rank before any byte
// moves (a tensor undefined or of a dtype the transports do not carry, an
// `out` of the wrong size, rows that do not list every rank, a root or a
// peer out of range) and records its payload (the log of communicator.h's
// file comment). The checks and their messages are the same whatever moves
// the bytes, so they are the Communicator's: GlooComm and InprocComm call
// begin_<op> first, and a new transport (NCCL) does the same and inherits
// the messages the tests compare. What a transport checks after the
// exchange (ranks that disagree, a message of the wrong size) is its own.

#include <string>

#include "dist/comm/communicator.h"

namespace ss::dist {

using Kind = CollectiveError::Kind;

void Communicator::begin_all_reduce(const Tensor& t) {
  const auto cop = CollectiveOp::AllReduce;
  check_usable(cop);
  detail::check_tensor(t, cop, rank(), "tensor", device());
  record(cop, t.numel(), t.dtype());
}

void Communicator::begin_all_gather(const Tensor& in, Tensor& out) {
  const auto cop = CollectiveOp::AllGather;
  check_usable(cop);
  detail::check_tensor(in, cop, rank(), "input", device());
  const int64_t rows = in.rank() == 0 ? 1 : in.shape()[0];
  detail::prepare_out(out,
                      detail::gather_shape(in.shape(), rows * size()),
                      in.dtype(),
                      cop,
                      rank(),
                      in.device());
  record(cop, in.numel(), in.dtype());
}

void Communicator::begin_all_gather_v(const Tensor& in,
                                      Tensor& out,
                                      const std::vector<int64_t>& rows) {
  const auto cop = CollectiveOp::AllGatherV;
  check_usable(cop);
  detail::check_tensor(in, cop, rank(), "input", device());
  if ((int)rows.size() != size() || in.rank() == 0 ||
      in.shape()[0] != rows[rank()])
    detail::fail(Kind::Other,
                 cop,
                 rank(),
                 -1,
                 "rows must list every rank's rows along axis 0, and this "
                 "rank's input must have rows[rank] of them");
  int64_t total = 0;
  for (auto r : rows) total += r;
  detail::prepare_out(out,
                      detail::gather_shape(in.shape(), total),
                      in.dtype(),
                      cop,
                      rank(),
                      in.device());
  record(cop, in.numel(), in.dtype());
}

void Communicator::begin_reduce_scatter(const Tensor& in, Tensor& out) {
  const auto cop = CollectiveOp::ReduceScatter;
  check_usable(cop);
  detail::check_tensor(in, cop, rank(), "input", device());
  if (in.rank() == 0 || in.shape()[0] % size() != 0)
    detail::fail(Kind::Other,
                 cop,
                 rank(),
                 -1,
                 "axis 0 of " + ops::shape_string(in.shape()) +
                     " is not divisible by " + std::to_string(size()));
  ops::Shape shape = in.shape();
  shape[0] /= size();
  detail::prepare_out(out, shape, in.dtype(), cop, rank(), in.device());
  record(cop, in.numel(), in.dtype());
}

void Communicator::begin_broadcast(const Tensor& t, int root) {
  const auto cop = CollectiveOp::Broadcast;
  check_usable(cop);
  detail::check_tensor(t, cop, rank(), "tensor", device());
  check_peer(root, cop);
  record(cop, t.numel(), t.dtype());
}

void Communicator::begin_barrier() {
  const auto cop = CollectiveOp::Barrier;
  check_usable(cop);
  record(cop, 0, types::DType::F32);
}

void Communicator::check_point_to_point(const Tensor& t,
                                        int peer,
                                        CollectiveOp op) {
  detail::check_tensor(t, op, rank(), "tensor", device());
  check_peer(peer, op);
}

void Communicator::check_peer(int peer, CollectiveOp op) {
  if (peer < 0 || peer >= size())
    detail::fail(Kind::Other,
                 op,
                 rank(),
                 -1,
                 "rank " + std::to_string(peer) + " out of range for " +
                     std::to_string(size()) + " ranks");
}

}  // namespace ss::dist
