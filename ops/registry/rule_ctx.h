#pragma once
// What a builtin's shape rule sees of its call. The checker implements it;
// rules in ops/defs use it to read argument types, resolve axis arguments,
// report errors and make fresh size variables. A rule never throws: it
// reports through error() and returns Type::error().

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "diag/diagnostic.h"
#include "ops/core/type.h"

namespace ss::ops {

class RuleCtx {
 public:
  virtual ~RuleCtx() = default;

  // --- arguments, matched to the op's ParamSpecs by position or keyword.
  /// Whether the call gave param [i] (a default counts as not given).
  virtual bool has(size_t i) const = 0;
  /// Param [i]'s type; Type::error() when absent or not a value param.
  virtual const types::Type& type(size_t i) const = 0;
  /// Param [i]'s span; the call's span when absent.
  virtual diag::Span span(size_t i) const = 0;
  virtual diag::Span call_span() const = 0;
  /// The source text of param [i]'s argument (for messages): `m.w2`.
  virtual std::string text(size_t i) const = 0;
  /// Positional arguments past the params (variadic ops: print, tee, ...).
  virtual size_t extra_count() const = 0;
  virtual const types::Type& extra_type(size_t k) const = 0;
  virtual diag::Span extra_span(size_t k) const = 0;
  /// Keyword arguments that name no param (ops with any_keywords: logs).
  virtual std::vector<std::pair<std::string, types::Type>> extra_keywords()
      const = 0;

  // --- arguments that are not values.
  /// An axis passed by name (ParamKind::Axis): resolved among axes in
  /// scope (dims, size variables, aliases, mesh axes). Reports E0201.
  virtual std::optional<types::Axis> axis(size_t i) = 0;
  /// `over=` (ParamKind::Axes) against [operand]'s shape: the positions it
  /// names, in the order written. Reports E0308 (absent, twice, out of
  /// range) and returns nullopt then.
  virtual std::optional<std::vector<size_t>> over(
      size_t i, const std::vector<types::Axis>& operand) = 0;
  /// A type in value position (ParamKind::TypeArg): `[b D] f64`, `Digit`,
  /// `f32`, a list of sizes `[2, 8, F]`.
  virtual types::Type type_arg(size_t i) = 0;
  /// A value known at check time: int literals, dims, arithmetic on them.
  virtual std::optional<int64_t> const_int(size_t i) = 0;
  virtual std::optional<double> const_float(size_t i) = 0;
  virtual std::optional<std::string> const_str(size_t i) = 0;
  /// `true` / `false` literals.
  virtual std::optional<bool> const_bool(size_t i) = 0;
  /// Mesh axis names: `x`, `(x, y)` or `(x y)`. Reports E2002 for a name
  /// that is not an axis of the mesh and returns nullopt then.
  virtual std::optional<std::vector<std::string>> mesh_axes(size_t i) = 0;
  /// A size given as a value (`topk(x, K)`, `arange(N)`, `pad(to=8)`): a
  /// dim's name gives that dim's axis, a constant a literal, anything else
  /// a fresh size variable (known at run time).
  virtual types::Axis size_axis(size_t i) = 0;
  /// The lengths of a nested list literal, outer first (`tensor([[1, 2],
  /// [3, 4]])` -> {2, 2}); nullopt when not a rectangular literal.
  virtual std::optional<std::vector<int64_t>> list_shape(size_t i) = 0;
  /// A list literal of pairs of values known at check time
  /// (`perm=[(0, 1), (1, 2)]`): each pair and its span; nullopt when the
  /// argument is not such a literal.
  struct IntPair {
    int64_t first = 0, second = 0;
    diag::Span span;
  };
  virtual std::optional<std::vector<IntPair>> const_int_pairs(size_t i) = 0;
  /// A tuple literal of ints known at check time (`(2, 3)`); nullopt when
  /// the argument is not one.
  virtual std::optional<std::vector<int64_t>> const_int_tuple(size_t i) {
    (void)i;
    return std::nullopt;
  }

  // --- services.
  virtual diag::Diagnostic& error(diag::Code code,
                                  diag::Span span,
                                  std::string message,
                                  std::string label = {}) = 0;
  /// A new size variable, for sizes only known at run time.
  virtual types::Axis fresh(const std::string& name) = 0;
  /// Checks a call of function value [fn] with [args] (value_and_grad,
  /// mean_logs): E0305/E0303 at [at]. Returns the result type.
  virtual types::Type call_fn(const types::Type& fn,
                              const std::vector<types::Type>& args,
                              diag::Span at) = 0;
  /// The size of mesh axis [name], when the program declares it.
  virtual std::optional<int64_t> mesh_axis(const std::string& name) const = 0;
  /// True inside an spmd fn (collectives are allowed only there).
  virtual bool in_spmd() const = 0;
  /// A differentiating builtin's loss, as f returns it here: its varying
  /// mesh axes, for the evaluator (Note [A gradient inside an instance]
  /// in mesh_comm.h).
  virtual void record_loss_varying(const std::vector<std::string>& varying) {
    (void)varying;
  }
  /// The name of [fn]'s instance that runs under autocast to [to] (Note
  /// [Autocast]), made and checked on first use; nullopt where there is
  /// none (reported).
  virtual std::optional<std::string> autocast_instance(const std::string& fn,
                                                       types::DType to,
                                                       diag::Span at) {
    (void)fn, (void)to, (void)at;
    return std::nullopt;
  }
  /// The op's name, for messages: "matmul", "softmax".
  virtual const char* op_name() const = 0;
};

}  // namespace ss::ops
