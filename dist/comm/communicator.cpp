#include "dist/comm/communicator.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ops/registry/device_rule.h"

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

void reset_default_collective_timeout() {
  g_timeout_ms.store(0);
}

std::chrono::milliseconds default_collective_timeout() {
  if (int64_t ms = g_timeout_ms.load()) return std::chrono::milliseconds(ms);
  if (std::optional<double> v = collective_timeout_from_env())
    return std::chrono::milliseconds(
        std::max<int64_t>(1, static_cast<int64_t>(*v * 1000.0)));
  return std::chrono::seconds(600);
}

std::optional<double> collective_timeout_from_env(std::string* error) {
  const char* s = std::getenv("SHAPESCRIPT_COLLECTIVE_TIMEOUT");
  if (!s) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s, &end);
  // 1e308 once overflowed to a 1 ms timeout, and "abc" meant 600 s.
  if (end == s || *end != '\0' || !std::isfinite(v) || v <= 0 ||
      v > ops::kMaxCollectiveTimeoutS) {
    if (error)
      *error =
          std::string("SHAPESCRIPT_COLLECTIVE_TIMEOUT='") + s +
          "' is not a number of seconds (more than 0, at most " +
          std::to_string(static_cast<int64_t>(ops::kMaxCollectiveTimeoutS)) +
          ")";
    return std::nullopt;
  }
  return v;
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

void check_tensor(const Tensor& t,
                  CollectiveOp op,
                  int rank,
                  const char* arg,
                  ops::Device on) {
  if (!t.defined())
    fail(CollectiveError::Kind::Other,
         op,
         rank,
         -1,
         std::string(arg) + " is an undefined tensor");
  // A GPU rank's communicator takes the host's tensors too (a kernel
  // signature, a count): through its GPU or the host, its result on the
  // host.
  if (!(t.device() == on) && t.device().kind != ops::Device::Kind::Cpu)
    fail(CollectiveError::Kind::Other,
         op,
         rank,
         -1,
         std::string(arg) + " is on " + t.device().str() +
             ", this communicator takes CPU tensors" +
             (on.kind == ops::Device::Kind::Cpu ? std::string()
                                                : " or " + on.str() + "'s"));
  // Moving data (gathers, broadcasts, messages) copies bytes of any dtype;
  // a reduction needs arithmetic: every number dtype, bf16 and f16 through
  // f32 (Note [Half-precision reductions]), but not bool.
  const bool reduces =
      op == CollectiveOp::AllReduce || op == CollectiveOp::ReduceScatter;
  if (!reduces || t.dtype() != DType::Bool) return;
  fail(CollectiveError::Kind::Other,
       op,
       rank,
       -1,
       std::string(arg) + " has dtype " + types::dtype_name(t.dtype()) +
           " (supported: f32, f64, bf16, f16, i32, i64)");
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
                 int rank,
                 ops::Device on) {
  if (!out.defined()) {
    out = Tensor::empty(shape, dtype, on);
    return;
  }
  if (out.dtype() != dtype || out.numel() != ops::numel_of(shape) ||
      !(out.device() == on))
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

// Note [Half-precision reductions]
// bf16 and f16 values are summed (maxed, multiplied) in f32 and rounded
// back once, to nearest even: what torch's CPU kernels do for a bf16 sum
// (they accumulate in float) and what one device does when a matmul
// reduces over the batch inside one kernel. Gloo has no bfloat16, and its
// float16 rounds after every addition (N-1 roundings, in the ring's order),
// so both half types take this one path: a rank's buffer widened to f32,
// the f32 collective, and the result narrowed. Every rank narrows the same
// f32 sum, so the copies stay bit-identical (devices.md item 5). The
// payload log records the half dtype: the values handed to the collective.
bool is_half(DType dtype) {
  return dtype == DType::BF16 || dtype == DType::F16;
}

std::vector<float> widen_half(const void* p, int64_t n, DType dtype) {
  std::vector<float> out(static_cast<size_t>(n));
  const auto* h = static_cast<const uint16_t*>(p);
  for (int64_t i = 0; i < n; ++i)
    out[i] = dtype == DType::BF16 ? ops::bf16_to_float(h[i])
                                  : ops::f16_to_float(h[i]);
  return out;
}

void narrow_half(const float* src, void* dst, int64_t n, DType dtype) {
  auto* h = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i)
    h[i] = dtype == DType::BF16 ? ops::float_to_bf16(src[i])
                                : ops::float_to_f16(src[i]);
}

void reduce_parts(const std::vector<const void*>& parts,
                  void* out,
                  int64_t n,
                  DType dtype,
                  ReduceOp op) {
  if (parts.empty() || n == 0) return;
  if (is_half(dtype)) {
    std::vector<float> acc = widen_half(parts[0], n, dtype);
    for (size_t r = 1; r < parts.size(); ++r) {
      std::vector<float> x = widen_half(parts[r], n, dtype);
      reduce_into(acc.data(), x.data(), n, DType::F32, op);
    }
    narrow_half(acc.data(), out, n, dtype);
    return;
  }
  std::memmove(
      out, parts[0], static_cast<size_t>(n) * types::dtype_size(dtype));
  for (size_t r = 1; r < parts.size(); ++r)
    reduce_into(out, parts[r], n, dtype, op);
}

}  // namespace detail
}  // namespace ss::dist
