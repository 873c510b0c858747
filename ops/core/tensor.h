#pragma once
// Tensors: dense, contiguous, row-major storage with a dtype, a shape and a
// device. Copies share storage; ShapeScript values are immutable, so ops
// always make new tensors (optimizer updates are the one in-place writer,
// on tensors only the optimizer holds). A tensor may carry autodiff state
// (ops/autodiff/tape.h).

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ops/core/dtype.h"

namespace ss::ops {

using types::DType;
using Shape = std::vector<int64_t>;

struct Device {
  enum class Kind : uint8_t { Cpu, Cuda };
  Kind kind = Kind::Cpu;
  int index = 0;
  std::string str() const;  // "cpu", "cuda:1"
  bool operator==(const Device& o) const {
    return kind == o.kind && index == o.index;
  }
};

struct AutogradMeta;  // ops/autodiff/tape.h

/// How a device other than the CPU holds bytes: the CUDA module registers
/// its caching allocator and copies when it loads (ops/cuda/
/// cuda_memory.cu), so Storage and Tensor need no CUDA of their own.
/// Copies to and from the host wait for the device's work before them.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual void* allocate(size_t nbytes, int index) = 0;
  virtual void release(void* p, size_t nbytes, int index) = 0;
  virtual void to_host(void* dst,
                       const void* src,
                       size_t nbytes,
                       int index) = 0;
  virtual void from_host(void* dst,
                         const void* src,
                         size_t nbytes,
                         int index) = 0;
  virtual void on_device(void* dst,
                         const void* src,
                         size_t nbytes,
                         int index) = 0;
};
/// Registers [memory] for [kind]'s storage (not Cpu); nullptr unregisters.
void set_device_memory(Device::Kind kind, DeviceMemory* memory);
/// The registered memory of [kind], or nullptr.
DeviceMemory* device_memory(Device::Kind kind);

/// How many copies of a device's bytes to the host this thread has made
/// (a recorded step may make none: Note [Recorded steps] in
/// interp/devices/recorded_calls.cpp), but for those made while a
/// RecordableRead lives: a read that a recording makes another way, a
/// check it makes on the device (Note [Checks a recording defers] in
/// ops/api.cpp) or a collective's staging it makes as a host call (Note
/// [Collectives through the host] in dist/comm/host_staged_comm.cpp).
uint64_t host_reads_of_device_bytes();
/// Counts as such a read: the host takes part in a GPU's work, which a
/// recording could not replay (a collective of host values on a GPU rank).
void note_host_dependency();
class RecordableRead {
 public:
  RecordableRead();
  ~RecordableRead();
  RecordableRead(const RecordableRead&) = delete;
  RecordableRead& operator=(const RecordableRead&) = delete;
};

/// While one lives, this thread builds batches ahead of the step (a
/// loader thread): a GPU's memory gives it blocks and copies its uploads
/// on a stream of their own (Note [A copy stream] in
/// ops/cuda/cuda_memory.cu).
class LoaderThread {
 public:
  LoaderThread();
  ~LoaderThread();
  LoaderThread(const LoaderThread&) = delete;
  LoaderThread& operator=(const LoaderThread&) = delete;
  static bool current();
};

/// Bytes owned by one device, or (the second constructor) bytes owned
/// elsewhere, such as a read-only memory-mapped file: [keeper] keeps them
/// alive for as long as the storage lives, and they are never freed here.
/// External bytes may be read-only: tensors over them must not be written.
class Storage {
 public:
  Storage(size_t nbytes, Device device);
  Storage(void* data,
          size_t nbytes,
          Device device,
          std::shared_ptr<void> keeper);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data() {
    if (!data_) [[unlikely]]
      present();
    return data_;
  }
  const void* data() const { return const_cast<Storage*>(this)->data(); }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

  /// Bytes that can be let go and made again (Note [Bytes made again] in
  /// tensor.cpp): [remake] fills new bytes with what they held. Own bytes
  /// only.
  void set_remake(std::function<void(void* bytes)> remake);
  /// Frees the bytes of a storage with a remake; the next present() (or
  /// data()) makes them again.
  void let_go();
  /// Makes the bytes again if they were let go.
  void present();
  bool let_go_of() const { return data_ == nullptr; }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  std::shared_ptr<void> keeper_;  // set for external bytes
  bool external_ = false;
  std::function<void(void*)> remake_;
  std::unique_ptr<std::mutex> remake_mu_;  // with a remake
};

/// Keeps a training step's buffers in the heap for the next step, and
/// one malloc arena (Note in tensor.cpp): mallopt settings of the whole
/// process, so called by `ss`'s main and a worker's, never behind a host
/// language's back. Idempotent.
void keep_step_buffers_in_heap();

/// The element count; an OpError when it overflows 64 bits.
int64_t numel_of(const Shape& shape);
/// The bytes of a [shape] tensor of [dtype], or an OpError naming [what]
/// (by default "a [shape] dtype tensor") when they overflow or exceed what
/// this machine could hold (Note [Tensors too large to allocate] in
/// tensor.cpp).
uint64_t check_allocatable(const Shape& shape,
                           types::DType dtype,
                           const std::string& what,
                           Device device = {});
/// The bytes of [count] host items of [item_bytes] each (a list of
/// values), or an OpError naming [what] when they overflow or exceed what
/// this machine could hold, as check_allocatable says of a tensor.
uint64_t check_host_allocatable(uint64_t count,
                                uint64_t item_bytes,
                                const std::string& what);
/// Bounds each tensor and host list check_allocatable and
/// check_host_allocatable allow at [bytes] (below the machine's memory and
/// swap): the runtime fuzzer's bound, so that a hostile size is a
/// ValueError alike on every machine and under a sanitizer's allocation
/// limit. Process-wide; by default none, or the environment's
/// SHAPESCRIPT_ALLOCATION_LIMIT (bytes: a fuzzer's worker processes).
void set_allocation_limit(uint64_t bytes);
std::string shape_string(const Shape& shape);  // "[64 10]"

class Tensor {
 public:
  /// An undefined tensor (no storage).
  Tensor() = default;
  /// Uninitialised storage.
  static Tensor empty(const Shape& shape, DType dtype, Device device = {});
  static Tensor zeros(const Shape& shape, DType dtype, Device device = {});
  static Tensor full(const Shape& shape,
                     double value,
                     DType dtype,
                     Device device = {});
  /// A 0-d tensor.
  static Tensor scalar(double value, DType dtype = DType::F32);
  /// A 0-d tensor of a host integer, never through a double: i64 holds it
  /// exactly, i32 keeps its low 32 bits and bool whether it is nonzero (as
  /// torch converts a Python int for an int tensor: an i32 tensor + 2^31
  /// wraps), a float dtype rounds it once (issue 32 item 2: 2^53 + 1 added
  /// to an i64 tensor was 2^53).
  static Tensor integer_scalar(int64_t value, DType dtype);
  /// From values given as doubles (tests, literals, loaders), converted.
  static Tensor from_doubles(const Shape& shape,
                             const std::vector<double>& values,
                             DType dtype);
  /// A tensor over bytes owned elsewhere (see Storage): [data] holds
  /// numel(shape) elements of [dtype], aligned to the element size;
  /// [keeper] keeps them alive.
  static Tensor external(void* data,
                         const Shape& shape,
                         DType dtype,
                         std::shared_ptr<void> keeper,
                         Device device = {});

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  /// Axis [axis]'s size; negative counts from the end.
  int64_t size(int axis) const;
  int64_t numel() const { return numel_of(shape_); }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_ ? storage_->device() : Device{}; }
  size_t nbytes() const { return numel() * types::dtype_size(dtype_); }

  /// The bytes: host memory on the CPU, device memory on a GPU (only the
  /// backend reads those: at(), to_doubles() and to() copy).
  void* raw() { return storage_ ? storage_->data() : nullptr; }
  const void* raw() const { return storage_ ? storage_->data() : nullptr; }
  template <class T>
  T* data() {
    return static_cast<T*>(raw());
  }
  template <class T>
  const T* data() const {
    return static_cast<const T*>(raw());
  }

  /// The same storage seen with another shape of the same element count.
  Tensor reshape(const Shape& shape) const;
  /// Element [flat] as a double, and set it (slow: tests, printing, ref/).
  double at(int64_t flat) const;
  void set(int64_t flat, double value);
  /// Element 0 as a double (0-d values read on the host).
  double item() const { return at(0); }
  /// Every element as doubles (tests, printing).
  std::vector<double> to_doubles() const;
  /// A deep copy with its own storage and no autodiff state.
  Tensor clone() const;
  /// A copy on [device] (this tensor itself when it is there already),
  /// without autodiff state when copied.
  Tensor to(Device device) const;
  /// Writes [src]'s bytes (same dtype and element count, on any device)
  /// into this tensor's storage, in place: a collective's result landing
  /// in the tensor it was handed.
  void copy_from(const Tensor& src);
  /// The same storage and shape without autodiff state (stop_grad).
  Tensor detach() const;
  /// Whether two tensors share storage.
  bool same_storage(const Tensor& o) const { return storage_ == o.storage_; }
  /// Whether this is the only handle on its storage (safe to update in
  /// place: no other value can see the change).
  bool unique_storage() const { return storage_.use_count() == 1; }
  /// Its storage (Storage::set_remake, let_go: `shard params`' gathered
  /// params).
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  // Autodiff state (see ops/autodiff/tape.h).
  const std::shared_ptr<AutogradMeta>& autograd() const { return ag_; }
  void set_autograd(std::shared_ptr<AutogradMeta> ag) { ag_ = std::move(ag); }

 private:
  std::shared_ptr<Storage> storage_;
  Shape shape_;
  DType dtype_ = DType::F32;
  std::shared_ptr<AutogradMeta> ag_;
};

/// bf16 / f16 <-> f32 conversions (bf16: round to nearest even).
float bf16_to_float(uint16_t v);
uint16_t float_to_bf16(float f);
float f16_to_float(uint16_t v);
uint16_t float_to_f16(float f);

}  // namespace ss::ops
