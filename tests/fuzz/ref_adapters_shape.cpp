// The oracle's adapters (ref_adapters.h): the shape ops, the makers and
// the random draws. Each moves or makes values without arithmetic, so each
// is held to Tol::Elem (ref rounds each value once, as the op does).
#include <cmath>

#include "ref/ref_ops.h"
#include "tests/fuzz/ref_adapters.h"

namespace ss::fuzz {

using ops::Tensor;
using types::DType;

namespace {

// An index argument: one integer (a host int or a 0-d tensor) or an index
// tensor. The op reads a 0-d index as a number; a float index has no
// definition in ref.
Tensor index_of(RefArgs& a) {
  Tensor i = a.t("i");
  if (!types::is_int(i.dtype())) a.decline("a non-integer index");
  return i;
}

// A 0-d index as an int64: 2^63 - 1 reads as the double 2^63, which no
// int64 holds (a cast of it is undefined).
int64_t one_index(RefArgs& a, const Tensor& i) {
  const double v = i.item();
  if (!(std::fabs(v) < 9.2e18)) a.decline("an index past int64's range");
  return static_cast<int64_t>(v);
}

// A value past 2^53 that ref reads as a double.
void note_host_int(Want& w, double v) {
  if (std::fabs(v) > 9007199254740992.0) w.inexact_ints = true;
}

}  // namespace

void shape_adapters(std::map<std::string, Adapter>& m) {
  m["concat"] = [](RefArgs& a) {
    if (a.has("as")) a.decline("as= renames the axis");
    std::vector<Tensor> xs = a.tensors("xs");
    if (xs.empty()) a.decline("no tensors");
    return Want{{ref::concat(xs, a.one_axis(xs[0]))}};
  };
  m["stack"] = [](RefArgs& a) {
    std::vector<Tensor> xs = a.tensors("xs");
    if (xs.empty()) a.decline("no tensors");
    return Want{{ref::stack(xs, 0)}};
  };
  m["take"] = [](RefArgs& a) {
    Tensor x = a.t("x"), i = index_of(a);
    int axis = a.one_axis(x);
    if (i.rank() == 0) return Want{{ref::take(x, one_index(a, i), axis)}};
    return Want{{ref::take(x, i, axis)}};
  };
  m["put"] = [](RefArgs& a) {
    Tensor x = a.t("x"), i = index_of(a), v = a.t("v");
    int axis = a.one_axis(x);
    if (i.rank() == 0) return Want{{ref::put(x, one_index(a, i), v, axis)}};
    return Want{{ref::put(x, i, v, axis)}};
  };
  m["roll"] = [](RefArgs& a) {
    Tensor x = a.t("x");
    int64_t k = a.integer("k", 0);
    return Want{{ref::roll(x, k, a.one_axis(x))}};
  };
  m["pad"] = [](RefArgs& a) {
    Tensor x = a.t("x");
    int64_t to = a.size("to");
    Want w{{ref::pad(x, a.one_axis(x), to, a.number("value", 0))}};
    note_host_int(w, a.number("value", 0));
    return w;
  };
  m["reshape"] = [](RefArgs& a) {
    Tensor x = a.t("x");
    return Want{{ref::reshape(x, a.shape_arg("sizes"))}};
  };
  m["to"] = [](RefArgs& a) {
    Tensor x = a.t("x");
    return Want{{ref::to(x, a.dtype_arg("dtype"))}};
  };

  for (const char* op : {"zeros", "ones"})
    m[op] = [one = op[0] == 'o'](RefArgs& a) {
      if (!a.has("type")) a.decline("an initialiser");
      ops::Shape s = a.shape_arg("type");
      DType d = a.dtype_arg("type");
      return Want{{one ? ref::ones(s, d) : ref::zeros(s, d)}};
    };
  m["full"] = [](RefArgs& a) {
    ops::Shape s = a.shape_arg("type");
    DType d = a.dtype_arg("type");
    double v = a.number("v", 0);
    Want w{{ref::full(s, v, d)}};
    note_host_int(w, v);
    return w;
  };
  m["zeros_like"] = [](RefArgs& a) {
    return Want{{ref::zeros_like(a.t("x"))}};
  };
  m["ones_like"] = [](RefArgs& a) { return Want{{ref::ones_like(a.t("x"))}}; };
  m["arange"] = [](RefArgs& a) { return Want{{ref::arange(a.size("n"))}}; };
  m["causal"] = [](RefArgs& a) {
    int64_t n = a.axis_size("n");
    return Want{{ref::causal(n, a.axis_size("m"))}};
  };
  m["tensor"] = [](RefArgs& a) {
    const types::Type& given = a.arg_type("values");
    if (given.kind != types::Type::Kind::List &&
        given.kind != types::Type::Kind::Tuple)
      a.decline("one number or a tensor");
    std::vector<Tensor> xs = a.tensors("values");
    if (xs.empty()) a.decline("an empty list");
    const types::Type& r = a.result_type();
    DType d = a.has("dtype")  ? a.dtype_arg("dtype")
              : r.is_tensor() ? r.dtype
                              : DType::F32;
    return Want{{ref::tensor(xs, d)}};
  };
  for (const char* op : {"rand", "randn"})
    m[op] = [normal = op[4] == 'n'](RefArgs& a) {
      if (!a.has("seed")) a.decline("no seed");
      ops::Shape s = a.shape_arg("type");
      DType d = a.dtype_arg("type");
      ops::RandomStream r = a.random("seed");
      return Want{{normal ? ref::randn(s, d, r.key, r.stream, r.offset)
                          : ref::rand(s, d, r.key, r.stream, r.offset)}};
    };
}

}  // namespace ss::fuzz
