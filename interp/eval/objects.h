#pragma once
// The reference-semantics objects behind model, gradient, optimizer, mode,
// record and logs values. Datasets, batches and sinks live in
// interp/data/ and interp/builtins/.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "diag/source.h"
#include "interp/eval/value.h"
#include "ops/core/tensor.h"
#include "ops/core/type.h"

namespace ss::eval {

class Interpreter;
struct ModelStore;
struct OptimState;

/// Where a copy newer than a store's own tensors lives: several devices,
/// the workers of `ss run`'s controller (devices::controller::Controller),
/// which a call changed. Reading the store copies it back first (sync).
class NewerCopies {
 public:
  virtual ~NewerCopies() = default;
  /// Copies [s]'s (or [o]'s) newer copy back into it, and clears its
  /// newer_on.
  virtual void fetch(ModelStore& s) = 0;
  virtual void fetch(OptimState& o) = 0;
  /// One tensor of such a store, whole, the store left as it is (a
  /// streaming save, Note [A streaming save] in interp/builtins/
  /// checkpoint.cpp): field [path] (the store's own path) of [s]; state
  /// [state] of [o]'s param [path], undefined when it holds none.
  virtual ops::Tensor fetch_tensor(const ModelStore& s,
                                   const std::string& path) = 0;
  virtual ops::Tensor fetch_tensor(const OptimState& o,
                                   const std::string& path,
                                   const std::string& state) = 0;
  /// [o]'s hyperparameters, step and which states each param holds, as
  /// Codec::read_optim_state without tensors reads them, into [out].
  virtual void fetch_layout(const OptimState& o, OptimState& out) = 0;
};

/// A model's tensors by field path ("w1", "norm.g", "blocks.w_q"), shared by
/// every handle to the model. Stacked sub-models (`blocks: [L] Block`) keep
/// one tensor per field with a leading L axis.
struct ModelStore {
  const types::ModelInfo* info = nullptr;
  std::vector<types::Axis> args;  // `Dense[D Hd]`
  std::map<std::string, ops::Tensor> tensors;
  std::vector<std::string> order;  // paths in declaration order
  std::map<std::string, bool> is_buffer;
  /// Several devices, in the controller: the id the workers hold this
  /// store under (0: not sent, or changed here since), and the context
  /// whose workers hold a copy newer than these tensors (null: these are
  /// the newest; sync() copies it back).
  uint64_t remote_id = 0;
  NewerCopies* newer_on = nullptr;
  /// `shard params`, on a worker: the whole shape of each param of which
  /// [tensors] holds only this rank's piece (flattened, one of N equal
  /// pieces, the last padded: Note [Sharded params] in
  /// interp/devices/lower/shards.cpp). Empty: every tensor is whole.
  std::map<std::string, ops::Shape> whole;
  /// `split H`, on a worker: the axis along which [tensors] holds only this
  /// rank's heads of each param split by heads (a block of H / N heads:
  /// Note [Split heads] in interp/check/plan/heads_plan.cpp).
  std::map<std::string, int> heads;
};

/// A model value (or a sub-model, or one of a stack): a store, the path
/// prefix of the sub-model ("blocks."), and the stack indices chosen
/// (`m.blocks[i]`). Also the value of Grads (a store of gradients).
struct ModelRef : Object {
  std::shared_ptr<ModelStore> store;
  std::string prefix;
  std::vector<int64_t> index;
  types::Type type;  // the Model (or Grads) type of this handle

  /// The paths of this handle's tensors (params only when [params_only]).
  std::vector<std::string> paths(bool params_only) const;
  /// How many sub-models the stack at this handle holds (`blocks: [L]
  /// Block`: L), from a param's whole shape: a rank's piece of a sharded
  /// param is flat (Note [Sharded params] in interp/devices/lower/
  /// shards.cpp), so its own shape says nothing of the stack.
  int64_t stack_size() const;
  /// The shape of the tensor at [path] as the program sees it (indexed by
  /// `index`): whole, also where this rank holds a sharded param's piece.
  ops::Shape shape_of(const std::string& path) const;
  /// One handle per sub-model of the stack (`for blk in m.blocks`).
  std::vector<std::shared_ptr<ModelRef>> stack_items() const;
  /// The tensor at [path] (relative to the prefix), indexed by `index`.
  ops::Tensor get(const std::string& path) const;
  /// Replaces the tensor at [path] (through `put` when indexed).
  void set(const std::string& path, const ops::Tensor& t);
  /// The store's whole shapes of sharded params (ModelStore::whole) under
  /// this handle's prefix, by path relative to it.
  std::map<std::string, ops::Shape> whole_shapes() const;
  /// The store's head axes (ModelStore::heads) under this handle's prefix,
  /// by path relative to it, counted in this handle's tensors.
  std::map<std::string, int> heads_axes() const;
};

/// [x] with its element at [index] (one per leading axis: a stack's
/// model) replaced by [v].
ops::Tensor put_at(const ops::Tensor& x,
                   const std::vector<int64_t>& index,
                   const ops::Tensor& v);

/// Every optimizer's hyperparameters, by torch.optim's names; each kind
/// reads those its table entry names (Note [An optimizer's table entry] in
/// interp/builtins/optimizers.cpp). One struct for all kinds, so that the
/// wire, a checkpoint and the controller's copy handle each field once.
struct OptimHyper {
  double lr = 1e-3, momentum = 0, weight_decay = 0, beta1 = 0.9, beta2 = 0.999,
         eps = 1e-8, alpha = 0.99, rho = 0.9, lr_decay = 0,
         initial_accumulator_value = 0;
  bool nesterov = false, amsgrad = false, centered = false;

  /// [number](name, double&) for each number, then [flag](name, bool&) for
  /// each flag, in a fixed order (the wire's).
  template <class Number, class Flag>
  void each(Number number, Flag flag) {
    number("lr", lr);
    number("momentum", momentum);
    number("weight_decay", weight_decay);
    number("beta1", beta1);
    number("beta2", beta2);
    number("eps", eps);
    number("alpha", alpha);
    number("rho", rho);
    number("lr_decay", lr_decay);
    number("initial_accumulator_value", initial_accumulator_value);
    flag("nesterov", nesterov);
    flag("amsgrad", amsgrad);
    flag("centered", centered);
  }
};

/// A param group beyond the default one (torch's param_groups[1:], made
/// by add_param_group): its params, by the key their state has (the
/// optimizer's prefix + the param's path), and its own hyperparameters.
struct ParamGroup {
  std::string name;
  std::vector<std::string> paths;
  OptimHyper hyper;
};

/// What set_lr and add_param_group change: the default group's
/// hyperparameters (OptimHyper) and the other groups. The wire and the
/// controller's copy carry it whole (Note [Optimizer hyperparameters] in
/// wire.cpp).
struct OptimSettings : OptimHyper {
  std::vector<ParamGroup> groups;

  /// The hyperparameters of the param whose state key is [key]: its
  /// group's, else the default group's.
  const OptimHyper& hyper_of(const std::string& key) const;
};

/// torch's GradScaler, carried by an optimizer that grad_scaler(opt) made
/// (Note [Loss scaling] in interp/builtins/grad_scaler.cpp): its settings,
/// the scale and its growth tracker by torch's names, and what the
/// gradients taken with scaler= it since the last update found. It travels
/// with the step (the wire, a checkpoint's grad_scaler.* metadata).
struct LossScale {
  bool enabled = false;
  double scale = 65536.0, growth_factor = 2.0, backoff_factor = 0.5;
  int64_t growth_interval = 2000, growth_tracker = 0;
  /// Since the last update: how many value_and_grad(..., scaler=opt) ran,
  /// and whether any of their gradients held an inf or a nan.
  int64_t unscaled = 0;
  bool found_inf = false;
};

struct OptimState : Object, OptimSettings {
  types::OptimKind kind = types::OptimKind::AdamW;
  std::shared_ptr<ModelStore> model;
  std::string prefix;  // the sub-model it was made for
  int64_t step = 0;
  LossScale loss_scale;
  /// Each param's state by torch's names (SGD's "momentum_buffer", Adam's
  /// "exp_avg" and "exp_avg_sq", ...), by param path.
  std::map<std::string, std::map<std::string, ops::Tensor>> state;
  /// As ModelStore's: several devices, in the controller.
  uint64_t remote_id = 0;
  NewerCopies* newer_on = nullptr;
  /// Several devices, in the controller: the hyperparameters were changed
  /// here (set_lr) since the workers last received them. The next call
  /// that names this optimizer sends them, and a copy fetched from the
  /// workers before then keeps these (Note [Optimizer hyperparameters] in
  /// wire.cpp).
  bool hyper_newer = false;
};

/// Copies a store's tensors (an optimizer's step and state) back from the
/// context whose workers hold a newer copy (newer_on: several devices, in
/// the controller), if any. Every read of a model's tensors or an
/// optimizer's state goes through sync().
void sync(ModelStore& s);
void sync(OptimState& o);

/// Train(seed=s) or Eval. Draws are keyed by (seed, the count of calls into
/// device functions that received this value, the draw's ordinal in that
/// call, the element's index): language.md, Randomness.
struct ModeState : Object {
  bool train = false;
  uint64_t seed = 0;
  uint64_t calls = 0;  // entries counted so far
  uint64_t draws = 0;  // draws made during the current entry
  int active = 0;      // frames currently holding it (nesting)
};

struct RecordValue;

/// Several devices, in the controller: a batch handed out without being
/// built, since the workers load it (each its own rows, devices.md 8).
/// interp/data's LazyBatch is the one kind; the evaluator needs only its
/// size and, when the controller itself reads a field, its rows.
struct UnloadedBatch {
  virtual ~UnloadedBatch() = default;
  /// The number of examples in the batch.
  virtual int64_t size() const = 0;
  /// Builds [r]'s fields here; a bad item of a streamed dataset is raised
  /// through [in] at the loop that made the batch.
  virtual void load_into(Interpreter& in, RecordValue& r) const = 0;
};

/// One record, or a batch of records (`[b] Digit`): field tensors, with the
/// batch axis leading in a batch.
struct RecordValue : Object {
  const types::RecordInfo* info = nullptr;
  bool batch = false;
  std::map<std::string, ops::Tensor> fields;  // incl. mask_<n> for batches
  /// Several devices, in the controller: a batch the workers load (each its
  /// own rows, devices.md 8). [fields] stay empty until the controller
  /// itself reads the batch (load_unloaded_batch).
  std::shared_ptr<const UnloadedBatch> lazy;
  /// On a worker: [fields] are already this rank's rows of the batch,
  /// starting at this row of the whole batch (-1: a whole batch).
  int64_t share_start = -1;
  /// With share_start: the whole batch's rows (its canonical chunks are
  /// cut from them: Note [Deterministic mode] in
  /// interp/devices/lower/chunks.h).
  int64_t batch_rows = -1;
};

/// Builds [r]'s fields from its unloaded batch, if it has one, when the
/// controller reads them (a bad streamed item raised at the loop, as on
/// one device).
void load_unloaded_batch(Interpreter& in, RecordValue& r);

/// Walks a lazily produced sequence (batches, datasets, progress bars).
struct Cursor {
  virtual ~Cursor() = default;
  /// The next item into [out]; false at the end.
  virtual bool next(Value& out) = 0;
};

/// An object a `for` loop can walk: datasets, batches, progress(...).
struct IterableObject : Object {
  /// [loop]: the `for` header (or the call) walking it, where errors found
  /// while producing items (a streamed dataset's bad item) are raised.
  virtual std::unique_ptr<Cursor> cursor(Interpreter& in,
                                         diag::Span loop = {}) = 0;
  /// The number of items, or -1 when unknown.
  virtual int64_t length() const = 0;
};

struct LogsValue : Object {
  std::vector<std::pair<std::string, Value>> fields;
  /// On a worker: the fields that hold this rank's rows of a batch-axis
  /// value (`logs(j=batch.y)`) and the position of that axis, joined in
  /// order when the call returns to the controller (devices.md item 6;
  /// devices::lower::RankContext's join).
  std::vector<std::pair<std::string, int>> split_fields;
  const Value* find(const std::string& name) const;
};

/// The logs most recently written to any sink and the count of writes so
/// far (progress bars show the latest; a sink's write() updates it).
struct LastWritten {
  std::shared_ptr<LogsValue> logs;
  uint64_t writes = 0;
};
inline LastWritten& last_written() {
  // Per thread: when ranks run as threads (conformance, tests) each
  // interpreter has its own.
  thread_local LastWritten w;
  return w;
}

}  // namespace ss::eval
