// Fns generic over a dtype: `fn f(x: [b D] T) -> [b D] T`.
#include <algorithm>

#include "interp/check/checker_impl.h"

namespace ss::check {

using diag::Code;

// Note [Dtype variables]: a capitalised name in a tensor's or a model's
// dtype position of a fn's parameter types (`x: [b D] T`, `l: Linear[I O]
// T`) that is nothing else (not a dtype, model or record, nor close
// to a model's or record's name: `[b] Digt` is a typo) is a dtype
// variable. It stands for a float dtype, f32 f64 bf16 f16, the same at
// every place of one call: the arguments bind it, and the result and the
// body's types (`let y: [b D] T`, `to(x, T)`) use it. A model declares
// one after its dims (`model Linear[I O] T:`); its fields that name it
// take the model type's dtype (`Linear[D H] f64`; f32 when none is
// written, as a tensor's), through model_field_type.
//
// A generic fn is checked once per float dtype each variable can be
// bound to, each instance on its own copy of the body (ast::clone): the
// FnInfo with every variable f32 is the fn itself, the others are named
// `f[T=f64]`. So the checker proves every instantiation, with the dtype
// rules it has (torch.result_type's; a generic body that adds an f32
// tensor to `[b D] T` fails for T = f64 at the `return`, say), and
// evaluation needs nothing new: a call resolves to the instance its
// arguments bind, each instance's expressions carry their own checked
// types (a loss's dtype, `zeros([D] T)`), and a fn value is
// dispatched on its arguments' dtypes (instance_for). The same bound
// keeps instances few: at most two variables, 16 instances. An error in
// the f32 check is reported once; other instances are then not checked.
// The arguments that bind a variable are those of parameters typed by it
// directly (a tensor, a model, Grads[M T]); inside a tuple parameter it
// is not bound by its argument, and is f32 there.

std::string dtype_word_of(const ast::TypeExpr& t) {
  switch (t.kind) {
    case ast::TypeExpr::Kind::Tensor:
      if (!t.elems.empty()) return t.elems[0].dtype;  // `[L] Block T`
      return t.elem;
    case ast::TypeExpr::Kind::Named:
      if (!t.dtype.empty()) return t.dtype;
      // `Grads[Net T]`, `AdamW[Net T]`
      if ((t.name == "Grads" || types::optim_named(t.name, /*type=*/true)) &&
          t.args.size() == 2 && t.args[1].kind == ast::AxisExpr::Kind::Name)
        return t.args[1].name;
      return t.has_args ? "" : t.name;
    case ast::TypeExpr::Kind::Tuple:
      return "";
  }
  return "";
}

namespace {

constexpr types::DType kFloats[] = {types::DType::F32,
                                    types::DType::F64,
                                    types::DType::BF16,
                                    types::DType::F16};
constexpr size_t kMaxVars = 2;

}  // namespace

std::string instance_key(const std::vector<types::DType>& bound) {
  std::string key;
  for (size_t i = 0; i < bound.size(); ++i)
    key += (i ? "," : "") + std::string(types::dtype_name(bound[i]));
  return key;
}

void Checker::make_instances() {
  std::vector<std::string> generic;
  for (const auto& [name, fn] : prog_->fns_)
    if (!fn.dtype_vars.empty()) generic.push_back(name);
  for (const std::string& name : generic) {
    FnInfo& base = prog_->fns_.at(name);
    const ast::FnDecl& d = *base.decl;
    if (d.is_extern || base.dtype_vars.size() > kMaxVars) {
      error(Code::E0303,
            d.name_span,
            d.is_extern ? "an extern fn's dtypes are written out"
                        : "`" + name + "` has " +
                              std::to_string(base.dtype_vars.size()) +
                              " dtype variables; at most 2",
            "dtype variable `" + base.dtype_vars.back() + "`")
          .help(d.is_extern ? "write f32, f64, bf16 or f16 for `" +
                                  base.dtype_vars[0] + "`"
                            : "write the others' dtypes out");
      base.dtype_vars.clear();
      continue;
    }
    size_t count = 1;
    for (size_t i = 0; i < base.dtype_vars.size(); ++i) count *= 4;
    for (size_t code = 1; code < count; ++code) {
      std::vector<types::DType> bound;
      std::string shown;
      AxisScope scope;
      for (size_t i = 0, c = code; i < base.dtype_vars.size(); ++i, c /= 4) {
        bound.push_back(kFloats[c % 4]);
        scope.dtypes[base.dtype_vars[i]] = bound.back();
        shown += (i ? " " : "") + base.dtype_vars[i] + "=" +
                 types::dtype_name(bound.back());
      }
      auto decl = std::make_unique<ast::FnDecl>(ast::clone(d));
      FnInfo fn = resolve_signature(name + "[" + shown + "]", *decl, scope);
      fn.instance_of = name;
      fn.dtype_vars.clear();
      base.instances[instance_key(bound)] = fn.name;
      sig_scopes_[fn.name] = std::move(scope);
      std::string inst = fn.name;
      prog_->fns_[inst] = std::move(fn);
      prog_->instance_decls_.push_back(std::move(decl));
    }
  }
}

const FnInfo* Checker::pick_instance(const FnInfo& fn,
                                     const std::vector<const CallArg*>& slot,
                                     diag::Span at) {
  if (fn.dtype_vars.empty()) return &fn;
  std::map<std::string, std::pair<types::DType, size_t>> bound;
  for (size_t k = 0; k < slot.size() && k < fn.param_dtype_var.size(); ++k) {
    const std::string& var = fn.param_dtype_var[k];
    if (!slot[k] || var.empty()) continue;
    const Type& t = slot[k]->type;
    std::optional<types::DType> d;
    if (t.kind == TK::Tensor) d = t.dtype;
    if (t.kind == TK::Model || t.kind == TK::Grads || t.kind == TK::Optim)
      d = t.model_dtype;
    if (!d) continue;  // the fit says what is wrong
    const std::string what = "`" + var + "` of `" + fn.name + "`";
    if (!types::is_float(*d)) {
      error(Code::E0304,
            slot[k]->span,
            what + " stands for a float dtype (f32 f64 bf16 f16)",
            "this is " + std::string(types::dtype_name(*d)))
          .help("convert it: `to(x, f32)`");
      return nullptr;
    }
    auto [it, fresh] = bound.emplace(var, std::make_pair(*d, k));
    if (!fresh && it->second.first != *d) {
      error(Code::E0304,
            slot[k]->span,
            what + " is " + types::dtype_name(it->second.first) + " at `" +
                fn.params[it->second.second].name + "`, but " +
                types::dtype_name(*d) + " here",
            "this is " + std::string(types::dtype_name(*d)))
          .note("`" + var + "` is " + types::dtype_name(it->second.first) +
                    " here",
                slot[it->second.second]->span)
          .help("convert one: `to(x, " +
                std::string(types::dtype_name(it->second.first)) + ")`");
      return nullptr;
    }
  }
  std::vector<types::DType> key;
  bool all_f32 = true;
  for (const std::string& v : fn.dtype_vars) {
    auto it = bound.find(v);
    key.push_back(it == bound.end() ? types::DType::F32 : it->second.first);
    all_f32 &= key.back() == types::DType::F32;
  }
  if (all_f32) return &fn;
  auto it = fn.instances.find(instance_key(key));
  if (it == fn.instances.end()) {  // not made: its signature was refused
    error(Code::E0304, at, "no instance of `" + fn.name + "` for these dtypes");
    return nullptr;
  }
  return find_fn(it->second);
}

// ---- autocast (Note [Autocast] in interp/eval/autocast.cpp)

std::optional<std::string> Checker::autocast_instance(const std::string& name,
                                                      types::DType to,
                                                      diag::Span at) {
  auto found = prog_->fns_.find(name);
  if (found == prog_->fns_.end() || found->second.decl->is_extern) {
    error(Code::E0303,
          at,
          "autocast takes a fn declared in the program",
          "`" + name + "` is " +
              (found == prog_->fns_.end() ? "a builtin" : "an extern fn"))
        .help("write a fn that calls it: `fn f(...) = " + name + "(...)`");
    return std::nullopt;
  }
  FnInfo& f = found->second;
  if (f.autocast)
    return *f.autocast == to ? std::optional(f.name) : std::nullopt;
  if (!f.dtype_vars.empty()) {
    error(Code::E0303,
          at,
          "autocast of `" + name + "`, which is generic over a dtype",
          "its instance is chosen by its arguments, which autocast cannot "
          "see")
        .help("autocast a fn whose dtypes are written out, which calls `" +
              name + "`");
    return std::nullopt;
  }
  const std::string key = types::dtype_name(to);
  if (auto it = f.autocast_instances.find(key);
      it != f.autocast_instances.end())
    return it->second;
  auto decl = std::make_unique<ast::FnDecl>(ast::clone(*f.decl));
  AxisScope scope;
  scope.dtypes = sig_scopes_[f.name].dtypes;  // a dtype instance's bindings
  const std::string inst_name = f.name + "[autocast=" + key + "]";
  FnInfo inst = resolve_signature(inst_name, *decl, scope);
  inst.instance_of = f.source_name();
  inst.dtype_vars.clear();
  inst.autocast = to;
  f.autocast_instances[key] = inst_name;
  sig_scopes_[inst_name] = std::move(scope);
  prog_->fns_[inst_name] = std::move(inst);
  prog_->instance_decls_.push_back(std::move(decl));
  ensure_checked(prog_->fns_.at(inst_name));
  return inst_name;
}

Type Checker::as_declared(const Type& declared, const Type& arg) {
  if (declared.kind == TK::Tuple && arg.kind == TK::Tuple &&
      declared.elems.size() == arg.elems.size()) {
    Type r = arg;
    for (size_t i = 0; i < r.elems.size(); ++i)
      r.elems[i] = as_declared(declared.elems[i], arg.elems[i]);
    return r;
  }
  if (declared.kind != TK::Tensor || arg.kind != TK::Tensor ||
      !types::is_float(declared.dtype) || !types::is_float(arg.dtype))
    return arg;
  Type r = arg;
  r.dtype = declared.dtype;
  return r;
}

std::optional<types::DType> Checker::autocast_target(const ops::OpDef& op,
                                                     types::DType to) {
  switch (op.autocast) {
    case ops::Autocast::Lower:
      return to;
    case ops::Autocast::F32:
      return types::DType::F32;
    case ops::Autocast::Keep:
      break;
  }
  return std::nullopt;
}

void Checker::autocast_type(Type& t, types::DType target) {
  if (t.kind == TK::Tensor && types::is_float(t.dtype)) t.dtype = target;
  // A generic model's params follow its dtype (the stdlib's Linear).
  if (t.kind == TK::Model && t.model && !t.model->dtype_param.empty())
    t.model_dtype = target;
}

const FnInfo* instance_for(const Program& prog,
                           const FnInfo& fn,
                           const std::vector<types::DType>& bound) {
  if (fn.dtype_vars.empty()) return &fn;
  bool all_f32 = true;
  for (types::DType d : bound) all_f32 &= d == types::DType::F32;
  if (all_f32) return &fn;
  auto it = fn.instances.find(instance_key(bound));
  return it == fn.instances.end() ? nullptr : prog.fn(it->second);
}

}  // namespace ss::check
