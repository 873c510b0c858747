// Types as written (ast::TypeExpr) -> Types, resolving axis names.
#include "interp/check/checker_impl.h"
#include "ops/core/divided_dim.h"

namespace ss::check {

using diag::Code;

std::optional<Axis> Checker::lookup_axis(const std::string& name,
                                         const AxisScope& scope) const {
  auto it = scope.names.find(name);
  if (it != scope.names.end()) return it->second;
  auto d = prog_->dims_.find(name);
  if (d != prog_->dims_.end()) return Axis::dim(name, d->second);
  if (dim_decls_.count(name)) return Axis::dim(name, -1);  // still resolving
  return std::nullopt;
}

std::optional<Axis> Checker::resolve_axis(const ast::AxisExpr& a,
                                          AxisScope& scope,
                                          bool fresh_vars) {
  std::optional<Axis> r;
  switch (a.kind) {
    case ast::AxisExpr::Kind::Literal:
      if (a.value < 1) {
        error(Code::E0303,
              a.span,
              "an axis size must be positive",
              "size " + std::to_string(a.value));
        return std::nullopt;
      }
      r = Axis::lit(a.value);
      break;
    case ast::AxisExpr::Kind::Name:
    case ast::AxisExpr::Kind::Star: {
      std::string key =
          a.kind == ast::AxisExpr::Kind::Star ? "*" + a.name : a.name;
      r = lookup_axis(key, scope);
      if (!r) {
        bool is_mesh = false;
        for (const MeshAxis& m : prog_->mesh_) is_mesh |= m.name == a.name;
        if (is_mesh && a.kind == ast::AxisExpr::Kind::Name) {
          error(Code::E0303,
                a.span,
                "`" + a.name + "` is a mesh axis, not an axis of a tensor",
                "mesh axis here")
              .help("split a tensor axis over it instead: `[m/" + a.name +
                    "]`");
          return std::nullopt;
        }
        if (!fresh_vars) {
          std::vector<std::string> cands;
          for (const auto& [n, v] : prog_->dims_) cands.push_back(n);
          for (const auto& [n, v] : scope.names) cands.push_back(n);
          auto& d = error(Code::E0201,
                          a.span,
                          "unknown axis `" + a.name + "`",
                          "not a dim or an axis in scope");
          std::string s = suggest(a.name, cands);
          if (!s.empty())
            did_you_mean(d, s, first_bytes(a.span, a.name.size()));
          return std::nullopt;
        }
        r = fresh_var(key);
        scope.names[key] = *r;
      }
      break;
    }
    case ast::AxisExpr::Kind::Group: {
      std::vector<Axis> items;
      for (const ast::AxisExpr& i : a.items) {
        auto x = resolve_axis(i, scope, fresh_vars);
        if (!x) return std::nullopt;
        items.push_back(*x);
      }
      r = Axis::group(std::move(items));
      break;
    }
  }
  if (r && a.divisor) {
    // Note [Divided dims] (ops/core/divided_dim.h): `S/2`.
    std::optional<Axis> q = types::divided_dim(*r, a.divisor);
    if (!q) {
      error(Code::E0303,
            a.span,
            r->kind == Axis::Kind::Dim && r->size >= 1
                ? "`" + a.name + "` is " + std::to_string(r->size) +
                      ", which " + std::to_string(a.divisor) +
                      " does not divide"
                : "only a dim can be divided in a type: `" + a.name +
                      "` is a size variable",
            "`" + a.name + "/" + std::to_string(a.divisor) + "`")
          .help(r->kind == Axis::Kind::Dim
                    ? "a stride that does not divide the size gives a "
                      "literal size: write it"
                    : "a size variable's size is known at run time only: "
                      "name the result's size with a new variable");
      return std::nullopt;
    }
    r = q;
  }
  if (r && !a.split.empty()) {
    auto split = mesh_split(a.split, a.span);
    if (!split) return std::nullopt;
    r->split = std::move(*split);
  }
  return r;
}

std::optional<types::MeshSplit> Checker::mesh_split(
    const std::vector<std::string>& names, diag::Span at) {
  types::MeshSplit split;
  for (const std::string& m : names) {
    const MeshAxis* found = nullptr;
    for (const MeshAxis& ma : prog_->mesh_)
      if (ma.name == m) found = &ma;
    if (found) {
      split.push_back(m, found->size);
    } else {
      error(Code::E2002,
            at,
            "`" + m + "` is not an axis of the mesh",
            prog_->mesh_.empty() ? "the program declares no mesh"
                                 : "not in the mesh")
          .help("declare the mesh: `mesh " + m + "=2`");
      return std::nullopt;
    }
  }
  return split;
}

// A model's spec (spmd.md): `Net/x` for every field, `Net{w/x, b/x}` for
// the named ones (fields of the model, each named once).
bool Checker::resolve_model_spec(const ast::TypeExpr& t, Type& r) {
  if (!t.split.empty()) {
    auto split = mesh_split(t.split, t.span);
    if (!split) return false;
    r.model_split = std::move(*split);
  }
  for (const ast::FieldSpec& fs : t.field_specs) {
    if (!r.model->field(fs.field)) {
      error(Code::E0203,
            fs.span,
            "model `" + r.model->name + "` has no field `" + fs.field + "`",
            "not a field of " + r.model->name);
      return false;
    }
    for (const auto& [name, _] : r.field_splits)
      if (name == fs.field) {
        error(Code::E0202,
              fs.span,
              "field `" + fs.field + "` is given two specs",
              "named again here");
        return false;
      }
    auto split = mesh_split(fs.split, fs.span);
    if (!split) return false;
    r.field_splits.emplace_back(fs.field, std::move(*split));
  }
  return true;
}

namespace {

// The optimizers' types (types::optim_names) are generic too.
const char* const kGenericNames[] = {
    "Grads", "Dataset", "Batches", "Axis", "list"};

}  // namespace

Type Checker::resolve_type(const ast::TypeExpr& t,
                           AxisScope& scope,
                           bool fresh_vars) {
  switch (t.kind) {
    case ast::TypeExpr::Kind::Tuple: {
      std::vector<Type> elems;
      for (const ast::TypeExpr& e : t.elems)
        elems.push_back(resolve_type(e, scope, fresh_vars));
      return Type::tuple(std::move(elems));
    }
    case ast::TypeExpr::Kind::Tensor: {
      std::vector<Axis> shape;
      bool bad = false;
      for (const ast::AxisExpr& a : t.axes) {
        auto x = resolve_axis(a, scope, fresh_vars);
        if (!x)
          bad = true;
        else
          shape.push_back(*x);
      }
      if (bad) return Type::error();
      if (t.elem.empty()) return Type::tensor(std::move(shape));
      if (auto dt = types::dtype_from_name(t.elem))
        return Type::tensor(std::move(shape), *dt);
      if (const types::RecordInfo* r = prog_->record(t.elem)) {
        if (shape.size() != 1) {
          error(Code::E0303,
                t.span,
                "a batch of records has exactly one axis: `[b] " + t.elem + "`",
                "found " + std::to_string(shape.size()) + " axes");
          return Type::error();
        }
        Type b = Type::of(TK::Batch);
        b.record = r;
        b.shape = std::move(shape);
        return b;
      }
      if (auto dt = dtype_word(t.elem, t.elem_span, scope, fresh_vars))
        return Type::tensor(std::move(shape), *dt);
      if (prog_->model(t.elem)) {
        // The element as it is alone: `[L] Layer[F F]` is L of
        // `Layer[F F]`, and a model that takes dims needs them (E0303).
        ast::TypeExpr one;
        if (!t.elems.empty()) {
          one = t.elems[0];
        } else {
          one.kind = ast::TypeExpr::Kind::Named;
          one.name = t.elem;
          one.span = t.elem_span;
        }
        Type mt = resolve_type(one, scope, fresh_vars);
        if (mt.is_error()) return mt;
        mt.stack = std::move(shape);
        return mt;
      }
      auto& d = error(Code::E0201,
                      t.elem_span,
                      "unknown element type `" + t.elem + "`",
                      "not a dtype, record or model");
      std::vector<std::string> known;
      for (const auto& [mn, _] : prog_->models_) known.push_back(mn);
      for (const auto& [rn, _] : prog_->records_) known.push_back(rn);
      std::string s = suggest(t.elem, known);
      if (s.empty())
        d.help(
            "dtypes are f32 f64 bf16 f16 i32 i64 bool; a dtype variable (`T`) "
            "is introduced by a fn's parameter types");
      else
        did_you_mean(d, s, t.elem_span);
      return Type::error();
    }
    case ast::TypeExpr::Kind::Named:
      break;
  }
  const std::string& n = t.name;
  auto no_args = [&]() {
    if (t.has_args)
      error(Code::E0303,
            t.span,
            "`" + n + "` takes no type arguments",
            "remove `[...]`");
  };
  if (auto dt = types::dtype_from_name(n)) {
    no_args();
    return Type::scalar(*dt);
  }
  static const std::pair<const char*, TK> kSimple[] = {{"int", TK::Int},
                                                       {"float", TK::Float},
                                                       {"str", TK::Str},
                                                       {"Mode", TK::Mode},
                                                       {"Logs", TK::Logs},
                                                       {"Sink", TK::Sink},
                                                       {"fn", TK::Fn}};
  for (const auto& [word, kind] : kSimple)
    if (n == word) {
      no_args();
      Type r = Type::of(kind);
      r.open = kind == TK::Logs;
      return r;
    }
  auto one_arg_name = [&](const char* what) -> const ast::AxisExpr* {
    if (t.args.size() != 1 || t.args[0].kind != ast::AxisExpr::Kind::Name) {
      error(Code::E0303,
            t.span,
            "`" + n + "` takes one " + what + ": `" + n + "[...]`",
            "expected one " + std::string(what));
      return nullptr;
    }
    return &t.args[0];
  };
  const types::OptimNames* optim = types::optim_named(n, /*type=*/true);
  if (optim || n == "Grads") {
    // `Grads[Net f64]`, `AdamW[Net T]`: a generic model's dtype after it.
    std::optional<types::DType> model_dtype;
    ast::TypeExpr one = t;
    if (t.args.size() == 2 && t.args[1].kind == ast::AxisExpr::Kind::Name) {
      model_dtype =
          dtype_word(t.args[1].name, t.args[1].span, scope, fresh_vars);
      if (!model_dtype || !types::is_float(*model_dtype)) {
        error(Code::E0304,
              t.args[1].span,
              "a model's dtype is a float dtype: f32 f64 bf16 f16",
              "not a float dtype");
        return Type::error();
      }
      one.args.pop_back();
    }
    const ast::AxisExpr* a =
        one.args.size() == 1 && one.args[0].kind == ast::AxisExpr::Kind::Name
            ? &one.args[0]
            : one_arg_name("model");
    if (!a) return Type::error();
    const types::ModelInfo* m = prog_->model(a->name);
    if (!m) {
      error(Code::E0201,
            a->span,
            "unknown model `" + a->name + "`",
            "not a model");
      return Type::error();
    }
    Type r = Type::of(n == "Grads" ? TK::Grads : TK::Optim);
    r.model = m;
    if (optim) r.optim_kind = optim->kind;
    if (model_dtype) {
      if (m->dtype_param.empty()) {
        error(Code::E0303,
              t.args[1].span,
              "model `" + m->name + "` takes no dtype",
              "its fields' dtypes are written in its declaration");
        return Type::error();
      }
      r.model_dtype = *model_dtype;
    }
    return r;
  }
  if (n == "Dataset" || n == "Batches") {
    const ast::AxisExpr* a = one_arg_name("record");
    if (!a) return Type::error();
    const types::RecordInfo* r = prog_->record(a->name);
    if (!r) {
      error(Code::E0201,
            a->span,
            "unknown data record `" + a->name + "`",
            "not a `data` declaration");
      return Type::error();
    }
    Type ty = Type::of(n == "Dataset" ? TK::Dataset : TK::Batches);
    ty.record = r;
    return ty;
  }
  if (n == "Axis") {
    if (t.args.size() != 1) {
      error(Code::E0303,
            t.span,
            "`Axis` takes one axis: `Axis[d]`",
            "expected one axis");
      return Type::error();
    }
    auto x = resolve_axis(t.args[0], scope, fresh_vars);
    if (!x) return Type::error();
    Type r = Type::of(TK::AxisArg);
    r.shape = {*x};
    return r;
  }
  if (n == "list") {
    const ast::AxisExpr* a = one_arg_name("element type");
    if (!a) return Type::error();
    ast::TypeExpr inner;
    inner.kind = ast::TypeExpr::Kind::Named;
    inner.span = a->span;
    inner.name = a->name;
    return Type::list(resolve_type(inner, scope, fresh_vars));
  }
  if (const types::ModelInfo* m = prog_->model(n)) {
    Type r = Type::of(TK::Model);
    r.model = m;
    if (t.args.size() != m->dim_params.size()) {
      error(Code::E0303,
            t.span,
            "model `" + n + "` takes " + std::to_string(m->dim_params.size()) +
                " dim argument(s), found " + std::to_string(t.args.size()),
            m->dim_params.empty() ? "write `" + n + "`"
                                  : "write `" + n + "[...]`");
      return Type::error();
    }
    for (const ast::AxisExpr& a : t.args) {
      auto x = resolve_axis(a, scope, fresh_vars);
      if (!x) return Type::error();
      r.model_args.push_back(*x);
    }
    if (!resolve_model_spec(t, r)) return Type::error();
    if (!t.dtype.empty()) {
      std::optional<types::DType> dt;
      if (m->dtype_param.empty()) {
        error(Code::E0303,
              t.dtype_span,
              "model `" + n + "` takes no dtype",
              "its fields' dtypes are written in its declaration")
            .help("declare it generic over its dtype: `model " + n +
                  (m->dim_params.empty() ? "" : "[...]") +
                  " T:`, with fields `[...] T`");
        return Type::error();
      }
      dt = dtype_word(t.dtype, t.dtype_span, scope, fresh_vars);
      if (!dt || !types::is_float(*dt)) {
        error(Code::E0304,
              t.dtype_span,
              "a model's dtype is a float dtype: f32 f64 bf16 f16",
              dt ? "this is " + std::string(types::dtype_name(*dt))
                 : "not a dtype");
        return Type::error();
      }
      r.model_dtype = *dt;
    }
    return r;
  }
  if (const types::RecordInfo* r = prog_->record(n)) {
    no_args();
    Type ty = Type::of(TK::Record);
    ty.record = r;
    return ty;
  }
  // `-> T`: a 0-d tensor of a dtype variable that a tensor's or a model's
  // dtype word introduced (a bare name does not, so `m: Mpl` stays a typo).
  if (!t.has_args)
    if (auto dt = dtype_word(n, t.span, scope, /*fresh_vars=*/false))
      return Type::scalar(*dt);
  auto& d = error(Code::E0201,
                  t.span,
                  "unknown type `" + n + "`",
                  "not a dtype, model, record or builtin type");
  // Past the errors kept, no walk over the names (Note [The first errors]
  // in diag/diagnostic.cpp).
  if (!diags_.kept(d)) return Type::error();
  std::vector<std::string> cands = {"f32",
                                    "f64",
                                    "bf16",
                                    "f16",
                                    "i32",
                                    "i64",
                                    "bool",
                                    "int",
                                    "float",
                                    "str",
                                    "Mode",
                                    "Logs",
                                    "Sink",
                                    "fn"};
  for (const char* g : kGenericNames) cands.push_back(g);
  for (const types::OptimNames& o : types::optim_names())
    cands.push_back(o.type);
  for (const auto& [mn, _] : prog_->models_) cands.push_back(mn);
  for (const auto& [rn, _] : prog_->records_) cands.push_back(rn);
  std::string s = suggest(n, cands);
  // The fix replaces the name only: `Mlpp[D]`'s arguments stay.
  if (!s.empty()) did_you_mean(d, s, first_bytes(t.span, n.size()));
  return Type::error();
}

std::optional<types::DType> Checker::dtype_word(const std::string& name,
                                                diag::Span at,
                                                AxisScope& scope,
                                                bool fresh_vars) {
  if (auto dt = types::dtype_from_name(name)) return dt;
  auto it = scope.dtypes.find(name);
  if (it != scope.dtypes.end()) return it->second;
  // Note [Dtype variables]: a capitalised name that is nothing else, in a
  // signature, introduces one; f32 in the fn's own check.
  const bool capital = !name.empty() && name[0] >= 'A' && name[0] <= 'Z';
  // A dim of the same name is no obstacle: after `]` a name is a dtype,
  // record or model, never an axis (`dim T = 64` and `[b T D] T` coexist).
  if (!fresh_vars || !capital || prog_->model(name) || prog_->record(name))
    return std::nullopt;
  if (name.size() >= 3) {  // `[b] Digt` is a typo, not a variable
    std::vector<std::string> known;
    for (const auto& [mn, _] : prog_->models_) known.push_back(mn);
    for (const auto& [rn, _] : prog_->records_) known.push_back(rn);
    if (!suggest(name, known).empty()) return std::nullopt;
  }
  scope.dtypes[name] = types::DType::F32;
  scope.dtype_vars.push_back(name);
  scope.dtype_var_spans[name] = at;
  return types::DType::F32;
}

}  // namespace ss::check
