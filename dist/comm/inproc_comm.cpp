#include "dist/comm/inproc_comm.h"

#include <cstring>
#include <string>

namespace ss::dist {

using Kind = CollectiveError::Kind;

InprocHub::InprocHub(int size) : size_(size), gone_(size, false) {
  if (size < 1) throw std::invalid_argument("InprocHub: size must be >= 1");
}

InprocComm::InprocComm(std::shared_ptr<InprocHub> hub, int rank)
    : hub_(std::move(hub)), rank_(rank) {
  if (!hub_ || rank < 0 || rank >= hub_->size())
    throw std::invalid_argument("InprocComm: rank out of range");
}

InprocComm::~InprocComm() {
  close();
}

void InprocComm::close() {
  {
    std::lock_guard<std::mutex> lk(hub_->mu_);
    hub_->gone_[rank_] = true;
  }
  hub_->cv_.notify_all();
  if (!broken_) {
    broken_ = true;
    broken_why_ = "the communicator was closed";
  }
}

void InprocComm::check_usable(CollectiveOp op) {
  if (broken_)
    detail::fail(
        Kind::Other, op, rank_, -1, "communicator unusable: " + broken_why_);
}

void InprocComm::fail_and_close(Kind k,
                                CollectiveOp op,
                                int peer,
                                const std::string& what) {
  close();
  broken_why_ = std::string("an earlier ") + collective_name(op) + " failed";
  detail::fail(k, op, rank_, peer, what);
}

std::shared_ptr<InprocHub::Round> InprocComm::exchange(CollectiveOp op,
                                                       const Options& o,
                                                       InprocHub::Part mine) {
  const uint64_t tag = o.tag & 0xffffff;
  const auto deadline = std::chrono::steady_clock::now() + o.timeout;
  const int n = size();
  std::unique_lock<std::mutex> lk(hub_->mu_);
  // Under the hub's lock: collectives with different tags may run from
  // different threads of one rank at once.
  const auto key = std::make_pair(tag, seq_[tag]++);
  auto& slot = hub_->rounds_[key];
  if (!slot) {
    slot = std::make_shared<InprocHub::Round>();
    slot->op = op;
    slot->parts.resize(n);
  }
  std::shared_ptr<InprocHub::Round> round = slot;
  if (round->op != op) {
    std::string other = collective_name(round->op);
    lk.unlock();
    fail_and_close(Kind::Other,
                   op,
                   -1,
                   "mismatched collectives: another rank called " + other +
                       " at the same point");
  }
  mine.posted = true;
  round->parts[rank_] = std::move(mine);
  round->posted++;
  if (round->posted == n) hub_->cv_.notify_all();

  auto missing_or_gone = [&](bool* any_gone, int* who) {
    for (int r = 0; r < n; ++r)
      if (!round->parts[r].posted) {
        if (hub_->gone_[r]) {
          *any_gone = true;
          *who = r;
          return;
        }
        if (*who < 0) *who = r;
      }
  };
  while (round->posted < n) {
    bool gone = false;
    int who = -1;
    missing_or_gone(&gone, &who);
    if (gone) {
      lk.unlock();
      fail_and_close(Kind::PeerGone,
                     op,
                     who,
                     "rank " + std::to_string(who) + " left the group");
    }
    if (hub_->cv_.wait_until(lk, deadline) == std::cv_status::timeout &&
        round->posted < n) {
      std::string missing;
      int first = -1;
      for (int r = 0; r < n; ++r)
        if (!round->parts[r].posted) {
          if (first < 0) first = r;
          missing += (missing.empty() ? "" : ", ") + std::to_string(r);
        }
      lk.unlock();
      fail_and_close(Kind::Timeout,
                     op,
                     first,
                     "timed out after " + std::to_string(o.timeout.count()) +
                         " ms waiting for rank(s) " + missing);
    }
  }
  if (++round->fetched == n) hub_->rounds_.erase(key);
  return round;
}

void InprocComm::all_reduce(Tensor& t, ReduceOp op, const Options& o) {
  const auto cop = CollectiveOp::AllReduce;
  begin_all_reduce(t);
  InprocHub::Part p;
  p.count = t.numel();
  p.dtype = t.dtype();
  p.aux = static_cast<int64_t>(op);
  p.bytes.assign(static_cast<const unsigned char*>(t.raw()),
                 static_cast<const unsigned char*>(t.raw()) + t.nbytes());
  auto round = exchange(cop, o, std::move(p));
  for (int r = 0; r < size(); ++r) {
    const auto& q = round->parts[r];
    if (q.count != t.numel() || q.dtype != t.dtype() || q.aux != (int64_t)op)
      fail_and_close(
          Kind::Other,
          cop,
          r,
          "ranks disagree on count, dtype or op: " + std::to_string(q.count) +
              " " + types::dtype_name(q.dtype) + " vs " +
              std::to_string(t.numel()) + " " + types::dtype_name(t.dtype()));
  }
  // Reduce in rank order so every rank gets bit-identical results.
  std::vector<const void*> parts;
  for (int r = 0; r < size(); ++r)
    parts.push_back(round->parts[r].bytes.data());
  detail::reduce_parts(parts, t.raw(), t.numel(), t.dtype(), op);
}

void InprocComm::all_gather(const Tensor& in, Tensor& out, const Options& o) {
  const auto cop = CollectiveOp::AllGather;
  begin_all_gather(in, out);
  InprocHub::Part p;
  p.count = in.numel();
  p.dtype = in.dtype();
  p.bytes.assign(static_cast<const unsigned char*>(in.raw()),
                 static_cast<const unsigned char*>(in.raw()) + in.nbytes());
  auto round = exchange(cop, o, std::move(p));
  auto* dst = static_cast<unsigned char*>(out.raw());
  for (int r = 0; r < size(); ++r) {
    const auto& q = round->parts[r];
    if (q.count != in.numel() || q.dtype != in.dtype())
      fail_and_close(
          Kind::Other, cop, r, "ranks disagree on part size or dtype");
    std::memcpy(dst + r * in.nbytes(), q.bytes.data(), q.bytes.size());
  }
}

void InprocComm::all_gather_v(const Tensor& in,
                              Tensor& out,
                              const std::vector<int64_t>& rows,
                              const Options& o) {
  const auto cop = CollectiveOp::AllGatherV;
  begin_all_gather_v(in, out, rows);
  const int64_t row = detail::row_elems(in);
  InprocHub::Part p;
  p.count = in.numel();
  p.dtype = in.dtype();
  p.aux = row;
  p.bytes.assign(static_cast<const unsigned char*>(in.raw()),
                 static_cast<const unsigned char*>(in.raw()) + in.nbytes());
  auto round = exchange(cop, o, std::move(p));
  auto* dst = static_cast<unsigned char*>(out.raw());
  size_t off = 0;
  for (int r = 0; r < size(); ++r) {
    const auto& q = round->parts[r];
    if (q.count != rows[r] * row || q.dtype != in.dtype())
      fail_and_close(Kind::Other,
                     cop,
                     r,
                     "rank " + std::to_string(r) + " sent " +
                         std::to_string(q.count) + " values, expected " +
                         std::to_string(rows[r] * row));
    std::memcpy(dst + off, q.bytes.data(), q.bytes.size());
    off += q.bytes.size();
  }
}

void InprocComm::reduce_scatter(const Tensor& in,
                                Tensor& out,
                                ReduceOp op,
                                const Options& o) {
  const auto cop = CollectiveOp::ReduceScatter;
  begin_reduce_scatter(in, out);
  InprocHub::Part p;
  p.count = in.numel();
  p.dtype = in.dtype();
  p.aux = static_cast<int64_t>(op);
  p.bytes.assign(static_cast<const unsigned char*>(in.raw()),
                 static_cast<const unsigned char*>(in.raw()) + in.nbytes());
  auto round = exchange(cop, o, std::move(p));
  const int64_t block = out.numel();
  const size_t bb = out.nbytes();
  for (int r = 0; r < size(); ++r) {
    const auto& q = round->parts[r];
    if (q.count != in.numel() || q.dtype != in.dtype() || q.aux != (int64_t)op)
      fail_and_close(
          Kind::Other, cop, r, "ranks disagree on count, dtype or op");
  }
  std::vector<const void*> parts;
  for (int r = 0; r < size(); ++r)
    parts.push_back(round->parts[r].bytes.data() + rank_ * bb);
  detail::reduce_parts(parts, out.raw(), block, in.dtype(), op);
}

void InprocComm::broadcast(Tensor& t, int root, const Options& o) {
  const auto cop = CollectiveOp::Broadcast;
  begin_broadcast(t, root);
  InprocHub::Part p;
  p.count = t.numel();
  p.dtype = t.dtype();
  p.aux = root;
  if (rank_ == root)
    p.bytes.assign(static_cast<const unsigned char*>(t.raw()),
                   static_cast<const unsigned char*>(t.raw()) + t.nbytes());
  auto round = exchange(cop, o, std::move(p));
  const auto& q = round->parts[root];
  if (q.aux != root || q.count != t.numel() || q.dtype != t.dtype())
    fail_and_close(
        Kind::Other, cop, root, "ranks disagree on root, count or dtype");
  if (rank_ != root) std::memcpy(t.raw(), q.bytes.data(), q.bytes.size());
}

void InprocComm::barrier(const Options& o) {
  begin_barrier();
  exchange(CollectiveOp::Barrier, o, InprocHub::Part{});
}

void InprocComm::do_send(const Tensor& t, int dst, const Options& o) {
  const auto cop = CollectiveOp::Send;
  check_point_to_point(t, dst, cop);
  record(cop, t.numel(), t.dtype());
  bool gone;
  {
    std::lock_guard<std::mutex> lk(hub_->mu_);
    gone = hub_->gone_[dst];
    if (!gone)
      hub_->mail_[{rank_, dst, o.tag & 0xffffff}].emplace_back(
          static_cast<const unsigned char*>(t.raw()),
          static_cast<const unsigned char*>(t.raw()) + t.nbytes());
  }
  if (gone)
    fail_and_close(Kind::PeerGone,
                   cop,
                   dst,
                   "rank " + std::to_string(dst) + " left the group");
  hub_->cv_.notify_all();
}

void InprocComm::do_recv(Tensor& t,
                         int src,
                         const Options& o,
                         std::chrono::steady_clock::time_point deadline) {
  const auto cop = CollectiveOp::Recv;
  check_point_to_point(t, src, cop);
  std::vector<unsigned char> msg;
  {
    std::unique_lock<std::mutex> lk(hub_->mu_);
    const auto key = std::make_tuple(src, rank_, o.tag & 0xffffff);
    for (;;) {
      auto it = hub_->mail_.find(key);
      if (it != hub_->mail_.end() && !it->second.empty()) {
        msg = std::move(it->second.front());
        it->second.pop_front();
        break;
      }
      if (hub_->gone_[src]) {
        lk.unlock();
        fail_and_close(Kind::PeerGone,
                       cop,
                       src,
                       "rank " + std::to_string(src) + " left the group");
      }
      if (hub_->cv_.wait_until(lk, deadline) == std::cv_status::timeout) {
        auto it2 = hub_->mail_.find(key);
        if (it2 != hub_->mail_.end() && !it2->second.empty()) continue;
        lk.unlock();
        fail_and_close(Kind::Timeout,
                       cop,
                       src,
                       "timed out after " + std::to_string(o.timeout.count()) +
                           " ms waiting for rank " + std::to_string(src));
      }
    }
  }
  if (msg.size() != t.nbytes())
    fail_and_close(Kind::Other,
                   cop,
                   src,
                   "received " + std::to_string(msg.size()) +
                       " bytes, expected " + std::to_string(t.nbytes()));
  std::memcpy(t.raw(), msg.data(), msg.size());
  record(cop, t.numel(), t.dtype());
}

void InprocComm::send(const Tensor& t, int dst, const Options& o) {
  check_usable(CollectiveOp::Send);
  do_send(t, dst, o);
}

void InprocComm::recv(Tensor& t, int src, const Options& o) {
  check_usable(CollectiveOp::Recv);
  do_recv(t, src, o, std::chrono::steady_clock::now() + o.timeout);
}

void InprocComm::send_recv(
    const Tensor& out, int dst, Tensor& in, int src, const Options& o) {
  check_usable(dst >= 0 ? CollectiveOp::Send : CollectiveOp::Recv);
  const auto deadline = std::chrono::steady_clock::now() + o.timeout;
  if (dst >= 0) do_send(out, dst, o);
  if (src >= 0) do_recv(in, src, o, deadline);
}

}  // namespace ss::dist
