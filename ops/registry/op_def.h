#pragma once
// One builtin = one OpDef: its parameters, its shape rule, its forward
// (whose VJPs come from ops/api.h) and its rule on several devices
// (ops/registry/device_rule.h, Note [An op's rule on several devices]).
// Every OpDef lives in ops/defs/<family>.cpp and is registered there with
// SS_REGISTER_OPS; the checker finds it by name (ops/registry/registry.h).

#include <optional>
#include <utility>
#include <vector>

#include "ops/core/type.h"
#include "ops/registry/device_rule.h"
#include "ops/registry/forward_ctx.h"
#include "ops/registry/rule_ctx.h"

namespace ss::ops {

enum class ParamKind : uint8_t {
  Value,    // any expression; the checker types it
  Axis,     // an axis by name: `psum(v, x)`, `causal(n, t)`, `size(x, A)`
  Axes,     // `over=`: a name, group, position, or tuple of them
  TypeArg,  // a type in value position: `zeros(T)`, `dataset(R, path)`
};

struct ParamSpec {
  const char* name;
  ParamKind kind = ParamKind::Value;
  bool required = true;
  /// The op changes this argument (a model or optimizer): the checker
  /// demands a `mut` place there (E0401).
  bool mutates = false;
  /// Only by keyword (`aux=` after value_and_grad's variadic arguments).
  bool keyword_only = false;
};

/// Typing done by the checker itself because it needs the checker's
/// scopes: pattern ops bind aliases, print and logs take anything.
enum class Intrinsic : uint8_t { None, Rearrange, Split, Einsum };

using ShapeRule = types::Type (*)(RuleCtx& ctx);

/// The builtins of attention written out, which an op computing it in one
/// kernel names in its entry (OpDef::fuses) so that the checker can find
/// the pattern without matching a name of its own (Note [The attention
/// written out] in interp/check/fusion.cpp): `einsum(q, k, .. n d, .. t d
/// -> .. n t)`, optionally `/ c` or `* c`, `masked_fill(s, not causal(n,
/// t), -inf)` or nothing, `softmax(.., over=t)`, then `einsum(p, v, .. n
/// t, .. t e -> .. n e)`.
struct AttentionChain {
  const char* product = nullptr;    // einsum
  const char* fill = nullptr;       // masked_fill
  const char* mask = nullptr;       // causal
  const char* normalise = nullptr;  // softmax
};

/// The builtins of a layer written out that an op runs as one product
/// with its epilogue names in its entry (OpDef::fuses_layer), so that the
/// checker finds the layer without matching a name of its own (Note
/// [Layers run as one product] in interp/check/fusion_layers.cpp):
/// `relu(x @ w + b)`, `gelu(linear(l, x))`, `h + linear(l, x)`.
struct LayerChain {
  const char* product = nullptr;  // matmul (`@`)
  const char* add = nullptr;      // add (`+`)
  const char* linear = nullptr;   // linear
  const char* relu = nullptr;
  const char* gelu = nullptr;
};

/// What an op does inside `autocast(f, bf16)` (Note [Autocast] in
/// interp/eval/autocast.cpp), as torch.autocast on CPU (torch 1.13's
/// lists): Lower runs it in the autocast dtype (products and
/// convolutions), F32 in f32 (losses, prod), Keep in its inputs' dtypes.
enum class Autocast : uint8_t { Keep, Lower, F32 };

struct OpDef {
  const char* name;
  std::vector<ParamSpec> params;
  ShapeRule rule = nullptr;
  const char* summary = "";
  bool variadic = false;      // extra positional arguments allowed
  bool any_keywords = false;  // extra keyword arguments allowed (logs)
  Intrinsic intrinsic = Intrinsic::None;
  /// Its rule on several devices (library.md's table): the checker's
  /// placement and batch-axis checks, `ss explain` and the rank's lowering
  /// read it.
  DeviceRule device{};
  bool differentiable = true;
  /// A unary elementwise op that, given gradients or a model, applies to
  /// each param's tensor and gives a Grads (`sqrt(v)`: Note [Arithmetic
  /// over params] in interp/check/exprs.cpp); the evaluator maps it.
  bool maps_over_params = false;
  /// Its place in autocast's policy.
  Autocast autocast = Autocast::Keep;
  /// The attention written out that this op computes in one kernel
  /// (scaled_dot_product_attention): the checker runs the op in its place.
  std::optional<AttentionChain> fuses;
  /// The layers written out that this op runs as one product with its
  /// epilogue (fused_linear): the checker runs the op in their place.
  std::optional<LayerChain> fuses_layer;
  /// rand/randn: its draws are keyed by its call site, which the checker
  /// names (ExprInfo::draw_site: Note [A draw's site] in
  /// interp/check/calls.cpp).
  bool draws_at_site = false;
  /// An initialiser (`w: [D H] = normal(std=0.02)`): init(...) draws the
  /// field from the entry's arguments (interp/builtins/models.cpp); it is
  /// never run as a call, so it has no forward and no runtime.
  bool initialiser = false;
  /// Tensor ops compute here (written with ops/api.h, so gradients come
  /// from the API's VJPs). Null for builtins the evaluator implements
  /// itself because they handle models, data, sinks or files
  /// (interp/builtins/<family>.cpp (data: interp/data/data.cpp), found by the
  /// same name).
  Forward forward = nullptr;
  /// What a PyTorch user would write instead (docs/reference/builtins.md,
  /// generated from this table): a call such as "torch.softmax(x, dim=d)",
  /// or "none: " and why where torch has nothing alike. A test fails for
  /// an entry without one (Note [The builtins' reference] in
  /// interp/cli/builtin_reference.cpp).
  const char* torch = "";

  /// The operator that spells this op (language.md, Operators): `a + b`
  /// is add, `a @ b` matmul, `a and b` logical_and; `-a` is neg, `not a`
  /// logical_not. The checker types an operator, and the evaluator runs
  /// it, through this entry (registry.h: find_infix, find_prefix).
  const char* infix = nullptr;
  const char* prefix = nullptr;

  /// Its position in the table (all_ops()), set when the table is built:
  /// the evaluator reaches a builtin's runtime implementation by it
  /// (interp/eval/runtime_table.h), never by name.
  size_t index = 0;

  /// This entry with [t] as its torch equivalent, for the entries a
  /// family's helper builds: `def(...).with_torch("torch.cumsum(x, dim)")`.
  OpDef with_torch(const char* t) && {
    torch = t;
    return std::move(*this);
  }
  OpDef with_autocast(Autocast a) && {
    autocast = a;
    return std::move(*this);
  }
};

}  // namespace ss::ops
