#pragma once
// The checked program: the only thing evaluation accepts. It owns the parsed
// modules and adds what the checker proved: every expression's type, what
// every name and call resolves to, each fn's signature. Later issues attach
// placement, layouts and collectives here (see FnInfo, ExprInfo).

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "diag/source.h"
#include "interp/parse/ast.h"
#include "ops/core/type.h"
#include "ops/registry/op_def.h"

namespace ss::check {

class Checker;

struct ParamInfo {
  std::string name;
  types::Type type;
  bool mut = false;
  bool has_default = false;
  const ast::Param* decl = nullptr;
};

struct FnInfo {
  std::string name;
  const ast::FnDecl* decl = nullptr;
  std::vector<ParamInfo> params;
  types::Type result;  // Unit when the fn declares none
  bool has_result = false;
  bool is_stdlib = false;
  /// For `-> Logs`: the fields its returns make, when they agree.
  std::optional<types::Type> inferred_logs;
  /// The user fns this one calls (for placement).
  std::set<std::string> callees;
  /// Its result was computed through an extern fn without a VJP (E0310).
  std::string result_no_vjp;
  /// Fns are checked on demand, callees first, so a caller sees what its
  /// callees' bodies proved (inferred logs fields, result_no_vjp).
  enum class State { Unchecked, Checking, Done };
  State state = State::Unchecked;
  /// Every local's type in declaration order (for `ss check --types`).
  std::vector<std::pair<std::string, types::Type>> locals;
  /// Where each of [locals] is declared (its name), for `ss lsp`'s hover
  /// and go to definition on a `let` or `for` name.
  std::vector<diag::Span> local_spans;

  /// Where the fn runs with several devices (devices.md, "Where functions
  /// run"), computed on any device list: in the controller when it loops
  /// over a dataset, prints, saves, loads, writes to a sink, reads a value as
  /// a host number, takes a dataset or a sink, or calls a fn that runs
  /// there; on the workers when it otherwise uses tensors, models, batches,
  /// gradients or optimizer state (or calls a fn that runs there); anywhere
  /// otherwise (a fn of ints).
  enum class Placement { Controller, Workers, Anywhere };
  Placement placement = Placement::Anywhere;
  /// Controller fns: why, as "it loops over a dataset", and where.
  std::string placement_reason;
  std::optional<diag::Span> placement_at;
  /// Per param: split across the devices along the batch axis (a `[b] R`
  /// param always; any other when its calls pass it a value with the batch
  /// axis). Empty with a `mesh` (nothing is split automatically).
  std::vector<bool> param_split;
  /// The size variables that are the batch axis in this fn's body: a batch
  /// param's leading axis, a loop batch's, and the axes of split params that
  /// calls bind to a batch axis.
  std::set<uint32_t> batch_vars;

  /// spmd fns. Note [E2001 for inlined spmd fns]: an E2001 found at a
  /// `return` waits here until the whole program is checked; the mesh
  /// axes its returns vary over (at its own check, parameters varying over
  /// the axes their types split); who calls it.
  struct PendingE2001 {
    diag::Span at;
    std::string message, label, help;
  };
  std::vector<PendingE2001> pending_e2001;
  std::set<std::string> result_varying;
  bool called_from_ordinary = false;
  bool called_from_spmd = false;

  /// Note [Dtype variables] (interp/check/generics.cpp): a fn whose
  /// signature names dtype variables is checked once per float dtype each
  /// variable can be, as instances; this FnInfo is the one with every
  /// variable f32. [dtype_vars] in order of appearance; per param, the
  /// variable its type's dtype word names ("" for none); each other
  /// instance's name by its bindings' dtype names ("f64", "f64,bf16").
  std::vector<std::string> dtype_vars;
  std::vector<std::string> param_dtype_var;
  std::map<std::string, std::string> instances;
  /// An instance: the generic fn's name (its draws' site, its messages).
  std::string instance_of;
  /// Note [Autocast] (interp/eval/autocast.cpp): an instance made by
  /// `autocast(f, bf16)` runs its products in that dtype; its arguments
  /// and results are cast to the dtypes its signature declares. Each fn
  /// keeps its autocast instances' names by dtype name ("bf16").
  std::optional<types::DType> autocast;
  std::map<std::string, std::string> autocast_instances;
  /// The name a user knows this fn by.
  const std::string& source_name() const {
    return instance_of.empty() ? name : instance_of;
  }
};

/// The instance of generic [fn] whose dtype variables (in fn.dtype_vars'
/// order) are [bound]: [fn] itself when it is not generic or every one is
/// f32; null when there is none (Note [Dtype variables]).
const FnInfo* instance_for(const class Program& prog,
                           const FnInfo& fn,
                           const std::vector<types::DType>& bound);
/// An instance's key in FnInfo::instances: "f64", "f64,bf16".
std::string instance_key(const std::vector<types::DType>& bound);

/// "in the controller", "on the workers", "anywhere".
const char* placement_words(FnInfo::Placement p);

/// What a name or call in an expression resolved to.
struct Resolution {
  enum class Kind { None, Local, Dim, Fn, Builtin, Record, Model, Constant };
  Kind kind = Kind::None;
  const FnInfo* fn = nullptr;      // Fn (user or stdlib)
  const ops::OpDef* op = nullptr;  // Builtin
  std::string name;
  /// Local: where it is declared (the param's or the `let` name), for
  /// `ss lsp`'s go to definition.
  diag::Span decl;
};

struct ExprInfo {
  types::Type type;
  Resolution resolution;  // Name and Call nodes
  /// Calls: for each argument as written (a method's receiver first), the
  /// param it fills; -1 for extra arguments (variadic or any keyword).
  std::vector<int> arg_params;
  /// Builtin calls: `over=`-like params resolved against their operand,
  /// param index -> axis positions in the order written.
  std::map<int, std::vector<int>> axes;
  /// Builtin calls: axes passed by name (ParamKind::Axis), param -> axis.
  std::map<int, types::Axis> axis_args;
  /// Builtin calls: the mesh axes a collective's param names (`psum(v, (x,
  /// y))`), param -> names as written.
  std::map<int, std::vector<std::string>> mesh_args;
  /// Pattern calls: the axis each label binds, and whether this call
  /// divides its size out of a group (the one unknown of a group cut out of
  /// one axis); every other label's size is its axis's.
  struct PatternLabel {
    types::Axis axis;
    bool divided = false;
  };
  std::map<std::string, PatternLabel> pattern_labels;
  /// The value has the batch axis (split across the devices along it).
  bool split = false;
  /// rand/randn calls: the site their draws are keyed by, "<fn>#<k>"
  /// (Note [A draw's site] in interp/check/calls.cpp).
  std::string draw_site;
  /// value_and_grad, grad: the mesh axes their loss varies over here
  /// (RuleCtx::record_loss_varying; Note [A gradient inside an instance]).
  std::optional<std::vector<std::string>> loss_varying;
  /// A builtin call across the batch axis with a distributed lowering
  /// (sum, mean, cross_entropy, mse, batch_norm, reduce(with=sum)): it runs
  /// as an all-reduce. [allreduce_payload] says what it sends, in the words
  /// of devices.md ("its result's values and a count", "2 values",
  /// "2·C + 1 values in f64").
  bool allreduce = false;
  std::string allreduce_payload;
  /// A call or operator inside an autocast instance whose op autocast
  /// runs in another dtype (OpDef::autocast): its float tensor operands
  /// (and a generic model's params) are cast to this dtype first (Note
  /// [Autocast]).
  std::optional<types::DType> autocast;
};

struct DeviceList {
  std::string kind = "cpu";  // cpu | cuda
  std::vector<int64_t> ids;  // empty: one device
  std::vector<std::vector<std::string>> options;
  /// `shard params` (FSDP), and the dim of `split H` ("" when none).
  bool shard_params = false;
  std::string split_dim;
  /// `deterministic` (or `--deterministic`): N devices compute one
  /// device's bits (Note [Deterministic mode] in
  /// interp/devices/lower/chunks.h).
  bool deterministic = false;
  size_t count() const { return ids.empty() ? 1 : ids.size(); }
};

struct MeshAxis {
  std::string name;
  int64_t size = 0;
};

/// How many instances the mesh axes [axes] span: the product of their
/// sizes in [mesh]; the one count the evaluator's blocks and `ss explain`
/// share.
inline int64_t mesh_ways(const std::vector<MeshAxis>& mesh,
                         const std::vector<std::string>& axes) {
  int64_t k = 1;
  for (const std::string& a : axes)
    for (const MeshAxis& m : mesh)
      if (m.name == a) k *= m.size > 1 ? m.size : 1;
  return k;
}

/// Attention written out that runs as one builtin (Note [The attention
/// written out] in fusion.cpp): at the product with v (the call this is
/// recorded for) the evaluator calls [op] on q, k and v, and the two lets
/// before it ([scores], [probs]) bind nothing.
struct FusedAttention {
  const ops::OpDef* op = nullptr;
  const ast::Expr* q = nullptr;
  const ast::Expr* k = nullptr;
  const ast::Expr* v = nullptr;
  bool causal = false;
  /// The number the scores are scaled by as written (`/ sqrt(Dh)`: c with
  /// [divides]); null: not scaled.
  const ast::Expr* scale = nullptr;
  bool divides = false;
  const ast::Stmt* scores = nullptr;
  const ast::Stmt* probs = nullptr;
  /// The call's info as the op's: the product's type (and autocast).
  ExprInfo info;
};

/// A layer written out, run as one product with its epilogue (Note
/// [Layers run as one product] in fusion_layers.cpp): at [root] the
/// evaluator evaluates the operands in the order written and calls [op]
/// (fused_linear) on them.
struct FusedLayer {
  const ops::OpDef* op = nullptr;
  /// The operands as written: x and w, or linear's model [linear] and x
  /// (its w and b are the model's fields).
  const ast::Expr* x = nullptr;
  const ast::Expr* w = nullptr;
  const ast::Expr* linear = nullptr;
  const ast::Expr* bias = nullptr;
  /// `(x @ w) * c` or `/ c` (with [divides]); null: not scaled.
  const ast::Expr* scale = nullptr;
  bool divides = false;
  const ast::Expr* residual = nullptr;
  /// The residual is written before the layer (`h + relu(..)`): it is
  /// evaluated first.
  bool residual_first = false;
  /// "none", "relu", "gelu" or "gelu_tanh" (fused_linear's act=).
  std::string act = "none";
  /// The root's info as the op's: the layer's type.
  ExprInfo info;
};

/// A program's modules in order, each a `const ast::Module&` (the stdlib
/// first, then the imports, each after what it imports, the main file
/// last); imports may be shared with other programs (Note [Shared import
/// sets] in interp/check/import_set.h).
class ModuleList {
 public:
  using Held = std::vector<std::shared_ptr<const ast::Module>>;
  struct iterator {
    Held::const_iterator at;
    const ast::Module& operator*() const { return **at; }
    const ast::Module* operator->() const { return at->get(); }
    iterator& operator++() {
      ++at;
      return *this;
    }
    bool operator==(const iterator&) const = default;
  };
  explicit ModuleList(const Held& held) : held_(held) {}
  iterator begin() const { return {held_.begin()}; }
  iterator end() const { return {held_.end()}; }
  bool empty() const { return held_.empty(); }
  size_t size() const { return held_.size(); }
  const ast::Module& back() const { return *held_.back(); }

 private:
  const Held& held_;
};

class ImportSet;

class Program {
 public:
  ModuleList modules() const { return ModuleList(modules_); }
  const FnInfo* fn(const std::string& name) const;
  const std::map<std::string, FnInfo>& fns() const { return fns_; }
  const std::map<std::string, int64_t>& dims() const { return dims_; }
  const types::RecordInfo* record(const std::string& name) const;
  const types::ModelInfo* model(const std::string& name) const;
  /// The type of a checked expression (Error if it was never checked).
  const types::Type& type_of(const ast::Expr* e) const;
  const ExprInfo* info(const ast::Expr* e) const;
  const DeviceList& devices() const { return devices_; }
  const std::vector<MeshAxis>& mesh() const { return mesh_; }
  /// The attention that [call], a product with v, finishes, run as one
  /// builtin (fusion.h); null for any other expression.
  const FusedAttention* fused(const ast::Expr* call) const;
  /// Every fused attention, in no particular order (`ss explain`).
  const std::unordered_map<const ast::Expr*, FusedAttention>& fused() const {
    return fused_;
  }
  /// The layer that [e] (a call or an operator) is the root of, run as
  /// one product (fusion_layers.h); null for any other expression.
  const FusedLayer* fused_layer(const ast::Expr* e) const;
  /// Every fused layer, in no particular order.
  const std::unordered_map<const ast::Expr*, FusedLayer>& fused_layers() const {
    return fused_layers_;
  }
  /// A `let` of a fused attention's scores or probabilities: it binds
  /// nothing, as nothing reads it.
  bool deferred(const ast::Stmt* let) const { return deferred_.count(let); }

  /// `ss lsp` (Note [Shared import sets]): forgets what was proved about
  /// the expressions outside file [file], the imports' bodies, which its
  /// lookups in [file] do not reach; their declarations stay. 2,000
  /// documents importing one hub then do not each keep the hub's. Only
  /// lookups in [file] may use the program afterwards.
  void keep_exprs_of(uint32_t file);

 private:
  friend class Checker;
  friend void fuse_attention(Program& prog);
  friend void fuse_layers(Program& prog);
  Program() = default;

  ModuleList::Held modules_;  // stdlib first, then imports, main
  /// The imports' set, when they came from one: it holds their files.
  std::shared_ptr<const ImportSet> imports_;
  std::map<std::string, FnInfo> fns_;
  std::map<std::string, int64_t> dims_;
  std::map<std::string, std::unique_ptr<types::RecordInfo>> records_;
  std::map<std::string, std::unique_ptr<types::ModelInfo>> models_;
  std::unordered_map<const ast::Expr*, ExprInfo> exprs_;
  /// The bodies of generic fns' instances (Note [Dtype variables]).
  std::vector<std::unique_ptr<ast::FnDecl>> instance_decls_;
  DeviceList devices_;
  std::vector<MeshAxis> mesh_;
  std::unordered_map<const ast::Expr*, FusedAttention> fused_;
  std::unordered_set<const ast::Stmt*> deferred_;
  std::unordered_map<const ast::Expr*, FusedLayer> fused_layers_;
};

}  // namespace ss::check
