// Models: Model.init(seed=) draws every field from (seed, field path) with
// its initialiser (library.md, Initialisers); copy(m).
#include "interp/builtins/models.h"

#include <cmath>
#include <string_view>
#include <unordered_map>

#include "interp/eval/runtime_table.h"
#include "ops/api.h"
#include "ops/core/philox.h"

namespace ss::builtins {

using namespace ss::eval;

using VK = Value::Kind;
using TK = types::Type::Kind;

namespace {

const ast::ModelDecl* find_decl(const check::Program& p,
                                const std::string& name) {
  const ast::ModelDecl* found = nullptr;
  for (const ast::Module& m : p.modules())
    for (const ast::ModelDecl& d : m.models)
      if (d.name == name) found = &d;  // the last one shadows (stdlib first)
  return found;
}

// fan_in / fan_out of a field, stack axes excluded. Our weights are laid
// out [I O] (x @ w), so a 2-d field has fan_in = shape[0]; a conv kernel
// [O C kh kw] has fan_in = C·kh·kw as in torch.
std::pair<double, double> fans(const ops::Shape& s) {
  if (s.empty()) return {1, 1};
  if (s.size() == 1) return {double(s[0]), double(s[0])};
  if (s.size() == 2) return {double(s[0]), double(s[1])};
  double rf = 1;
  for (size_t i = 2; i < s.size(); ++i) rf *= double(s[i]);
  return {double(s[1]) * rf, double(s[0]) * rf};
}

struct Initialiser {
  std::string name;
  std::map<std::string, double> args;
};

// Evaluates the field's `= normal(std=1/sqrt(D))` with the model's dims.
Initialiser read_init(Interpreter& in, const ast::Expr& e, Frame& f) {
  Initialiser init;
  const check::ExprInfo* info = in.program().info(&e);
  if (e.kind != ast::Expr::Kind::Call || !info || !info->resolution.op)
    in.fail("ValueError", e.span, "a field's initialiser must be a call");
  const ops::OpDef* op = info->resolution.op;
  init.name = op->name;
  for (size_t g = 0; g < e.args.size(); ++g) {
    int k = g < info->arg_params.size() ? info->arg_params[g] : -1;
    if (k < 0) continue;
    Value v = in.eval(*e.args[g].value, f);
    init.args[op->params[k].name] = v.number();
  }
  return init;
}

ops::Tensor draw(Interpreter& in,
                 const Initialiser& init,
                 const ops::Shape& shape,
                 size_t stack,
                 types::DType dtype,
                 uint64_t key,
                 diag::Span at) {
  ops::Shape core(shape.begin() + stack, shape.end());
  auto [fan_in, fan_out] = fans(core);
  auto arg = [&](const char* n, double d) {
    auto it = init.args.find(n);
    return it == init.args.end() ? d : it->second;
  };
  auto normal = [&](double std, double mean) {
    ops::Tensor z = ops::random_normal(shape, types::DType::F64, key, 0);
    return ops::add(ops::mul(z, ops::scalar_like(std, z)),
                    ops::scalar_like(mean, z));
  };
  auto uniform = [&](double lo, double hi) {
    ops::Tensor u = ops::random_uniform(shape, types::DType::F64, key, 0);
    return ops::add(ops::mul(u, ops::scalar_like(hi - lo, u)),
                    ops::scalar_like(lo, u));
  };
  ops::Tensor t;
  const std::string& n = init.name;
  if (n == "normal") {
    double std = arg("std", 1.0);
    if (std < 0) in.fail("ValueError", at, "normal: std= must be >= 0");
    t = normal(std, arg("mean", 0.0));
  } else if (n == "uniform") {
    double lo = arg("lo", 0.0), hi = arg("hi", 1.0);
    if (!(hi >= lo)) in.fail("ValueError", at, "uniform: needs lo <= hi");
    t = uniform(lo, hi);
  } else if (n == "zeros") {
    t = ops::Tensor::zeros(shape, types::DType::F64);
  } else if (n == "ones") {
    t = ops::Tensor::full(shape, 1.0, types::DType::F64);
  } else if (n == "constant") {
    t = ops::Tensor::full(shape, arg("v", 0.0), types::DType::F64);
  } else if (n == "xavier") {
    // torch.nn.init.xavier_uniform_ (gain 1).
    double a = std::sqrt(6.0 / (fan_in + fan_out));
    t = uniform(-a, a);
  } else if (n == "kaiming") {
    // torch.nn.init.kaiming_normal_(mode='fan_in', nonlinearity='relu').
    t = normal(std::sqrt(2.0 / fan_in), 0.0);
  } else if (n == "truncated_normal") {
    // trunc_normal_(std, a=-2std, b=2std): draws outside are redrawn from
    // the next streams, so the result stays a pure function of the key.
    double std = arg("std", 1.0);
    ops::Tensor z = ops::random_normal(shape, types::DType::F64, key, 0);
    std::vector<double> v = z.to_doubles();
    for (uint64_t stream = 1; stream < 64; ++stream) {
      bool any = false;
      ops::Tensor r;
      for (size_t i = 0; i < v.size(); ++i)
        if (std::fabs(v[i]) > 2.0) {
          if (!any)
            r = ops::random_normal(shape, types::DType::F64, key, stream);
          any = true;
          v[i] = r.at(static_cast<int64_t>(i));
        }
      if (!any) break;
    }
    for (double& x : v) x = std::clamp(x, -2.0, 2.0) * std;
    t = ops::Tensor::from_doubles(shape, v, types::DType::F64);
  } else {
    in.fail("ValueError", at, "unknown initialiser `" + n + "`");
  }
  return ops::cast(t, dtype);
}

void init_fields(Interpreter& in,
                 const types::Type& mt,
                 const std::string& prefix,
                 uint64_t seed,
                 ModelStore& store,
                 diag::Span at) {
  const types::ModelInfo* info = mt.model;
  const ast::ModelDecl* decl = find_decl(in.program(), info->name);
  // The model's dim parameters are host ints in its initialisers.
  Frame f;
  f.scopes.emplace_back();
  Frame sizes;
  for (size_t i = 0; i < info->dim_params.size() && i < mt.model_args.size();
       ++i)
    f.declare(info->dim_params[i],
              Value::integer(in.axis_size(mt.model_args[i], sizes, at)));
  // The declaration's fields by name, once: a scan per field was
  // quadratic (a model of 100,000 fields took 43 s to init).
  std::unordered_map<std::string_view, const ast::ModelField*> declared;
  for (const ast::ModelField& x : decl->fields) declared[x.name] = &x;
  for (const types::FieldInfo& fi : info->fields) {
    types::Type ft = types::model_field_type(mt, fi);
    std::string path = prefix + fi.name;
    if (ft.kind == TK::Model) {
      init_fields(in, ft, path + ".", seed, store, at);
      continue;
    }
    const ast::ModelField* af = declared.at(fi.name);
    Initialiser init = read_init(in, *af->init, f);
    ops::Shape shape = runtime_shape(in, ft, sizes, at);
    try {
      ops::check_allocatable(shape,
                             ft.dtype,
                             info->name + "." + path + " " +
                                 ops::shape_string(shape) + " " +
                                 types::dtype_name(ft.dtype));
    } catch (const ops::OpError& e) {
      in.fail("ValueError", at, e.what());
    }
    size_t stack = ft.shape.size() - fi.type.shape.size();
    uint64_t key = ops::philox::key_for(seed, path.c_str());
    // Drawn on the host by the same stream as on the CPU, then placed
    // (Note [Values on a GPU] in interp/devices/one_device.cpp).
    store.tensors[path] = draw(in, init, shape, stack, ft.dtype, key, at)
                              .to(placement_of(in).device);
    store.order.push_back(path);
    store.is_buffer[path] = fi.buffer;
  }
}

Value init(BuiltinCall& c) {
  const Value& m = c.arg(0);
  if (m.kind != VK::Type || m.type->kind != TK::Model)
    c.fail("ValueError", "init needs a model type");
  int64_t seed = c.integer(1, 0);
  // The checker's type carries dtype= (Note [Dtype variables]).
  types::Type mt = *m.type;
  const types::Type& r = c.result_type();
  if (r.kind == TK::Model && r.model == mt.model)
    mt.model_dtype = r.model_dtype;
  return init_model(c.in, mt, static_cast<uint64_t>(seed), c.span);
}

Value copy(BuiltinCall& c) {
  const Value& v = c.arg(0);
  if (v.kind != VK::Model) return v;  // tensors are values already
  auto* m = v.as<ModelRef>();
  auto store = std::make_shared<ModelStore>();
  store->info = m->type.model;
  store->args = m->type.model_args;
  store->whole = m->whole_shapes();  // a worker's pieces stay pieces
  store->heads = m->heads_axes();    // and its heads its heads
  for (const std::string& p : m->paths(false)) {
    store->tensors[p] = m->get(p).clone();
    store->order.push_back(p);
    store->is_buffer[p] = m->store->is_buffer[m->prefix + p];
  }
  auto ref = std::make_shared<ModelRef>();
  ref->store = store;
  ref->type = m->type;
  return Value::object(VK::Model, ref);
}

// Each param of m from p's same path, as an assignment `m.w = p.w` (the
// model's copy on the workers is stale then), in the layout both share: a
// shard params rank's pieces, a split H rank's heads.
Value set_params(BuiltinCall& c) {
  auto* m = c.arg(0).as<ModelRef>();
  auto* p = c.arg(1).as<ModelRef>();
  for (const std::string& path : m->paths(true)) {
    ops::Tensor v = ops::stop_grad(p->get(path));
    const ops::Tensor old = m->get(path);
    if (v.shape() != old.shape())
      c.fail("ShapeError",
             "param `" + path + "` is " + ops::shape_string(old.shape()) +
                 ", the new value " + ops::shape_string(v.shape()));
    m->set(path, v.dtype() == old.dtype() ? v : ops::cast(v, old.dtype()));
  }
  return Value::unit();
}

}  // namespace

Value init_model(Interpreter& in,
                 const types::Type& mt,
                 uint64_t seed,
                 diag::Span at) {
  auto store = std::make_shared<ModelStore>();
  store->info = mt.model;
  store->args = mt.model_args;
  init_fields(in, mt, "", seed, *store, at);
  auto ref = std::make_shared<ModelRef>();
  ref->store = store;
  ref->type = mt;
  return Value::object(Value::Kind::Model, ref);
}

std::vector<RuntimeEntry> lib_models() {
  return {{"init", init}, {"copy", copy}, {"set_params", set_params}};
}

}  // namespace ss::builtins
