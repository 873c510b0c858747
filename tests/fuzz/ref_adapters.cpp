// The oracle's adapters (ref_adapters.h): the argument reader and the
// elementwise family, generated from ops/core/elementwise.def as ref's
// functions are.
#include "tests/fuzz/ref_adapters.h"

#include <iterator>

#include "ops/registry/registry.h"
#include "ref/ref_ops.h"

namespace ss::fuzz {

using ops::Tensor;
using types::DType;

size_t RefArgs::index(std::string_view name) {
  for (size_t i = 0; i < op_.params.size(); ++i)
    if (op_.params[i].name == name) return i;
  throw StaleAdapter(std::string("the adapter of ") + op_.name +
                     " reads a parameter `" + std::string(name) +
                     "` its entry does not have");
}

bool RefArgs::has(std::string_view name) {
  return ctx_.has(index(name));
}

Tensor RefArgs::t(std::string_view name) {
  Tensor x = ctx_.tensor(index(name));
  read_.push_back(x);
  return x;
}

double RefArgs::number(std::string_view name, double dflt) {
  return has(name) ? ctx_.number(index(name)) : dflt;
}

int64_t RefArgs::integer(std::string_view name, int64_t dflt) {
  return has(name) ? ctx_.integer(index(name)) : dflt;
}

bool RefArgs::flag(std::string_view name, bool dflt) {
  return ctx_.flag(index(name), dflt);
}

std::string RefArgs::str(std::string_view name, const std::string& dflt) {
  return has(name) ? ctx_.str(index(name)) : dflt;
}

std::vector<Tensor> RefArgs::tensors(std::string_view name) {
  std::vector<Tensor> xs = ctx_.tensors(index(name));
  read_.insert(read_.end(), xs.begin(), xs.end());
  return xs;
}

std::optional<std::vector<int>> RefArgs::over(std::string_view name) {
  return ctx_.axes(index(name));
}

int RefArgs::one_axis(const Tensor& x) {
  std::optional<std::vector<int>> a = over();
  if (!a) {
    if (x.rank() != 1) decline("over= not given for a rank other than 1");
    return 0;
  }
  if (a->size() != 1) decline("over= names several axes");
  return (*a)[0];
}

int64_t RefArgs::size(std::string_view name) {
  return ctx_.size(index(name));
}

int64_t RefArgs::axis_size(std::string_view name) {
  return ctx_.axis_size(index(name));
}

ops::Shape RefArgs::shape_arg(std::string_view name) {
  return ctx_.shape_arg(index(name));
}

DType RefArgs::dtype_arg(std::string_view name) {
  return ctx_.dtype_arg(index(name));
}

bool RefArgs::training(std::string_view name) {
  return ctx_.training(index(name));
}

ops::RandomStream RefArgs::random(std::string_view name) {
  return ctx_.random(index(name));
}

Tensor RefArgs::model_field(std::string_view name, const std::string& path) {
  Tensor x = ctx_.model_field(index(name), path);
  read_.push_back(x);
  return x;
}

const types::Type& RefArgs::arg_type(std::string_view name) {
  return ctx_.arg_type(index(name));
}

Tensor f64(const Tensor& t) {
  return t.dtype() == DType::F64 ? t : ref::to(t, DType::F64);
}

Tensor abs64(const Tensor& t) {
  return ref::abs(f64(t));
}

namespace {

using Unary = Tensor (*)(const Tensor&);
using Binary = Tensor (*)(const Tensor&, const Tensor&);

Adapter unary(Unary f, Tol tol = Tol::Elem) {
  return [f, tol](RefArgs& a) {
    Want w{{f(a.t("x"))}};
    w.tol = tol;
    return w;
  };
}

Adapter binary(Binary f) {
  return [f](RefArgs& a) {
    Tensor x = a.t("a");
    return Want{{f(x, a.t("b"))}};
  };
}

}  // namespace

void elementwise_adapters(std::map<std::string, Adapter>& m) {
  // Every row of the .def but the rounding helpers, which are no builtins.
#define SS_UNARY_OP(Enum, name, doc) m[#name] = unary(ref::name);
#define SS_BINARY_OP(Enum, name, doc) m[#name] = binary(ref::name);
#define SS_UNARY_ROUNDING(Enum, name, doc, cpu)
#include "ops/core/elementwise.def"
  // A row may be an API helper with no builtin of its own (erf).
  for (auto it = m.begin(); it != m.end();)
    it = ops::find_op(it->first) ? std::next(it) : m.erase(it);
  // Transcendental composites: ref/tests' kBig (ref_ops_test.cpp).
  m["silu"] = unary(ref::silu, Tol::Long);
  m["softplus"] = unary(ref::softplus, Tol::Long);
  m["gelu"] = [](RefArgs& a) {
    Tensor x = a.t("x");
    Want w{{ref::gelu(x, a.str("approximate", "none"))}};
    w.tol = Tol::Long;
    return w;
  };
  m["where"] = [](RefArgs& a) {
    Tensor c = a.t("c"), x = a.t("a");
    return Want{{ref::where(c, x, a.t("b"))}};
  };
  m["clip"] = [](RefArgs& a) {
    Tensor x = a.t("x"), lo = a.t("lo");
    return Want{{ref::clip(x, lo, a.t("hi"))}};
  };
  m["masked_fill"] = [](RefArgs& a) {
    Tensor x = a.t("x"), mask = a.t("mask");
    return Want{{ref::masked_fill(x, mask, a.number("v", 0))}};
  };
}

const std::map<std::string, Adapter>& ref_adapters() {
  static const std::map<std::string, Adapter> table = [] {
    std::map<std::string, Adapter> m;
    elementwise_adapters(m);
    reduction_adapters(m);
    shape_adapters(m);
    nn_adapters(m);
    return m;
  }();
  return table;
}

}  // namespace ss::fuzz
