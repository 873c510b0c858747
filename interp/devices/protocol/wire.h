#pragma once
// Values on the control channel of a run on several devices (devices.md
// items 6 and 11): the controller sends a worker fn's arguments in one
// message, and rank 0 answers with the result. Host numbers, strings,
// bools, tuples, lists, tensors (dtype, shape, bytes), records and batches
// the controller built (whole: each worker takes its share in
// Interpreter::call), Train/Eval
// (with the controller's entry count), logs and fn values travel by value.
// Models and optimizer states travel as handles: the first time a store
// goes to the workers it is sent whole under a new id, later only the id;
// the workers keep id -> store and are its truth after a call that may
// change it (the controller's store is then marked newer_on the controller's
// context and copied back from rank 0 when it is read: sync() in
// objects.h). An optimizer's
// hyperparameters go with its id when the controller changed them (set_lr)
// and come back with its state (Note [Optimizer hyperparameters] in
// wire.cpp). A batch the
// controller did not build travels as a reference (wire_data.cpp): its
// dataset's store once under an id, then the view, the Batches' options,
// the walk and the batch number; each worker loads its own rows.

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "interp/check/checked.h"
#include "interp/eval/objects.h"
#include "interp/eval/value.h"

namespace ss::data {
struct LazyBatch;
struct TensorStore;
}  // namespace ss::data

namespace ss::devices::protocol {

/// A malformed message, or a value that cannot be sent (a dataset, a sink).
struct WireError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A streamed dataset's file on this host is not the controller's (Note
/// [A streamed dataset on every host] in wire_data.cpp): the program's
/// IOError at the call that sent it, not a fault of the channel.
struct DatasetMismatch : WireError {
  using WireError::WireError;
};

class Writer {
 public:
  std::string buf;
  void u8(uint8_t v) { buf.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) { raw(&v, sizeof v); }
  void u64(uint64_t v) { raw(&v, sizeof v); }
  void i64(int64_t v) { raw(&v, sizeof v); }
  void f64(double v) { raw(&v, sizeof v); }
  void str(const std::string& s) {
    u64(s.size());
    buf.append(s);
  }
  void tensor(const ops::Tensor& t);
  void raw(const void* p, size_t n) {
    buf.append(static_cast<const char*>(p), n);
  }
};

class Reader {
 public:
  /// Reads [s], which must outlive the reader.
  explicit Reader(const std::string& s) : s_(s) {}
  Reader(std::string&&) = delete;
  uint8_t u8() { return static_cast<uint8_t>(*take(1)); }
  uint32_t u32() { return pod<uint32_t>(); }
  uint64_t u64() { return pod<uint64_t>(); }
  int64_t i64() { return pod<int64_t>(); }
  double f64() { return pod<double>(); }
  std::string str() {
    uint64_t n = u64();
    const char* p = take(n);
    return std::string(p, n);
  }
  /// A tensor, on the device place_on named (the CPU by default).
  ops::Tensor tensor();
  /// A tensor on the host, wherever this process computes: a dataset's
  /// (its loader gathers rows on the host; batches go to the device as
  /// they load).
  ops::Tensor host_tensor();
  /// Where every tensor this process reads lands: a GPU worker's own GPU
  /// (Note [Several GPUs] in interp/devices/gpu_ranks.cpp).
  static void place_on(ops::Device device);
  bool done() const { return at_ == s_.size(); }
  /// How many bytes were read.
  size_t at() const { return at_; }

 private:
  template <class T>
  T pod() {
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  const char* take(size_t n) {
    if (n > s_.size() - at_) throw WireError("truncated message");
    const char* p = s_.data() + at_;
    at_ += n;
    return p;
  }
  const std::string& s_;
  size_t at_ = 0;
};

/// Encodes and decodes values for one side of the channel; keeps the
/// handles' ids.
class Codec {
 public:
  enum class Side { Controller, Worker };
  Codec(Side side, const check::Program& prog) : side_(side), prog_(&prog) {}

  /// Reads names (models, records) in [prog] from now on: an `ss repl`
  /// session's next program, whose declarations may be new; the handles
  /// sent so far stay.
  void set_program(const check::Program& prog) { prog_ = &prog; }

  void write(Writer& w, const eval::Value& v);
  eval::Value read(Reader& r);

  /// Controller: the stores the last writes sent or named (a call that
  /// may change them leaves the workers' copies newer).
  std::vector<std::shared_ptr<eval::ModelStore>> sent_models;
  std::vector<std::shared_ptr<eval::OptimState>> sent_optims;

  /// A store's tensors (FETCH's answer) and their reading into [s].
  static void write_tensors(Writer& w, const eval::ModelStore& s);
  static void read_tensors(Reader& r, eval::ModelStore& s);
  /// An optimizer's hyperparameters, step and state (FETCH's answer).
  /// Without [tensors], which states each param holds but not their
  /// bytes: read back, a held state is a 0-d f32 tensor standing for it
  /// (a streaming save's layout, Note [A streaming save]).
  static void write_optim_state(Writer& w,
                                const eval::OptimState& o,
                                bool tensors = true);
  static void read_optim_state(Reader& r,
                               eval::OptimState& o,
                               bool tensors = true);

  /// Controller: every store sent to the workers and still held here.
  void each_sent(const std::function<void(eval::ModelStore&)>& model,
                 const std::function<void(eval::OptimState&)>& optim) const;

  /// Worker: told of each store and optimizer that arrives whole from the
  /// controller, before the call sees it (`shard params` cuts it into this
  /// rank's pieces: interp/devices/lower/shards.h).
  std::function<void(eval::ModelStore&)> model_arrived;
  std::function<void(eval::OptimState&)> optim_arrived;

  /// Worker: the store under [id] (null when unknown).
  std::shared_ptr<eval::ModelStore> model(uint64_t id) const;
  std::shared_ptr<eval::OptimState> optim(uint64_t id) const;
  /// Worker: the ids of every model store it holds (kStores' answer).
  std::vector<uint64_t> model_ids() const {
    std::vector<uint64_t> ids;
    for (const auto& [id, s] : w_models_) ids.push_back(id);
    return ids;
  }
  /// Worker: forgets every store (after a failed call they may be
  /// inconsistent; the controller starts over with new ids).
  size_t models_held() const { return w_models_.size(); }

 private:
  void write_store(Writer& w, const std::shared_ptr<eval::ModelStore>& s);
  std::shared_ptr<eval::ModelStore> read_store(Reader& r);
  void write_handle(Writer& w, const eval::ModelRef& m);
  eval::Value read_handle(Reader& r, eval::Value::Kind kind);
  void write_optim(Writer& w, const std::shared_ptr<eval::OptimState>& o);
  std::shared_ptr<eval::OptimState> read_optim(Reader& r);
  // wire_data.cpp
  void write_batch_ref(Writer& w, const data::LazyBatch& b);
  eval::Value read_batch_ref(Reader& r);
  void write_data_store(Writer& w,
                        const std::shared_ptr<const data::TensorStore>& s);
  std::shared_ptr<const data::TensorStore> read_data_store(Reader& r);

  Side side_;
  const check::Program* prog_;
  uint64_t next_id_ = 1;
  // Controller: id -> store (the store holds its own id).
  std::map<uint64_t, std::weak_ptr<eval::ModelStore>> c_models_;
  std::map<uint64_t, std::weak_ptr<eval::OptimState>> c_optims_;
  // Worker: id -> store and back.
  std::map<uint64_t, std::shared_ptr<eval::ModelStore>> w_models_;
  std::map<const eval::ModelStore*, uint64_t> w_model_ids_;
  std::map<uint64_t, std::shared_ptr<eval::OptimState>> w_optims_;
  std::map<const eval::OptimState*, uint64_t> w_optim_ids_;
  // Datasets' stores, sent once: the controller's by address (checked
  // against the weak pointer, as an address can be reused), the workers'.
  std::map<const data::TensorStore*,
           std::pair<uint64_t, std::weak_ptr<const data::TensorStore>>>
      c_stores_;
  std::map<uint64_t, std::shared_ptr<const data::TensorStore>> w_stores_;
};

}  // namespace ss::devices::protocol
