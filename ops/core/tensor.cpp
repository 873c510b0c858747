#include "ops/core/tensor.h"

#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "ops/core/big_blocks.h"
#include "ops/core/elementwise_scalar.h"
#include "ops/core/half_bits.h"
#include "ops/core/mid_blocks.h"
#include "ops/core/op_error.h"
#include "ops/core/storage_bytes.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ss::ops {

// ---------------------------------------------------------------- device

std::string Device::str() const {
  if (kind == Kind::Cuda) return "cuda:" + std::to_string(index);
  return index == 0 ? "cpu" : "cpu:" + std::to_string(index);
}

// ---------------------------------------------------------------- storage

// glibc serves large blocks (a batch's activations, tens of MB) by mmap, or
// trims them from the heap top on free, so every training step page-faults
// its buffers in again: measured 20% of a batch-6144 MLP step
// (bench/mlp_step_bench). Keep blocks up to 256 MiB in the heap and let it
// hold up to 512 MiB free, as PyTorch's caching allocators keep a step's
// memory for the next. And one arena: a thread other than the main one
// allocates from its own arena, whose 64 MiB heaps glibc unmaps as soon as
// one is empty, whatever M_TRIM_THRESHOLD says; `ss` runs its interpreter
// on such a thread (interp/cli/main.cpp, for its stack), so the mid LM of
// bench/compare_transformer.py mapped, unmapped and faulted in 22 MB of
// buffers a step again (4 munmaps, 5,500 page faults: 4% of its CPU
// time); with one arena, about 190 faults a step stay.
// (Storage's own blocks of kBigBlockBytes or more are mappings of their
// own, kept for reuse by size instead: Note [Big blocks].) `ss`'s main
// and a worker's call it first, before any thread takes an arena; a host
// language's process (the Python module) keeps its own allocator's
// settings, since they are the whole process's (issue 27). Explicit
// MALLOC_* settings in the environment win.
namespace {
std::atomic<bool> g_heap_kept{false};
}  // namespace

void keep_step_buffers_in_heap() {
  g_heap_kept.store(true);
#if defined(__GLIBC__)
  static const bool done = [] {
    if (!std::getenv("MALLOC_MMAP_THRESHOLD_"))
      mallopt(M_MMAP_THRESHOLD, 256 << 20);
    if (!std::getenv("MALLOC_TRIM_THRESHOLD_"))
      mallopt(M_TRIM_THRESHOLD, 512 << 20);
    if (!std::getenv("MALLOC_ARENA_MAX")) mallopt(M_ARENA_MAX, 1);
    return true;
  }();
  (void)done;
#endif
}

namespace {
constexpr size_t kAlign = 64;  // a cache line; enough for AVX-512 loads

size_t padded_size(size_t nbytes) {
  // aligned_alloc wants a multiple of the alignment; never allocate 0
  // bytes so that data() is non-null even for empty tensors.
  size_t padded = (nbytes + kAlign - 1) / kAlign * kAlign;
  return padded == 0 ? kAlign : padded;
}

// Where a buffer comes from. In `ss`, whose main keeps step buffers in
// glibc's heap: glibc, and from kBigBlockBytes Storage's own mappings (Note
// [Big blocks]). In a host language's process, which keeps glibc's own
// settings, from kMidBlockBytes a cache of its own (Note [Mid blocks]).
// Decided at the first allocation, so that every block is freed as it was
// allocated.
enum class Source { Glibc, Mid, Big };

Source source_of(size_t padded) {
  static const bool heap_kept = g_heap_kept.load();
  if (padded >= kBigBlockBytes) return Source::Big;
  if (!heap_kept && padded >= kMidBlockBytes) return Source::Mid;
  return Source::Glibc;
}

void* allocate(size_t nbytes) {
  const size_t padded = padded_size(nbytes);
  void* p = nullptr;
  switch (source_of(padded)) {
    case Source::Big:
      p = big_alloc(padded);
      break;
    case Source::Mid:
      p = mid_alloc(padded);
      break;
    case Source::Glibc:
      p = std::aligned_alloc(kAlign, padded);
      break;
  }
  if (!p) throw std::bad_alloc();
  count_storage_bytes(static_cast<int64_t>(padded));
  return p;
}

void release(void* p, size_t nbytes) {
  const size_t padded = padded_size(nbytes);
  switch (source_of(padded)) {
    case Source::Big:
      big_free(p, padded);
      break;
    case Source::Mid:
      mid_free(p, padded);
      break;
    case Source::Glibc:
      std::free(p);
      break;
  }
  count_storage_bytes(-static_cast<int64_t>(padded));
}
}  // namespace

// Note [Device storage]
// A GPU's bytes come from the DeviceMemory its module registered (the CUDA
// module's caching allocator, ops/cuda/cuda_memory.cu); Storage only
// chooses. A GPU storage's data() is a device pointer: only the backend
// reads it; Tensor's host reads (at, to_doubles) and to() copy through the
// module. Bytes made again (`shard params`' gathered copies on a GPU
// worker) are let go to the device's memory and taken from it again.
namespace {
std::atomic<DeviceMemory*> g_cuda_memory{nullptr};

DeviceMemory& memory_of(Device device) {
  DeviceMemory* m = device_memory(device.kind);
  if (!m)
    throw std::runtime_error(
        "CUDA storage is not available: the CUDA backend is not loaded");
  return *m;
}

thread_local uint64_t g_host_reads = 0;
thread_local int g_check_reads = 0;

// Every copy of a device's bytes to the host goes through here (counted:
// Note [Recorded steps] in interp/devices/recorded_calls.cpp).
void read_to_host(Device from, void* dst, const void* src, size_t nbytes) {
  if (!g_check_reads) ++g_host_reads;
  memory_of(from).to_host(dst, src, nbytes, from.index);
}
}  // namespace

uint64_t host_reads_of_device_bytes() {
  return g_host_reads;
}

void note_host_dependency() {
  ++g_host_reads;
}

namespace {
thread_local bool g_loader_thread = false;
}
LoaderThread::LoaderThread() {
  g_loader_thread = true;
}
LoaderThread::~LoaderThread() {
  g_loader_thread = false;
}
bool LoaderThread::current() {
  return g_loader_thread;
}

RecordableRead::RecordableRead() {
  ++g_check_reads;
}
RecordableRead::~RecordableRead() {
  --g_check_reads;
}

void set_device_memory(Device::Kind kind, DeviceMemory* memory) {
  if (kind == Device::Kind::Cuda) g_cuda_memory.store(memory);
}

DeviceMemory* device_memory(Device::Kind kind) {
  return kind == Device::Kind::Cuda ? g_cuda_memory.load() : nullptr;
}

Storage::Storage(size_t nbytes, Device device)
    : nbytes_(nbytes), device_(device) {
  if (device.kind != Device::Kind::Cpu) {
    data_ = memory_of(device).allocate(nbytes, device.index);
    return;
  }
  data_ = allocate(nbytes);
}

Storage::Storage(void* data,
                 size_t nbytes,
                 Device device,
                 std::shared_ptr<void> keeper)
    : data_(data),
      nbytes_(nbytes),
      device_(device),
      keeper_(std::move(keeper)),
      external_(true) {}

Storage::~Storage() {
  if (external_ || !data_) return;
  if (device_.kind != Device::Kind::Cpu) {
    if (DeviceMemory* m = device_memory(device_.kind))
      m->release(data_, nbytes_, device_.index);
    return;
  }
  release(data_, nbytes_);
}

// Note [Bytes made again]
// `shard params` frees a param's gathered copy after its use in the forward
// pass while the tape still holds tensors over it (a matmul's VJP keeps its
// operands), and gathers it again when the backward pass needs it
// (devices.md item 9, FSDP's reshard_after_forward). Every handle shares
// one Storage, so the bytes are let go and made again in place: the
// handles stay valid, their bytes absent in between. ops::backward makes a
// node's inputs present before its VJP runs (every rank in the same node
// order, so a remake that is a collective meets the others'); data() makes
// them present too, for a read nothing planned (interp/devices/lower/
// gathered_copies.h says when that happens). A storage without a remake is
// never let go: data() of an ordinary storage is one test of a pointer.
void Storage::set_remake(std::function<void(void* bytes)> remake) {
  if (external_)
    throw std::logic_error("Storage::set_remake: the bytes are not its own");
  remake_ = std::move(remake);
  if (!remake_mu_) remake_mu_ = std::make_unique<std::mutex>();
}

void Storage::let_go() {
  if (!remake_ || !data_) return;
  if (device_.kind != Device::Kind::Cpu)
    memory_of(device_).release(data_, nbytes_, device_.index);
  else
    release(data_, nbytes_);
  data_ = nullptr;
}

void Storage::present() {
  if (data_ || !remake_) return;
  // The intra-op threads may read an absent storage at once: one remakes.
  // (One lock a storage: ranks that are threads of one process remake
  // their own copies at once, in one collective.)
  std::lock_guard<std::mutex> lock(*remake_mu_);
  if (data_) return;
  const bool on_device = device_.kind != Device::Kind::Cpu;
  void* bytes = on_device ? memory_of(device_).allocate(nbytes_, device_.index)
                          : allocate(nbytes_);
  try {
    remake_(bytes);
  } catch (...) {
    if (on_device)
      memory_of(device_).release(bytes, nbytes_, device_.index);
    else
      release(bytes, nbytes_);
    throw;
  }
  data_ = bytes;
}

// ---------------------------------------------------------------- shapes

int64_t numel_of(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      throw OpError(OpError::Kind::Shape,
                    "the shape " + shape_string(shape) +
                        " has more elements than a 64-bit count holds");
  return n;
}

std::string shape_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ' ';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

// ---------------------------------------------------------------- halves

// The conversions live in ops/core/half_bits.h, shared with the CUDA
// kernels so both devices round to the same bits.
float bf16_to_float(uint16_t v) {
  return halves::bf16_to_float(v);
}
uint16_t float_to_bf16(float f) {
  return halves::float_to_bf16(f);
}
float f16_to_float(uint16_t v) {
  return halves::f16_to_float(v);
}
uint16_t float_to_f16(float f) {
  return halves::float_to_f16(f);
}

// ---------------------------------------------------------------- tensor

namespace {

std::string bytes_text(uint64_t n) {
  std::string digits = std::to_string(n), grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 6) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", v, units[u]);
  return grouped + " bytes (" + buf + ")";
}

// What this machine could ever hold: its memory and swap.
uint64_t machine_bytes() {
  static const uint64_t n = [] {
    long pages = ::sysconf(_SC_PHYS_PAGES), size = ::sysconf(_SC_PAGESIZE);
    struct sysinfo si {};
    uint64_t swap =
        ::sysinfo(&si) == 0 ? uint64_t(si.totalswap) * si.mem_unit : 0;
    return pages > 0 && size > 0 ? uint64_t(pages) * uint64_t(size) + swap
                                 : ~uint64_t(0);
  }();
  return n;
}

// set_allocation_limit's bound; none (all ones) unless a fuzzer sets one,
// or SHAPESCRIPT_ALLOCATION_LIMIT (bytes) does: how the fuzzer bounds the
// worker processes of a run on several devices.
std::atomic<uint64_t> allocation_limit{[] {
  const char* v = std::getenv("SHAPESCRIPT_ALLOCATION_LIMIT");
  uint64_t n = v ? std::strtoull(v, nullptr, 10) : 0;
  return n ? n : ~uint64_t(0);
}()};

// What one allocation may take, and how a refusal names that bound.
uint64_t allocation_bound() {
  return std::min(machine_bytes(), allocation_limit.load());
}
std::string bound_text() {
  uint64_t limit = allocation_limit.load();
  if (limit < machine_bytes())
    return "this process's bound of " + bytes_text(limit) +
           " on one allocation";
  return "this machine's " + bytes_text(machine_bytes()) +
         " of memory and swap";
}

}  // namespace

void set_allocation_limit(uint64_t bytes) {
  allocation_limit.store(bytes);
}

// Note [Tensors too large to allocate]: a shape whose element count or
// bytes overflow, or whose bytes are more than the machine's memory and
// swap (or than set_allocation_limit's bound: the runtime fuzzer's, so that
// a hostile size is refused alike on every machine, Note [A runtime
// fuzzer's bounds] in tests/fuzz/run_outcome.cpp), is an OpError before
// anything is allocated (issue 16: `dim D = 784784784` ended in
// `terminate ... std::bad_alloc`, a dim of 2^62 in a SIGSEGV); the evaluator
// reports it at the `.ss` line with the tensor's shape and bytes. A malloc that
// fails anyway is the same error.
namespace {

std::string describe_tensor(const Shape& shape, DType dtype) {
  return "a " + shape_string(shape) + " " +
         std::string(types::dtype_name(dtype)) + " tensor";
}

}  // namespace

uint64_t check_allocatable(const Shape& shape,
                           DType dtype,
                           const std::string& what_given,
                           Device device) {
  // Built only on a failure, so the common case formats nothing.
  auto what = [&] {
    return what_given.empty() ? describe_tensor(shape, dtype) : what_given;
  };
  for (int64_t d : shape)
    if (d < 0)
      throw OpError(OpError::Kind::Shape,
                    "negative dimension in shape " + shape_string(shape));
  uint64_t bytes = 0;
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      throw OpError(OpError::Kind::Value,
                    "cannot allocate " + what() +
                        ": its element count overflows 64 bits");
  if (__builtin_mul_overflow(
          uint64_t(n), uint64_t(types::dtype_size(dtype)), &bytes))
    throw OpError(OpError::Kind::Value,
                  "cannot allocate " + what() + ": its size overflows 64 bits");
  if (device.kind == Device::Kind::Cpu && bytes > allocation_bound())
    throw OpError(OpError::Kind::Value,
                  "cannot allocate " + what() + ": it needs " +
                      bytes_text(bytes) + ", more than " + bound_text());
  return bytes;
}

uint64_t check_host_allocatable(uint64_t count,
                                uint64_t item_bytes,
                                const std::string& what) {
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, item_bytes, &bytes))
    throw OpError(OpError::Kind::Value,
                  "cannot hold " + what + ": its size overflows 64 bits");
  if (bytes > allocation_bound())
    throw OpError(OpError::Kind::Value,
                  "cannot hold " + what + ": it needs " + bytes_text(bytes) +
                      ", more than " + bound_text());
  return bytes;
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  uint64_t bytes = check_allocatable(shape, dtype, {}, device);
  Tensor t;
  t.shape_ = shape;
  t.dtype_ = dtype;
  try {
    t.storage_ = std::make_shared<Storage>(static_cast<size_t>(bytes), device);
  } catch (const std::bad_alloc&) {
    throw OpError(OpError::Kind::Value,
                  "cannot allocate " + describe_tensor(shape, dtype) + " (" +
                      bytes_text(bytes) + "): out of memory");
  }
  return t;
}

Tensor Tensor::external(void* data,
                        const Shape& shape,
                        DType dtype,
                        std::shared_ptr<void> keeper,
                        Device device) {
  for (int64_t d : shape)
    if (d < 0)
      throw std::invalid_argument("negative dimension in shape " +
                                  shape_string(shape));
  Tensor t;
  t.shape_ = shape;
  t.dtype_ = dtype;
  t.storage_ = std::make_shared<Storage>(
      data,
      static_cast<size_t>(numel_of(shape)) * types::dtype_size(dtype),
      device,
      std::move(keeper));
  return t;
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, Device device) {
  if (device.kind != Device::Kind::Cpu) return zeros(shape, dtype).to(device);
  Tensor t = empty(shape, dtype, device);
  std::memset(t.raw(), 0, t.nbytes());  // all-zero bits are 0 in every dtype
  return t;
}

namespace {
template <class T>
void fill_as(void* p, int64_t n, T v) {
  T* d = static_cast<T*>(p);
  for (int64_t i = 0; i < n; ++i) d[i] = v;
}
}  // namespace

Tensor Tensor::full(const Shape& shape,
                    double value,
                    DType dtype,
                    Device device) {
  if (device.kind != Device::Kind::Cpu)
    return full(shape, value, dtype).to(device);
  Tensor t = empty(shape, dtype, device);
  int64_t n = t.numel();
  if (n == 0) return t;
  t.set(0, value);  // converts once, then replicates the bit pattern
  switch (types::dtype_size(dtype)) {
    case 1:
      fill_as(t.raw(), n, *t.data<uint8_t>());
      break;
    case 2:
      fill_as(t.raw(), n, *t.data<uint16_t>());
      break;
    case 4:
      fill_as(t.raw(), n, *t.data<uint32_t>());
      break;
    default:
      fill_as(t.raw(), n, *t.data<uint64_t>());
      break;
  }
  return t;
}

Tensor Tensor::scalar(double value, DType dtype) {
  return full({}, value, dtype);
}

Tensor Tensor::integer_scalar(int64_t value, DType dtype) {
  Tensor t = empty({}, dtype);
  switch (dtype) {
    case DType::I64:
      *t.data<int64_t>() = value;
      break;
    case DType::I32:
      *t.data<int32_t>() =
          static_cast<int32_t>(static_cast<uint32_t>(value));  // wraps
      break;
    case DType::Bool:
      *t.data<bool>() = value != 0;
      break;
    case DType::F64:
      *t.data<double>() = static_cast<double>(value);
      break;
    default:  // f32, bf16, f16: int64 to float rounds once
      t.set(0, static_cast<double>(static_cast<float>(value)));
      break;
  }
  return t;
}

Tensor Tensor::from_doubles(const Shape& shape,
                            const std::vector<double>& values,
                            DType dtype) {
  if (static_cast<int64_t>(values.size()) != numel_of(shape))
    throw std::invalid_argument(
        "from_doubles: " + std::to_string(values.size()) +
        " values for shape " + shape_string(shape));
  Tensor t = empty(shape, dtype);
  for (size_t i = 0; i < values.size(); ++i) t.set(i, values[i]);
  return t;
}

int64_t Tensor::size(int axis) const {
  int r = static_cast<int>(shape_.size());
  int a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r)
    throw std::out_of_range("axis " + std::to_string(axis) +
                            " out of range for shape " + shape_string(shape_));
  return shape_[a];
}

Tensor Tensor::reshape(const Shape& shape) const {
  if (numel_of(shape) != numel())
    throw std::invalid_argument("cannot reshape " + shape_string(shape_) +
                                " to " + shape_string(shape));
  Tensor t = *this;
  t.shape_ = shape;
  t.ag_.reset();
  return t;
}

double Tensor::at(int64_t flat) const {
  if (device().kind != Device::Kind::Cpu) {
    // One element through the host (slow, as at() says: tests, printing).
    Tensor one = Tensor::empty({}, dtype_);
    size_t item = types::dtype_size(dtype_);
    read_to_host(device(),
                 one.raw(),
                 static_cast<const char*>(raw()) + flat * item,
                 item);
    return one.at(0);
  }
  const void* p = raw();
  switch (dtype_) {
    case DType::F32:
      return static_cast<const float*>(p)[flat];
    case DType::F64:
      return static_cast<const double*>(p)[flat];
    case DType::BF16:
      return bf16_to_float(static_cast<const uint16_t*>(p)[flat]);
    case DType::F16:
      return f16_to_float(static_cast<const uint16_t*>(p)[flat]);
    case DType::I32:
      return static_cast<const int32_t*>(p)[flat];
    case DType::I64:
      return static_cast<double>(static_cast<const int64_t*>(p)[flat]);
    case DType::Bool:
      return static_cast<const bool*>(p)[flat] ? 1.0 : 0.0;
  }
  return 0.0;
}

// double -> integer without undefined behaviour: NaN gives 0, out-of-range
// values saturate.
using scalar::saturate;

void Tensor::set(int64_t flat, double value) {
  if (device().kind != Device::Kind::Cpu) {
    Tensor one = Tensor::empty({}, dtype_);
    one.set(0, value);
    size_t item = types::dtype_size(dtype_);
    memory_of(device()).from_host(static_cast<char*>(raw()) + flat * item,
                                  one.raw(),
                                  item,
                                  device().index);
    return;
  }
  void* p = raw();
  switch (dtype_) {
    case DType::F32:
      static_cast<float*>(p)[flat] = static_cast<float>(value);
      break;
    case DType::F64:
      static_cast<double*>(p)[flat] = value;
      break;
    case DType::BF16:
      static_cast<uint16_t*>(p)[flat] =
          float_to_bf16(static_cast<float>(value));
      break;
    case DType::F16:
      static_cast<uint16_t*>(p)[flat] = float_to_f16(static_cast<float>(value));
      break;
    case DType::I32:
      static_cast<int32_t*>(p)[flat] = saturate<int32_t>(value);
      break;
    case DType::I64:
      static_cast<int64_t*>(p)[flat] = saturate<int64_t>(value);
      break;
    case DType::Bool:
      static_cast<bool*>(p)[flat] = value != 0.0;
      break;
  }
}

std::vector<double> Tensor::to_doubles() const {
  if (device().kind != Device::Kind::Cpu) return to(Device{}).to_doubles();
  std::vector<double> out(numel());
  for (int64_t i = 0; i < numel(); ++i) out[i] = at(i);
  return out;
}

Tensor Tensor::clone() const {
  if (!defined()) return Tensor();
  Tensor t = empty(shape_, dtype_, device());
  if (nbytes() == 0) return t;
  if (device().kind != Device::Kind::Cpu)
    memory_of(device()).on_device(t.raw(), raw(), nbytes(), device().index);
  else
    std::memcpy(t.raw(), raw(), nbytes());
  return t;
}

Tensor Tensor::to(Device dst) const {
  if (!defined() || device() == dst) return *this;
  Tensor t = empty(shape_, dtype_, dst);
  t.copy_from(*this);
  return t;
}

void Tensor::copy_from(const Tensor& src) {
  if (src.nbytes() != nbytes() || src.dtype() != dtype_)
    throw std::invalid_argument("copy_from: " + shape_string(src.shape()) +
                                " does not fit " + shape_string(shape_));
  if (nbytes() == 0 || same_storage(src)) return;
  const Device from = src.device(), here = device();
  if (from.kind == Device::Kind::Cpu && here.kind == Device::Kind::Cpu) {
    std::memcpy(raw(), src.raw(), nbytes());
  } else if (from.kind == Device::Kind::Cpu) {
    memory_of(here).from_host(raw(), src.raw(), nbytes(), here.index);
  } else if (here.kind == Device::Kind::Cpu) {
    read_to_host(from, raw(), src.raw(), nbytes());
  } else if (from == here) {
    memory_of(here).on_device(raw(), src.raw(), nbytes(), here.index);
  } else {
    // Between two GPUs: through the host (peer copies are the
    // collectives' job, not a value's).
    copy_from(src.to(Device{}));
  }
}

Tensor Tensor::detach() const {
  Tensor t = *this;
  t.ag_.reset();
  return t;
}

}  // namespace ss::ops
