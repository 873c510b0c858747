// Global declarations: names, devices, dims, records, models, signatures.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "interp/check/checker_impl.h"
#include "interp/check/program_options.h"

namespace ss::check {

using diag::Code;

namespace {

// Where a global name was declared, for E0202's note.
struct Declared {
  diag::Span span;
  bool stdlib;
};

}  // namespace

void Checker::collect_globals() {
  std::map<std::string, Declared> seen;
  auto declare = [&](const std::string& name,
                     diag::Span span,
                     bool stdlib,
                     const char* what) -> bool {
    auto it = seen.find(name);
    if (it != seen.end()) {
      if (it->second.stdlib && !stdlib) {
        // A user declaration shadows the standard library's.
        it->second = {span, false};
        return true;
      }
      error(Code::E0202,
            span,
            std::string(what) + " `" + name + "` is declared twice",
            "declared again here")
          .note("first declared here", it->second.span);
      return false;
    }
    seen[name] = {span, stdlib};
    return true;
  };
  for (const ast::Module& m : prog_->modules()) {
    bool stdlib = m.file == stdlib_file_;
    for (const ast::DimDecl& d : m.dims)
      if (declare(d.name, d.name_span, stdlib, "dim")) {
        data_decls_.erase(d.name), model_decls_.erase(d.name),
            fn_decls_.erase(d.name);
        dim_decls_[d.name] = &d;
      }
    for (const ast::DataDecl& d : m.datas)
      if (declare(d.name, d.name_span, stdlib, "data record")) {
        dim_decls_.erase(d.name), model_decls_.erase(d.name),
            fn_decls_.erase(d.name);
        data_decls_[d.name] = &d;
      }
    for (const ast::ModelDecl& d : m.models)
      if (declare(d.name, d.name_span, stdlib, "model")) {
        dim_decls_.erase(d.name), data_decls_.erase(d.name),
            fn_decls_.erase(d.name);
        model_decls_[d.name] = &d;
        if (stdlib)
          stdlib_names_.insert(d.name);
        else
          stdlib_names_.erase(d.name);
      }
    for (const ast::FnDecl& d : m.fns)
      if (declare(d.name, d.name_span, stdlib, "fn")) {
        dim_decls_.erase(d.name), data_decls_.erase(d.name),
            model_decls_.erase(d.name);
        fn_decls_[d.name] = &d;
        if (stdlib)
          stdlib_names_.insert(d.name);
        else
          stdlib_names_.erase(d.name);
      }
  }
  // Mesh axes live among axes; they may not collide with each other.
  std::map<std::string, diag::Span> mesh_seen;
  const ast::MeshDecl* first_mesh = nullptr;
  for (const ast::Module& m : prog_->modules())
    for (const ast::MeshDecl& md : m.meshes) {
      if (first_mesh) {
        error(Code::E0202,
              md.span,
              "a second `mesh` declaration",
              "declared again here")
            .note("the first mesh", first_mesh->span);
        continue;
      }
      first_mesh = &md;
      for (const ast::MeshAxisDecl& a : md.axes) {
        if (mesh_seen.count(a.name)) {
          error(Code::E0202,
                a.span,
                "mesh axis `" + a.name + "` is declared twice",
                "again here")
              .note("first declared here", mesh_seen[a.name]);
          continue;
        }
        if (a.size < 1)
          error(Code::E0303,
                a.span,
                "mesh axis `" + a.name + "` must have a positive size",
                "size " + std::to_string(a.size));
        mesh_seen[a.name] = a.span;
        prog_->mesh_.push_back({a.name, a.size});
      }
    }
}

void Checker::resolve_devices() {
  const ast::DevicesDecl* first = nullptr;
  for (const ast::Module& m : prog_->modules())
    for (const ast::DevicesDecl& d : m.devices) {
      if (first) {
        error(Code::E0202,
              d.span,
              "a second `devices` declaration",
              "declared again here")
            .note("a program has at most one device list", first->span);
        continue;
      }
      first = &d;
      if (d.kind != "cpu" && d.kind != "cuda") {
        error(Code::E0201,
              d.kind_span,
              "unknown device kind `" + d.kind + "`",
              "not cpu or cuda")
            .help(
                "write `devices cpu`, `devices cpu[0 1 2]` or "
                "`devices cuda[0 1 2]`");
        continue;
      }
      prog_->devices_.kind = d.kind;
      prog_->devices_.ids = d.ids;
      std::set<int64_t> ids;
      for (int64_t id : d.ids)
        if (!ids.insert(id).second)
          error(Code::E0202,
                d.span,
                "device " + std::to_string(id) + " is listed twice",
                "in this device list");
      for (const ast::DeviceOption& o : d.options) {
        prog_->devices_.options.push_back(o.words);
        const bool deterministic =
            o.words.size() == 1 && o.words[0] == "deterministic";
        if (deterministic) prog_->devices_.deterministic = true;
        bool known = !o.words.empty() &&
                     ((o.words[0] == "shard" && o.words.size() == 2 &&
                       o.words[1] == "params") ||
                      o.words[0] == "split" || deterministic);
        if (!known)
          error(Code::E0201,
                o.span,
                "unknown device option",
                "not `shard params`, `split NAME` or `deterministic`")
              .help(
                  "the options are `shard params`, `split H` and "
                  "`deterministic`");
      }
    }
  if (!opts_.devices_override.empty()) {
    DeviceList dl = prog_->devices_;
    if (parse_device_spec(opts_.devices_override, dl)) {
      dl.options = prog_->devices_.options;
      prog_->devices_ = dl;
    }
    // A malformed --devices is a usage error the driver reports first.
  }
  if (opts_.deterministic) prog_->devices_.deterministic = true;
}

void Checker::resolve_dims() {
  // `-D NAME=SIZE` for a name the program does not declare would change
  // nothing: a typo that must not pass silently. There is no `.ss` line
  // to point at.
  std::vector<std::string> dim_names;
  for (const auto& [n, _] : dim_decls_) dim_names.push_back(n);
  for (const auto& [n, v] : opts_.dim_overrides) {
    if (dim_decls_.count(n)) continue;
    diag::Diagnostic& d = error(
        Code::E0201,
        {},
        "-D " + n + "=" + std::to_string(v) + " names no dim of the program");
    d.located = false;
    if (std::string s = suggest(n, dim_names); !s.empty())
      d.help("did you mean -D " + s + "=" + std::to_string(v) + "?");
    else if (!dim_names.empty()) {
      std::string all;
      for (const std::string& x : dim_names)
        all += (all.empty() ? "" : ", ") + x;
      d.note("its dims are " + all);
    } else {
      d.note("it declares no dims");
    }
  }
  // Dims may refer to other dims: evaluate on demand, guarding cycles.
  std::set<std::string> active;
  std::function<void(const std::string&)> eval = [&](const std::string& n) {
    if (prog_->dims_.count(n) || active.count(n)) return;
    const ast::DimDecl* d = dim_decls_.at(n);
    auto ov = opts_.dim_overrides.find(n);
    if (ov != opts_.dim_overrides.end()) {
      prog_->dims_[n] = ov->second;
      return;
    }
    active.insert(n);
    // Evaluate dims this one names first.
    std::function<void(const ast::Expr&)> deps = [&](const ast::Expr& e) {
      if (e.kind == ast::Expr::Kind::Name && dim_decls_.count(e.name)) {
        if (active.count(e.name)) {
          error(Code::E0202,
                e.span,
                "dim `" + n + "` is defined in terms of itself",
                "`" + e.name + "` depends on `" + n + "`");
          return;
        }
        eval(e.name);
      }
      if (e.lhs) deps(*e.lhs);
      if (e.rhs) deps(*e.rhs);
      for (const auto& x : e.elems) deps(*x);
      for (const auto& a : e.args) deps(*a.value);
    };
    if (d->value) deps(*d->value);
    auto v = d->value ? const_int(*d->value) : std::nullopt;
    if (!v || *v < 1) {
      if (d->value)
        error(Code::E0303,
              d->value->span,
              "dim `" + n +
                  "` must be a positive integer known before the "
                  "program runs",
              v ? "this is " + std::to_string(*v) : "not a constant integer")
            .help("write a size such as `dim " + n + " = 784`");
      prog_->dims_[n] = 1;  // keep going with a placeholder
    } else {
      prog_->dims_[n] = *v;
    }
    active.erase(n);
  };
  for (const auto& [name, d] : dim_decls_) eval(name);
}

namespace {

// The representable range of a dtype, for E0501.
void dtype_range(types::DType d, double& lo, double& hi, bool& integral) {
  integral = types::is_int(d);
  switch (d) {
    case types::DType::I32:
      lo = -2147483648.0, hi = 2147483647.0;
      break;
    case types::DType::I64:
      lo = -9.2233720368547758e18, hi = 9.2233720368547758e18;
      break;
    case types::DType::F16:
      lo = -65504.0, hi = 65504.0;
      break;
    case types::DType::BF16:
      lo = -3.3895313892515355e38, hi = 3.3895313892515355e38;
      break;
    case types::DType::F32:
      lo = -3.4028234663852886e38, hi = 3.4028234663852886e38;
      break;
    default:
      lo = -std::numeric_limits<double>::infinity();
      hi = std::numeric_limits<double>::infinity();
  }
}

}  // namespace

void Checker::resolve_records() {
  for (const auto& [name, d] : data_decls_) {
    auto info = std::make_unique<types::RecordInfo>();
    info->name = name;
    info->span = d->name_span;
    AxisScope scope;
    std::set<std::string> fields;
    for (const ast::DataField& f : d->fields) {
      if (!fields.insert(f.name).second) {
        error(Code::E0202,
              f.name_span,
              "field `" + f.name + "` of `" + name + "` is declared twice",
              "again here");
        continue;
      }
      types::FieldInfo fi;
      fi.name = f.name;
      fi.span = f.name_span;
      fi.type = resolve_type(f.type, scope, /*fresh_vars=*/true);
      if (!fi.type.is_error() && fi.type.kind != TK::Tensor) {
        error(Code::E0303,
              f.type.span,
              "field `" + f.name + "` of a data record must be a tensor",
              "this is " + fi.type.str())
            .help("a record's fields are tensors: `img: [D]`, `label: i64`");
        fi.type = Type::error();
      }
      if (f.domain && fi.type.kind == TK::Tensor) {
        const ast::Domain& dom = *f.domain;
        auto lo = const_float(*dom.lo), hi = const_float(*dom.hi);
        types::DType dt = fi.type.dtype;
        std::string dts = types::dtype_name(dt);
        if (!lo || !hi) {
          error(Code::E0501,
                dom.span,
                "the domain of `" + f.name + "` must be made of constants",
                "not a constant range")
              .help("write numbers or dims: `in 0..C`, `in 0.0..=1.0`");
        } else if (dt == types::DType::Bool) {
          error(Code::E0501,
                dom.span,
                "a bool field cannot have a domain: `" + f.name + "` is bool",
                "domain of a bool field");
        } else {
          double rlo, rhi;
          bool integral;
          dtype_range(dt, rlo, rhi, integral);
          bool int_bounds = std::floor(*lo) == *lo && std::floor(*hi) == *hi;
          bool lit_float = dom.lo->kind == ast::Expr::Kind::Float ||
                           dom.hi->kind == ast::Expr::Kind::Float;
          if (integral && (!int_bounds || lit_float)) {
            error(Code::E0501,
                  dom.span,
                  "the domain of `" + f.name +
                      "` has non-integer bounds, "
                      "but its dtype is " +
                      dts,
                  "a range of floats for an " + dts + " field")
                .help(
                    "write integer bounds (`in 0..10`) or make the field "
                    "a float");
          } else if (*lo < rlo || *hi > rhi) {
            error(Code::E0501,
                  dom.span,
                  "the domain of `" + f.name + "` does not fit " + dts,
                  "outside " + dts + "'s range");
          } else if (*lo > *hi || (!dom.inclusive && *lo == *hi)) {
            error(Code::E0501,
                  dom.span,
                  "the domain of `" + f.name + "` is empty",
                  dom.inclusive ? "lo > hi" : "lo >= hi in a half-open range");
          } else {
            fi.has_domain = true;
            fi.domain_lo = lo;
            fi.domain_hi = hi;
            fi.domain_inclusive = dom.inclusive;
          }
        }
      }
      if (f.pad) check_pad(f, fi);
      info->fields.push_back(std::move(fi));
    }
    prog_->records_[name] = std::move(info);
  }
}

// `pad=v`: a constant of the field's dtype. It may lie outside the
// domain (a pad is masked: -1 beside labels 0..V is the usual choice).
void Checker::check_pad(const ast::DataField& f, types::FieldInfo& fi) {
  std::optional<double> v = const_float(*f.pad);
  types::DType dt = fi.type.dtype;
  std::string dts = types::dtype_name(dt);
  if (!v) {
    error(Code::E0501,
          f.pad->span,
          "the pad value of `" + f.name + "` must be a constant",
          "not a constant")
        .help("write a number: `pad=0`, `pad=-1`");
    return;
  }
  double lo, hi;
  bool integral;
  dtype_range(dt, lo, hi, integral);
  if (dt == types::DType::Bool ? (*v != 0 && *v != 1) : (*v < lo || *v > hi)) {
    error(Code::E0501,
          f.pad->span,
          "the pad value of `" + f.name + "` does not fit " + dts,
          "outside " + dts + "'s range");
  } else if (integral &&
             (std::floor(*v) != *v || f.pad->kind == ast::Expr::Kind::Float)) {
    error(Code::E0501,
          f.pad->span,
          "the pad value of `" + f.name +
              "` is not an integer, but its dtype "
              "is " +
              dts,
          "a float pad for an " + dts + " field");
  } else {
    fi.pad = *v;
  }
}

void Checker::resolve_models() {
  // Create every ModelInfo first so fields may name models declared later.
  for (const auto& [name, d] : model_decls_) {
    auto info = std::make_unique<types::ModelInfo>();
    info->name = name;
    info->span = d->name_span;
    info->is_stdlib = stdlib_names_.count(name) > 0;
    for (const ast::NameTarget& p : d->dim_params)
      info->dim_params.push_back(p.name);
    if (d->dtype_param) info->dtype_param = d->dtype_param->name;
    prog_->models_[name] = std::move(info);
  }
  for (const auto& [name, d] : model_decls_) {
    types::ModelInfo& info = *prog_->models_[name];
    AxisScope scope;
    for (const ast::NameTarget& p : d->dim_params)
      scope.names[p.name] = Axis::dim(p.name, -1);
    // Note [Dtype variables]: a generic model's fields are resolved with
    // its dtype as f32, and those that name it follow the model type's.
    if (d->dtype_param) {
      const ast::NameTarget& t = *d->dtype_param;
      if (types::dtype_from_name(t.name) || prog_->model(t.name) ||
          prog_->record(t.name))
        error(Code::E0202,
              t.span,
              "`" + t.name + "` is already a dtype, model or record",
              "a dtype parameter needs a name of its own")
            .help("write `model " + name +
                  (d->dim_params.empty() ? "" : "[...]") + " T:`");
      else
        scope.dtypes[t.name] = types::DType::F32;
    }
    std::set<std::string> fields;
    for (const ast::ModelField& f : d->fields) {
      if (!fields.insert(f.name).second) {
        error(Code::E0202,
              f.name_span,
              "field `" + f.name + "` of `" + name + "` is declared twice",
              "again here");
        continue;
      }
      types::FieldInfo fi;
      fi.name = f.name;
      fi.span = f.name_span;
      fi.buffer = f.buffer;
      fi.type = resolve_type(f.type, scope, /*fresh_vars=*/false);
      fi.follows_dtype =
          d->dtype_param && dtype_word_of(f.type) == d->dtype_param->name;
      if (fi.type.kind == TK::Model) {
        if (fi.type.model == &info)
          error(Code::E0202,
                f.type.span,
                "model `" + name + "` contains itself",
                "field `" + f.name + "`");
        if (f.init)
          error(Code::E0303,
                f.init->span,
                "sub-model field `" + f.name + "` takes no initialiser",
                "its own fields have initialisers")
              .help("remove `= ...`: `" + fi.type.model->name +
                    ".init` draws each field");
      } else if (fi.type.kind == TK::Tensor) {
        if (!f.init) {
          error(Code::E0101,
                f.type.span,
                "field `" + f.name + "` needs an initialiser",
                "expected `= normal(std=...)`, `= zeros()`, ...");
        } else {
          FnCtx c;
          c.values.push();
          // A model's dim parameters are host ints in its initialisers.
          for (const ast::NameTarget& p : d->dim_params)
            c.values.declare(p.name, {Type::of(TK::Int), p.span, false, false});
          Type it = check_expr(*f.init, c);
          if (!it.is_error() && it.kind != TK::Init)
            error(Code::E0303,
                  f.init->span,
                  "the initialiser of `" + f.name +
                      "` must be an init "
                      "function",
                  "this is " + it.str())
                .help(
                    "use normal(std=), uniform(lo, hi), zeros(), ones(), "
                    "constant(v), xavier(), kaiming() or "
                    "truncated_normal(std=)");
        }
      } else if (!fi.type.is_error()) {
        error(Code::E0303,
              f.type.span,
              "field `" + f.name + "` of a model must be a tensor or a model",
              "this is " + fi.type.str());
        fi.type = Type::error();
      }
      info.fields.push_back(std::move(fi));
    }
  }
}

void Checker::resolve_signatures() {
  for (const auto& [name, d] : fn_decls_) {
    AxisScope scope;
    FnInfo fn = resolve_signature(name, *d, scope);
    if (d->is_extern) check_extern(*d);
    prog_->fns_[name] = std::move(fn);
    sig_scopes_[name] = std::move(scope);
  }
  make_instances();
}

FnInfo Checker::resolve_signature(const std::string& name,
                                  const ast::FnDecl& decl,
                                  AxisScope& scope) {
  const ast::FnDecl* d = &decl;
  FnInfo fn;
  fn.name = name;
  fn.decl = d;
  fn.is_stdlib = stdlib_names_.count(d->name) > 0;
  std::set<std::string> seen;
  for (const ast::Param& p : d->params) {
    if (!seen.insert(p.name).second)
      error(Code::E0202,
            p.name_span,
            "parameter `" + p.name + "` of `" + d->name + "` is declared twice",
            "again here");
    if (dim_decls_.count(p.name))
      error(Code::E0202,
            p.name_span,
            "parameter `" + p.name + "` shadows the dim `" + p.name + "`",
            "a local may not shadow a dim")
          .help("rename the parameter");
    ParamInfo pi;
    pi.name = p.name;
    pi.mut = p.mut;
    pi.decl = &p;
    pi.has_default = p.default_value != nullptr;
    pi.type = p.type ? resolve_type(*p.type, scope, true) : Type::error();
    fn.params.push_back(std::move(pi));
    fn.param_dtype_var.push_back(p.type ? dtype_word_of(*p.type) : "");
  }
  const size_t param_vars = scope.dtype_vars.size();
  if (d->result) {
    fn.has_result = true;
    fn.result = resolve_type(*d->result, scope, true);
  } else {
    fn.result = Type::of(TK::Unit);
  }
  for (size_t k = param_vars; k < scope.dtype_vars.size(); ++k) {
    const std::string& v = scope.dtype_vars[k];
    error(Code::E0201,
          scope.dtype_var_spans[v],
          "unknown type `" + v + "`",
          "not a dtype, model or record, nor a dtype variable of a "
          "parameter")
        .help("a dtype variable is bound by the parameters' types (`x: [b D] " +
              v + "`); dtypes are f32 f64 bf16 f16 i32 i64 bool");
    fn.result = Type::error();  // reported: no cascade from the body
  }
  scope.dtype_vars.resize(param_vars);
  for (std::string& v : fn.param_dtype_var)
    if (!scope.dtypes.count(v) ||
        std::find(scope.dtype_vars.begin(), scope.dtype_vars.end(), v) ==
            scope.dtype_vars.end())
      v.clear();
  fn.dtype_vars = scope.dtype_vars;
  return fn;
}

void Checker::check_extern(const ast::FnDecl& f) {
  const std::string& target = f.extern_target;
  size_t dot = target.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == target.size()) {
    error(Code::E0204,
          f.extern_span,
          "extern fn `" + f.name + "` must name \"module.function\"",
          "found \"" + target + "\"");
    return;
  }
  std::string module = target.substr(0, dot);
  std::string function = target.substr(dot + 1);
  if (module == "nn") {
    if (!ops::find_op(function))
      error(Code::E0204,
            f.extern_span,
            "module `nn` has no function `" + function + "`",
            "not found in the interpreter's nn module");
    return;
  }
  if (opts_.host_externs) return;  // imported by the host at load
  if (module == "augment") {
    error(Code::E0204,
          f.extern_span,
          "module `augment` has no function `" + function + "`",
          "not found in the interpreter's augment module");
    return;
  }
  // A plugin: lib<module>.so on SS_PLUGIN_PATH (':'-separated).
  const char* env = std::getenv("SS_PLUGIN_PATH");
  std::string path = env ? env : "";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    std::error_code ec;
    if (!dir.empty() &&
        std::filesystem::exists(dir + "/lib" + module + ".so", ec))
      return;  // the function is looked up when the plugin loads
    start = end + 1;
  }
  error(Code::E0204,
        f.extern_span,
        "extern module `" + module + "` not found",
        "no interpreter module or plugin lib" + module + ".so")
      .note("plugins are looked up on SS_PLUGIN_PATH" +
            std::string(env ? " (" + path + ")" : " (unset)"));
}

}  // namespace ss::check
