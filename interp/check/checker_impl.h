#pragma once
// The checker's internals, shared by the files of interp/check/ (one job
// each: decls, type resolution, fitting, statements, expressions, calls,
// patterns). Not included outside interp/check/.

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "diag/diagnostic.h"
#include "interp/check/checked.h"
#include "interp/check/checker.h"
#include "ops/registry/registry.h"

namespace ss::check {

using types::Axis;
using types::Type;
using TK = types::Type::Kind;

/// Axis names of one fn: size variables, pattern aliases and, through the
/// checker, dims and mesh axes. See Note [Pattern aliases] in patterns.cpp.
struct AxisScope {
  std::map<std::string, Axis> names;
  /// A group `(K m)` that an input pattern cut out of an axis, and that
  /// axis: a later `(K m)` is the original axis again.
  std::vector<std::pair<Axis, Axis>> decompositions;
  /// Dtype variables and what they stand for here (Note [Dtype
  /// variables]): a fn instance's bindings, a generic model's parameter.
  std::map<std::string, types::DType> dtypes;
  /// The dtype variables a signature introduced, in order of appearance.
  std::vector<std::string> dtype_vars;
  std::map<std::string, diag::Span> dtype_var_spans;
};

struct Local {
  Type type;
  diag::Span span;
  bool is_param = false;
  bool mut = false;  // params: declared `mut`; lets: always changeable
};

/// Lexical blocks of locals.
class ValueScope {
 public:
  void push() { blocks_.emplace_back(); }
  void pop() { blocks_.pop_back(); }
  /// Adds [name]; returns the earlier local when this block has it.
  const Local* declare(const std::string& name, Local l);
  Local* find(const std::string& name);
  /// The sum of every local's varying set size: it only grows (spmd.md),
  /// so a change means some local varies over more mesh axes.
  size_t varying_total() const;

 private:
  std::vector<std::map<std::string, Local>> blocks_;
};

/// The state of checking one fn body.
struct FnCtx {
  FnInfo* fn = nullptr;
  /// Inside an autocast instance: its dtype (Note [Autocast]).
  std::optional<types::DType> autocast;
  AxisScope axes;
  ValueScope values;
  bool in_spmd = false;
  int loop_depth = 0;
  /// In an spmd fn, the enclosing `if`/`while`/`for` whose condition
  /// varies over the mesh (E2006), outermost first.
  struct VaryingCond {
    diag::Span span;
    std::string word;  // "if", "while", "for"
    std::vector<std::string> axes;
  };
  std::vector<VaryingCond> varying_conds;
  bool saw_return = false;
  /// The rand/randn calls checked so far in this fn, in source order.
  int draws = 0;
  /// Size variables only the result names, and what returns bound them to.
  std::set<uint32_t> result_only;
  std::map<uint32_t, Axis> result_binding;
};

/// Size variables of a callee bound at one call, and where.
struct Binding {
  std::map<uint32_t, Axis> vars;
  std::map<uint32_t, diag::Span> where;
  std::map<std::string, std::vector<Axis>> stars;  // `*s`
  /// The variables a `[b] R` parameter bound: a batch's own size (Note
  /// [State carried across batches] in fit.cpp).
  std::set<uint32_t> batch_vars;
  /// An ordinary fn called inside an spmd fn runs per instance on blocks:
  /// its size variables bind to block axes, splits included.
  bool blocks = false;
  /// An spmd fn called from an spmd fn is inlined (blocks is set too):
  /// its split parameter axes need arguments split the same way.
  bool inlined = false;
};

/// A builtin's argument as its rule sees it (calls.cpp).
struct RuleArg {
  bool present = false;
  Type type;
  diag::Span span;
  const ast::Expr* expr = nullptr;
  std::string keyword;  // extras: the keyword it was given with
};

/// One argument at a call site, already typed.
struct CallArg {
  std::string keyword;
  Type type;
  diag::Span span;
  const ast::Expr* expr = nullptr;  // null when synthesised (method base)
};

class Checker {
 public:
  Checker(diag::SourceMap& sm, diag::Diagnostics& diags, const Options& opts);
  /// Checks [modules]; [set]: the import set they came from, which the
  /// program holds (Note [Shared import sets]).
  std::unique_ptr<Program> run(ModuleList::Held modules,
                               std::shared_ptr<const ImportSet> set = {});

  // ---- decls.cpp: global declarations.
  void collect_globals();
  void resolve_devices();
  void resolve_dims();
  void resolve_records();
  void check_pad(const ast::DataField& f, types::FieldInfo& fi);
  void resolve_models();
  void resolve_signatures();
  /// [decl]'s parameter and result types, named [name] (an instance's
  /// `f[T=f64]`), its size and dtype variables in [scope].
  FnInfo resolve_signature(const std::string& name,
                           const ast::FnDecl& decl,
                           AxisScope& scope);
  void check_extern(const ast::FnDecl& f);
  /// Checks [fn]'s body unless done (or in progress: recursion).
  void ensure_checked(FnInfo& fn);

  // ---- resolve.cpp: types as written -> Types.
  /// [fresh_vars]: unknown lowercase-or-any names become new size vars in
  /// [scope] (signatures); otherwise they must already be in scope.
  /// The split over mesh axes [names], each with its size; E2002 (and
  /// nullopt) unless every name is a mesh axis.
  std::optional<types::MeshSplit> mesh_split(
      const std::vector<std::string>& names, diag::Span at);
  /// `Net/x`, `Net{w/x}` onto the model type [r] (false: reported).
  bool resolve_model_spec(const ast::TypeExpr& t, Type& r);
  Type resolve_type(const ast::TypeExpr& t, AxisScope& scope, bool fresh_vars);
  std::optional<Axis> resolve_axis(const ast::AxisExpr& a,
                                   AxisScope& scope,
                                   bool fresh_vars);
  /// A name in axis position: alias/size var, then dim, then mesh axis.
  std::optional<Axis> lookup_axis(const std::string& name,
                                  const AxisScope& scope) const;
  Axis fresh_var(const std::string& name);
  /// The dtype a type's dtype word names (`f64`, or a dtype variable in
  /// [scope]; a new one in a signature, [fresh_vars]); nullopt when [name]
  /// is neither (nothing reported).
  std::optional<types::DType> dtype_word(const std::string& name,
                                         diag::Span at,
                                         AxisScope& scope,
                                         bool fresh_vars);

  // ---- generics.cpp: fns generic over a dtype (Note [Dtype variables]).
  /// Makes every generic fn's instances, after resolve_signatures.
  void make_instances();
  /// The instance of [fn] that the arguments in [slot] bind its dtype
  /// variables to; [fn] itself when it is not generic; null: reported.
  /// The name of [fn]'s autocast instance for [to] (Note [Autocast]),
  /// made and checked on first use; nullopt when it cannot be (reported
  /// at [at]).
  std::optional<std::string> autocast_instance(const std::string& fn,
                                               types::DType to,
                                               diag::Span at);
  /// [arg] as an autocast instance passes it on: a float tensor of another
  /// float dtype than [declared] becomes [declared]'s (cast at run time).
  static Type as_declared(const Type& declared, const Type& arg);
  /// [t] with autocast's policy for [op] applied under [to]: float tensors
  /// (and a generic model's params) in the op's dtype; nullopt: the op
  /// keeps its operands' dtypes.
  static std::optional<types::DType> autocast_target(const ops::OpDef& op,
                                                     types::DType to);
  static void autocast_type(Type& t, types::DType target);
  const FnInfo* pick_instance(const FnInfo& fn,
                              const std::vector<const CallArg*>& slot,
                              diag::Span at);

  // ---- fit.cpp: does an argument fit a parameter type?
  /// Fits [arg] to [param], binding [param]'s size variables. Reports
  /// E0303/E0304/E0307 at [at] naming [what] and returns false on error.
  bool fit(const Type& param,
           const Type& arg,
           Binding& b,
           diag::Span at,
           const std::string& what);
  /// [t] with [b]'s bindings put in; unbound variables become fresh ones
  /// (recorded in [b], so each is replaced the same way everywhere).
  Type substitute(const Type& t, Binding& b);
  Axis substitute(const Axis& a, Binding& b);
  std::vector<Axis> substitute(const std::vector<Axis>& shape, Binding& b);
  /// Same shape and dtype (rebinding with `=`, model field assignment).
  static bool same_type(const Type& a, const Type& b);

  // ---- stmts.cpp: fn bodies.
  void check_fn(FnInfo& fn);
  void check_block(const ast::Block& b, FnCtx& c);
  void check_stmt(const ast::Stmt& s, FnCtx& c);
  void check_assign(const ast::Stmt& s,
                    const ast::Expr& tgt,
                    Type v,
                    diag::Span value_span,
                    FnCtx& c);
  void check_return(const ast::Stmt& s, FnCtx& c);
  Type check_condition(const ast::Expr& e, FnCtx& c);
  /// A loop's body (and a while's condition), checked again while a pass
  /// grows a varying set (Note [Loop-carried varying sets]).
  void check_loop(const ast::Stmt& s, FnCtx& c);
  /// E2006 for a collective call [op] at [at] under a varying condition.
  void check_collective_place(const ops::OpDef& op,
                              const std::vector<RuleArg>& args,
                              diag::Span at,
                              FnCtx& c);
  Type element_type(const Type& iterable, diag::Span at);
  void bind_targets(const std::vector<ast::NameTarget>& targets,
                    const Type& t,
                    diag::Span at,
                    FnCtx& c,
                    bool is_let);
  /// E0401 unless [e] is a model/optimizer that may be changed here.
  void require_mutable(const ast::Expr& e, FnCtx& c, const std::string& why);

  // ---- exprs.cpp
  Type check_expr(const ast::Expr& e, FnCtx& c);
  Type check_name(const ast::Expr& e, FnCtx& c);
  Type check_field(const ast::Expr& e, FnCtx& c);
  Type check_index(const ast::Expr& e, FnCtx& c);
  Type check_unary(const ast::Expr& e, FnCtx& c);
  Type check_binary(const ast::Expr& e, FnCtx& c);
  void suggest_matmul_field(const ast::Expr& e, const Type& lhs);
  /// The type of `a op b` via the op's builtin rule (also `x op= e`).
  Type binary_type(ast::BinaryOp op,
                   const Type& a,
                   const Type& b,
                   diag::Span at,
                   diag::Span a_span,
                   diag::Span b_span);
  Type field_of(const Type& base,
                const std::string& name,
                diag::Span at,
                diag::Span name_span);
  Type record(const ast::Expr& e, Type t, Resolution r = {});
  /// The side-table entry of [e] in the program being built.
  ExprInfo& info_for(const ast::Expr* e) { return prog_->exprs_[e]; }
  /// A constant host value computed at check time.
  std::optional<int64_t> const_int(const ast::Expr& e);
  std::optional<double> const_float(const ast::Expr& e);
  /// A type in value position: TypeLit, record/model/dtype name, sizes.
  Type type_value(const ast::Expr& e, FnCtx& c);

  // ---- calls.cpp
  Type check_call(const ast::Expr& e, FnCtx& c);
  /// An argument for an `Axis[d]` parameter: an axis by name.
  Type axis_arg(const ast::Expr& e, FnCtx& c);
  Type call_user(const FnInfo& fn,
                 const std::vector<CallArg>& args,
                 diag::Span at,
                 FnCtx* c,
                 std::vector<int>* mapping = nullptr,
                 const FnInfo** chosen = nullptr);
  Type call_builtin(const ops::OpDef& op,
                    const ast::Expr& call,
                    const ast::Expr* method_base,
                    FnCtx& c);
  /// [named]: the argument that named the fn, told which instance of a
  /// generic fn the call binds (Note [Dtype variables]).
  Type call_fn_value(const Type& fn,
                     const std::vector<Type>& args,
                     diag::Span at,
                     FnCtx* c,
                     const ast::Expr* named = nullptr);

  /// Runs [op]'s shape rule on already-typed arguments (operators, and
  /// builtin calls once their arguments are matched to params).
  Type apply_rule(const ops::OpDef& op,
                  std::vector<struct RuleArg> args,
                  diag::Span at,
                  FnCtx* c,
                  std::vector<struct RuleArg> extras = {},
                  const ast::Expr* call = nullptr);

  // ---- patterns.cpp
  Type check_pattern_call(ops::Intrinsic kind,
                          const ast::Expr& call,
                          const std::vector<Type>& operands,
                          const std::vector<diag::Span>& spans,
                          FnCtx& c);

  // ---- stmts.cpp: E2001, an spmd fn's result against its type's splits.
  void check_result_varying(FnInfo& fn, const Type& t, diag::Span at);
  /// E2001s kept by check_result_varying, for the fns they apply to.
  void report_pending_e2001();

  // ---- calls.cpp: E2003 for an spmd fn's whole argument.
  bool check_model_blocks_divide(const ParamInfo& p,
                                 const CallArg& arg,
                                 const Type& pm,
                                 const Type& am,
                                 const std::string& path);
  bool check_blocks_divide(const ParamInfo& p,
                           const CallArg& arg,
                           const Binding& b);

  // ---- placement.cpp: several devices (devices.md): each fn's placement,
  // the batch axis through calls, E1801-E1804 and E1901.
  void check_devices();
  // ---- plan/device_options.cpp: `shard params` and `split H`
  // (E1902-E1904), once the dims have sizes.
  void check_device_options();
  void check_mesh_devices(const ast::MeshDecl& mesh,
                          const ast::DevicesDecl* decl);
  // `deterministic` with `split H` or a mesh: E2005 (device_options.cpp).
  void check_deterministic(const ast::DevicesDecl* decl,
                           const ast::MeshDecl* mesh);

  // ---- shared
  diag::Diagnostic& error(diag::Code code,
                          diag::Span span,
                          std::string message,
                          std::string label = {});
  /// [s]'s source as a message quotes it: on one line.
  std::string text(diag::Span s) const { return sm_.one_line(s); }
  const FnInfo* find_fn(const std::string& name) const;
  std::vector<std::string> value_names(const FnCtx* c) const;

  diag::SourceMap& sm_;
  diag::Diagnostics& diags_;
  const Options& opts_;
  std::unique_ptr<Program> prog_;
  uint32_t next_var_ = 1;
  std::map<std::string, const ast::DimDecl*> dim_decls_;
  std::map<std::string, const ast::DataDecl*> data_decls_;
  std::map<std::string, const ast::ModelDecl*> model_decls_;
  std::map<std::string, const ast::FnDecl*> fn_decls_;
  std::set<std::string> stdlib_names_;
  std::map<std::string, AxisScope> sig_scopes_;
  /// Fns whose check reported an error (their other instances are not
  /// checked: Note [Dtype variables]).
  std::set<std::string> erred_;  // each fn's signature axes
  uint32_t stdlib_file_ = UINT32_MAX;
  int depth_ = 0;  // expression recursion guard
  // Note [Nesting through calls]: ensure_checked checks a callee before
  // its caller, with depth_ reset to 0, so a chain of fns each calling the
  // next nests the checker's recursion as deep as the chain (found by
  // tests/fuzz: `ss check` of 200,000 such fns overflowed even `ss`'s
  // 1 GiB stack, Note [A deep stack] in interp/cli/main.cpp). nesting_
  // counts every expression level on the stack, across fns, and
  // kMaxNesting bounds it with an error: a chain of up to 10,000 fns (one
  // level each), far inside the stack, under the sanitizers too.
  int nesting_ = 0;
  static constexpr int kMaxNesting = 10000;
};

/// The mesh axes [t]'s shape splits over (`[m/x (k/y n)]`: x, y).
std::set<std::string> split_axes(const Type& t);

/// The closest of [candidates] to [name] (edit distance <= 2), or "".
/// The dtype word a type as written names: a tensor's (`[b D] T`), a
/// model's (`Linear[D H] T`, `[L] Block T`) or a bare name's (`T`); "" for
/// none. Note [Dtype variables] in generics.cpp.
std::string dtype_word_of(const ast::TypeExpr& t);

std::string suggest(const std::string& name,
                    const std::vector<std::string>& candidates);

/// "did you mean `s`?" on [d], with the fix that writes [s] over [at] (an
/// editor's quick fix: Note [Help an editor applies] in
/// interp/lsp/code_actions.cpp).
inline void did_you_mean(diag::Diagnostic& d,
                         const std::string& s,
                         diag::Span at) {
  d.help("did you mean `" + s + "`?", {"Change to `" + s + "`", at, s});
}
/// [s]'s first [n] bytes: a keyword argument's name in its `name=value`.
inline diag::Span first_bytes(diag::Span s, size_t n) {
  return {s.file, s.begin, s.begin + static_cast<uint32_t>(n)};
}

/// The standard library's source (models Linear, LayerNorm, ...).
const char* stdlib_source();

}  // namespace ss::check
