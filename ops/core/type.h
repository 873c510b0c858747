#pragma once
// The type vocabulary shared by the checker, the builtin shape rules and,
// later, evaluation: named shapes ([b D]), dtypes, and the other kinds of
// value a ShapeScript program handles. See Note [Axis identity] in type.cpp.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "diag/source.h"
#include "ops/core/dtype.h"

namespace ss::types {

/// Note [A split axis is sized as its block]
/// Inside an spmd fn's body, `A/x` in a type means this instance's block of
/// A (spmd.md, "Specs in types"): with `mesh ep=2` and `dim E = 4`, `E/ep`
/// is 2 long, and `rearrange(w, (EL) D -> EL D)` with `dim EL = 2` fits it.
/// So a split carries each mesh axis's size, from the program's `mesh`, and
/// Axis::static_size() is the block's; Axis::whole_size() is A's, for the
/// call that cuts a whole value into blocks (E2003) and for the runtime's
/// cutting and joining.
struct MeshSplit {
  std::vector<std::string> axes;  // major first
  std::vector<int64_t> sizes;     // each axis's size; -1 where unknown

  MeshSplit() = default;
  MeshSplit(std::vector<std::string> axes, std::vector<int64_t> sizes);
  void push_back(std::string axis, int64_t size);
  void pop_back();
  void clear();
  bool empty() const { return axes.empty(); }
  size_t size() const { return axes.size(); }
  const std::string& operator[](size_t i) const { return axes[i]; }
  const std::string& back() const { return axes.back(); }
  std::vector<std::string>::const_iterator begin() const {
    return axes.begin();
  }
  std::vector<std::string>::const_iterator end() const { return axes.end(); }
  /// The number of blocks: the product of the sizes, when all are known.
  std::optional<int64_t> ways() const;
};
/// By the mesh axes named (their sizes follow from the program's mesh).
bool operator==(const MeshSplit& a, const MeshSplit& b);
inline bool operator!=(const MeshSplit& a, const MeshSplit& b) {
  return !(a == b);
}

/// One axis of a named shape.
struct Axis {
  enum class Kind : uint8_t { Dim, Var, Lit, Group };
  Kind kind = Kind::Lit;
  std::string name;         // Dim: the dim; Var: its declared name
  uint32_t var = 0;         // Var: identity, unique per checker run
  int64_t size = -1;        // Dim, Lit: size; Group: product if known
  std::vector<Axis> items;  // Group, outer first
  MeshSplit split;          // spmd: mesh axes it is split over
  std::string label;        // an alias's written name (printing only)
  /// Var: the call whose result size it is (`conv2d` at [made_at]), for
  /// messages that must tell two variables of one name apart (Note [Two
  /// sizes of one name]); empty where none made it.
  std::string made_by;
  diag::Span made_at;

  static Axis dim(std::string name, int64_t size);
  static Axis lit(int64_t n);
  static Axis variable(uint32_t id, std::string name);
  static Axis group(std::vector<Axis> items);

  /// The size when the type fixes it (dims, literals, groups of those):
  /// for `A/x`, the block's (Note [A split axis is sized as its block]).
  std::optional<int64_t> static_size() const;
  /// The size when the type fixes it, of the whole axis A for `A/x`.
  std::optional<int64_t> whole_size() const;
  /// As written in a type: the label if any, else `D`, `b`, `3`, `(H Dh)`,
  /// with `/x` or `/(x y)` for a split.
  std::string str() const;
  /// Like str(), with dims' sizes: `D (784)`, for messages.
  std::string str_sized() const;
  bool is_one() const { return kind == Kind::Lit && size == 1; }

 private:
  /// static_size() ([blocks]) or whole_size().
  std::optional<int64_t> sized(bool blocks) const;
};

/// Note [Two sizes of one name]
/// Two different size variables may print alike: each conv2d's result is
/// `[b C h2 w2]`, so adding a conv's result to a pool's said "cannot
/// broadcast [b C h2 w2] with [b C h2 w2]: w2 vs w2". A message about two
/// shapes prints them through PrintedApart: a variable of [b] whose name
/// one of [a]'s different variables has gets a prime (`w2'`), and
/// notes() says which call made each.
struct PrintedApart {
  PrintedApart(const std::vector<Axis>& a, const std::vector<Axis>& b);
  std::string a, b;  // the two shapes, `[b C h2 w2]` and `[b C h2 w2']`
  /// [x] (of a) and [y] (of b) as the shapes print them.
  std::string axis_a(const Axis& x) const;
  std::string axis_b(const Axis& y) const;
  /// For each variable printed apart: "`w2` is the size `conv2d` gives"
  /// and where (none when no call made it).
  std::vector<std::pair<std::string, diag::Span>> notes() const;

 private:
  /// Whether [y] (of b) prints with a prime.
  bool primed(const Axis& y) const;
  std::vector<std::pair<Axis, Axis>> renamed_;  // a's, b's (primed)
};

/// Identity, not spelling: labels are ignored; splits must agree.
bool operator==(const Axis& a, const Axis& b);
inline bool operator!=(const Axis& a, const Axis& b) {
  return !(a == b);
}

/// `[b D]`.
std::string shape_str(const std::vector<Axis>& shape);

struct Type;
struct RecordInfo;
struct ModelInfo;

/// The optimizers a program can make (Note [An optimizer's table entry] in
/// interp/builtins/optimizers.cpp has each one's update rule).
enum class OptimKind : uint8_t {
  SGD,
  AdamW,
  Adam,
  RMSprop,
  Adagrad,
  Adadelta,
  Lion
};
inline constexpr size_t kOptimKinds = static_cast<size_t>(OptimKind::Lion) + 1;

/// An optimizer's two names: the builtin that makes it (`adam`) and its
/// type's (`Adam[M]`).
struct OptimNames {
  OptimKind kind;
  const char* fn;
  const char* type;
};

/// Every optimizer, in OptimKind's order.
const std::vector<OptimNames>& optim_names();
const OptimNames& optim_names(OptimKind k);
/// The optimizer whose builtin (or, with [type], whose type) is [name].
const OptimNames* optim_named(std::string_view name, bool type);

/// A value's type. Only the members of its kind are meaningful.
struct Type {
  enum class Kind : uint8_t {
    Error,    // an error was reported already: fits everything, silently
    Unit,     // a statement-like call's result
    Int,      // host int
    Float,    // host float
    Str,      // host string
    Bool,     // host bool (true, false, comparisons of host values)
    Tensor,   // shape + dtype (+ varying mesh axes in spmd fns)
    Tuple,    // elems
    List,     // elems[0] is the element type (Error when empty)
    Fn,       // a function value: fn_name (+ remat)
    Record,   // one record of `record`
    Batch,    // [b] Record: shape[0] is the batch axis
    Model,    // model (+ model_args, stack)
    Optim,    // optim_kind over model
    Grads,    // gradients of model
    Mode,     // Train(seed=) / Eval
    Logs,     // named values (fields); open when unknown
    Dataset,  // of record
    Batches,  // of record
    Sink,
    AxisArg,    // an axis passed by name: shape[0]
    TypeValue,  // a type in value position: elems[0]
    Init,       // an initialiser (`normal(std=0.02)`), only in model fields
  };
  Kind kind = Kind::Error;

  std::vector<Axis> shape;             // Tensor, Batch (axis 0), AxisArg
  DType dtype = DType::F32;            // Tensor
  std::vector<std::string> varying;    // Tensor in spmd fns, sorted
  std::vector<Type> elems;             // Tuple, List, TypeValue
  const RecordInfo* record = nullptr;  // Record, Batch, Dataset, Batches
  const ModelInfo* model = nullptr;    // Model, Optim, Grads
  std::vector<Axis> model_args;        // Model: `Dense[D Hd]`
  std::vector<Axis> stack;             // Model: `[L] Block` leading axes
  /// Model, Grads, Optim: the dtype of the model's fields that name its
  /// dtype parameter (`model Linear[I O] T`, `Linear[D H] f64`); f32 by
  /// default, as a tensor's.
  DType model_dtype = DType::F32;
  /// Model, as an spmd fn's parameter (spmd.md, "Specs in types"): `Net/x`
  /// splits every field's first axis over these mesh axes, major first;
  /// `Net{w/stages, b/stages}` only the named fields' (field_splits), the
  /// rest replicated. Empty: whole, or replicated.
  MeshSplit model_split;
  std::vector<std::pair<std::string, MeshSplit>> field_splits;
  OptimKind optim_kind = OptimKind::SGD;
  std::string fn_name;                               // Fn
  bool remat = false;                                // Fn
  std::vector<std::pair<std::string, Type>> fields;  // Logs
  bool open = false;  // Logs whose fields are unknown
  /// Tensor: the extern fn without a VJP this value was computed through,
  /// if any (E0310 when a value_and_grad's loss carries it). Not part of
  /// the type's identity.
  std::string no_vjp;

  // Declared, and defaulted below the class: clang (14, with libstdc++ 12)
  // otherwise instantiates `fields`' std::pair<std::string, Type>, which
  // asks whether Type is default-constructible, while Type is incomplete
  // (an error in every file that destroys a Type; the SS_FUZZ build is
  // clang's).
  Type();
  static Type error() { return Type{}; }
  static Type of(Kind k);
  static Type tensor(std::vector<Axis> shape, DType dtype = DType::F32);
  static Type scalar(DType dtype) { return tensor({}, dtype); }
  static Type tuple(std::vector<Type> elems);
  static Type list(Type elem);

  bool is_error() const { return kind == Kind::Error; }
  bool is_tensor() const { return kind == Kind::Tensor; }
  bool is_host_number() const {
    return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool;
  }
  /// A tensor or a host number: what arithmetic takes.
  bool is_numeric() const { return is_tensor() || is_host_number(); }
  size_t rank() const { return shape.size(); }

  /// As written in a signature: `[b D]`, `[b C] i64`, `f32`, `Mlp`,
  /// `AdamW[Mlp]`, `(f32, Grads[Mlp])`, `[m/x]{x}`.
  std::string str() const;
};
inline Type::Type() = default;

/// A record or model field.
struct FieldInfo {
  std::string name;
  diag::Span span;
  Type type;
  bool buffer = false;  // models: state that is not trained
  /// Models: the field's type names the model's dtype parameter (`w: [I O]
  /// T`, `l: Linear[D H] T`): model_field_type gives it the model's dtype.
  bool follows_dtype = false;
  // Records: the domain `in lo..hi`, when the checker could evaluate it.
  std::optional<double> domain_lo, domain_hi;
  bool domain_inclusive = false;
  bool has_domain = false;
  // Records: `pad=v`, what a size-variable axis is padded with in a batch.
  double pad = 0;
};

struct RecordInfo {
  std::string name;
  diag::Span span;
  std::vector<FieldInfo> fields;
  const FieldInfo* field(const std::string& n) const;
};

/// A model declaration. Fields refer to the model's dim parameters as
/// Dim axes with size -1; Type::model_args substitutes them.
struct ModelInfo {
  std::string name;
  diag::Span span;
  std::vector<std::string> dim_params;
  /// `model Linear[I O] T`: the name of its dtype parameter; empty when
  /// its fields' dtypes are fixed.
  std::string dtype_param;
  std::vector<FieldInfo> fields;
  bool is_stdlib = false;
  const FieldInfo* field(const std::string& n) const;
};

/// The mesh axes a model spec splits field [name] of model type [m] over,
/// in the spec's order: `Net/x` every field's, `Net{w/x}` the named
/// ones'; empty: none (the evaluator's leaves and the checker's field types
/// read this one rule).
MeshSplit field_split(const Type& m, const std::string& name);

/// The type of field [f] of model type [m]: dim parameters substituted and
/// the stack axes (`[L] Block`) prepended to tensors and sub-models.
Type model_field_type(const Type& m, const FieldInfo& f);

/// Replaces every Dim axis named like a key of [subst] by its value.
Axis substitute_dims(const Axis& a,
                     const std::vector<std::string>& names,
                     const std::vector<Axis>& values);

}  // namespace ss::types
