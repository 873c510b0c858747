#include "dist/comm/communicator.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <string>

namespace ss::dist {

using types::DType;

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "sum";
    case ReduceOp::Max:
      return "max";
    case ReduceOp::Min:
      return "min";
    case ReduceOp::Prod:
      return "prod";
  }
  return "?";
}

const char* collective_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce:
      return "all-reduce";
    case CollectiveOp::AllGather:
      return "all-gather";
    case CollectiveOp::AllGatherV:
      return "all-gather-v";
    case CollectiveOp::ReduceScatter:
      return "reduce-scatter";
    case CollectiveOp::Broadcast:
      return "broadcast";
    case CollectiveOp::Send:
      return "send";
    case CollectiveOp::Recv:
      return "recv";
    case CollectiveOp::Barrier:
      return "barrier";
    case CollectiveOp::Connect:
      return "rendezvous";
  }
  return "?";
}

const char* error_kind_name(CollectiveError::Kind k) {
  switch (k) {
    case CollectiveError::Kind::Timeout:
      return "timeout";
    case CollectiveError::Kind::PeerGone:
      return "peer gone";
    case CollectiveError::Kind::Other:
      return "error";
  }
  return "?";
}

namespace {
// Set by the program's collective_timeout(seconds); 0: not set.
std::atomic<int64_t> g_timeout_ms{0};
}  // namespace

void set_default_collective_timeout(std::chrono::milliseconds t) {
  g_timeout_ms.store(std::max<int64_t>(1, t.count()));
}

std::chrono::milliseconds default_collective_timeout() {
  if (int64_t ms = g_timeout_ms.load()) return std::chrono::milliseconds(ms);
  if (const char* s = std::getenv("SHAPESCRIPT_COLLECTIVE_TIMEOUT")) {
    char* end = nullptr;
    double v = std::strtod(s, &end);
    if (end != s && std::isfinite(v) && v > 0)
      return std::chrono::milliseconds(
          std::max<int64_t>(1, static_cast<int64_t>(v * 1000.0)));
  }
  return std::chrono::seconds(600);
}

std::vector<CollectiveRecord> Communicator::log() const {
  std::lock_guard<std::mutex> lk(log_mu_);
  return log_;
}

uint64_t Communicator::bytes_sent(CollectiveOp op) const {
  std::lock_guard<std::mutex> lk(log_mu_);
  uint64_t b = 0;
  for (const auto& r : log_)
    if (r.op == op) b += r.bytes;
  return b;
}

void Communicator::clear_log() {
  std::lock_guard<std::mutex> lk(log_mu_);
  log_.clear();
}

void Communicator::record(CollectiveOp op, int64_t count, DType dtype) {
  std::lock_guard<std::mutex> lk(log_mu_);
  log_.push_back({op,
                  count,
                  dtype,
                  static_cast<uint64_t>(count) *
                      static_cast<uint64_t>(types::dtype_size(dtype))});
}

namespace detail {

void fail(CollectiveError::Kind k,
          CollectiveOp op,
          int rank,
          int peer,
          const std::string& what) {
  std::string msg = std::string(collective_name(op)) + " on rank " +
                    std::to_string(rank) + " failed";
  if (peer >= 0) msg += " (peer rank " + std::to_string(peer) + ")";
  msg += ": " + what;
  throw CollectiveError(k, op, peer, msg);
}

void check_tensor(const Tensor& t, CollectiveOp op, int rank, const char* arg) {
  if (!t.defined())
    fail(CollectiveError::Kind::Other,
         op,
         rank,
         -1,
         std::string(arg) + " is an undefined tensor");
  if (t.device().kind != ops::Device::Kind::Cpu)
    fail(CollectiveError::Kind::Other,
         op,
         rank,
         -1,
         std::string(arg) + " is on " + t.device().str() +
             ", this communicator takes CPU tensors");
  switch (t.dtype()) {
    case DType::F32:
    case DType::F64:
    case DType::I32:
    case DType::I64:
      return;
    default:
      fail(CollectiveError::Kind::Other,
           op,
           rank,
           -1,
           std::string(arg) + " has dtype " + types::dtype_name(t.dtype()) +
               " (supported: f32, f64, i32, i64)");
  }
}

ops::Shape gather_shape(const ops::Shape& in, int64_t total_rows) {
  ops::Shape s;
  s.push_back(total_rows);
  for (size_t i = 1; i < in.size(); ++i) s.push_back(in[i]);
  return s;
}

void prepare_out(Tensor& out,
                 const ops::Shape& shape,
                 DType dtype,
                 CollectiveOp op,
                 int rank) {
  if (!out.defined()) {
    out = Tensor::empty(shape, dtype);
    return;
  }
  if (out.dtype() != dtype || out.numel() != ops::numel_of(shape) ||
      out.device().kind != ops::Device::Kind::Cpu)
    fail(CollectiveError::Kind::Other,
         op,
         rank,
         -1,
         "output is " + std::string(types::dtype_name(out.dtype())) + " " +
             ops::shape_string(out.shape()) + ", expected " +
             types::dtype_name(dtype) + " " + ops::shape_string(shape));
}

int64_t row_elems(const Tensor& t) {
  if (t.rank() == 0) return 1;
  int64_t n = 1;
  for (size_t i = 1; i < t.rank(); ++i) n *= t.shape()[i];
  return n;
}

namespace {
template <class T>
void reduce_t(T* d, const T* s, int64_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      for (int64_t i = 0; i < n; ++i) d[i] = d[i] + s[i];
      break;
    case ReduceOp::Max:
      for (int64_t i = 0; i < n; ++i) d[i] = std::max(d[i], s[i]);
      break;
    case ReduceOp::Min:
      for (int64_t i = 0; i < n; ++i) d[i] = std::min(d[i], s[i]);
      break;
    case ReduceOp::Prod:
      for (int64_t i = 0; i < n; ++i) d[i] = d[i] * s[i];
      break;
  }
}
}  // namespace

void reduce_into(
    void* dst, const void* src, int64_t n, DType dtype, ReduceOp op) {
  switch (dtype) {
    case DType::F32:
      return reduce_t(
          static_cast<float*>(dst), static_cast<const float*>(src), n, op);
    case DType::F64:
      return reduce_t(
          static_cast<double*>(dst), static_cast<const double*>(src), n, op);
    case DType::I32:
      return reduce_t(
          static_cast<int32_t*>(dst), static_cast<const int32_t*>(src), n, op);
    case DType::I64:
      return reduce_t(
          static_cast<int64_t*>(dst), static_cast<const int64_t*>(src), n, op);
    default:
      throw std::logic_error("reduce_into: unsupported dtype");
  }
}

}  // namespace detail
}  // namespace ss::dist
