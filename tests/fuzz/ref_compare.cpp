// The oracle's comparison (ref_compare.h): the tolerances and their
// reasons are Note [A runtime fuzzer's oracle] in run_ref.cpp.
#include "tests/fuzz/ref_compare.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <utility>

namespace ss::fuzz {

namespace {

using types::DType;

// 2^53: the integers a double holds exactly stop here.
constexpr double kExactInts = 9007199254740992.0;

double max_finite(DType d) {
  switch (d) {
    case DType::F64:
      return DBL_MAX;
    case DType::BF16:
      return 3.3895313892515355e38;
    case DType::F16:
      return 65504.0;
    default:
      return FLT_MAX;
  }
}

std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

std::string differs(size_t k, size_t i, double g, double w, double bound) {
  return "output " + std::to_string(k) + " element " + std::to_string(i) +
         ": got " + num(g) + ", ref " + num(w) +
         (bound > 0 ? " (bound " + num(bound) + ")" : std::string());
}

// Whether float element [g] agrees with ref's [w]; [s] is the element's
// scale and [p] the magnitude of its partial results (0 when none),
// [bound] what was allowed, for the message.
bool float_agrees(double g,
                  double w,
                  double s,
                  double p,
                  DType d,
                  double rtol,
                  double& bound) {
  bound = 0;
  // Σ|x| past a double's range: ref's own double accumulation may have
  // overflowed in its order, so its value says nothing.
  if (std::isinf(s) || std::isinf(p)) return true;
  if (std::isnan(s)) s = 0;  // a NaN term: w is NaN too, checked below
  if (std::isnan(p)) p = 0;
  const double maxf = max_finite(d);
  if (std::isnan(w)) return std::isnan(g);
  if (std::isinf(w)) {
    if (g == w) return true;
    // ref's double rounded past the dtype's largest value; the op's, off
    // by its bound, may have stayed just below it.
    return d != DType::F64 && std::isfinite(g) && (g > 0) == (w > 0) &&
           std::fabs(g) >= maxf * (1 - rtol);
  }
  // A finite value the op overflowed on its way: only when the terms'
  // magnitudes pass the dtype's range can a partial result in it.
  if (!std::isfinite(g)) return std::max(s, p) > maxf;
  bound = rtol * std::max({std::fabs(w), 1.0, s});
  return std::fabs(g - w) <= bound;
}

}  // namespace

double ref_tolerance(DType d, Tol tol) {
  switch (d) {
    case DType::F64:
      return 1e-12;
    case DType::F32:
      return tol == Tol::Elem ? 1e-5 : 1e-4;
    case DType::BF16:
      return 1.0 / 64;  // 2 ulps: 8 significant bits
    case DType::F16:
      return 1.0 / 512;  // 2 ulps: 11 significant bits
    default:
      return 0;
  }
}

std::string compare_with_ref(const std::vector<ops::Tensor>& got,
                             const Want& want) {
  if (got.size() != want.values.size())
    return std::to_string(got.size()) + " outputs, ref " +
           std::to_string(want.values.size());
  for (size_t k = 0; k < got.size(); ++k) {
    const ops::Tensor& g = got[k];
    const ops::Tensor& w = want.values[k];
    const std::string out = "output " + std::to_string(k) + ": ";
    if (g.shape() != w.shape())
      return out + "shape " + ops::shape_string(g.shape()) + ", ref " +
             ops::shape_string(w.shape());
    if (!want.dtype_of_op && g.dtype() != w.dtype())
      return out + "dtype " + types::dtype_name(g.dtype()) + ", ref " +
             types::dtype_name(w.dtype());
    const DType d = g.dtype();
    std::vector<double> gv = g.to_doubles();
    std::vector<double> wv =
        want.dtype_of_op && w.dtype() != d
            ? ops::Tensor::from_doubles(w.shape(), w.to_doubles(), d)
                  .to_doubles()
            : w.to_doubles();
    if (!types::is_float(d)) {
      if (want.inexact_ints && types::is_int(d)) continue;
      for (size_t i = 0; i < gv.size(); ++i)
        // Past 2^53 ref's double is not the integer (and at the dtype's
        // ends ref saturates where the op wraps): not compared.
        if (std::fabs(wv[i]) < kExactInts && gv[i] != wv[i] &&
            !(d == DType::I32 && std::fabs(wv[i]) >= 2147483647.0))
          return differs(k, i, gv[i], wv[i], 0);
      continue;
    }
    std::vector<double> sv, pv;
    for (auto [from, to] :
         {std::pair{&want.scales, &sv}, std::pair{&want.partials, &pv}}) {
      if (k >= from->size() || !(*from)[k].defined()) continue;
      if ((*from)[k].shape() != w.shape())
        return out + "the oracle's scale has shape " +
               ops::shape_string((*from)[k].shape());
      *to = (*from)[k].to_doubles();
    }
    const double rtol = ref_tolerance(d, want.tol);
    for (size_t i = 0; i < gv.size(); ++i) {
      double bound = 0;
      if (!float_agrees(gv[i],
                        wv[i],
                        sv.empty() ? 0 : sv[i],
                        pv.empty() ? 0 : pv[i],
                        d,
                        rtol,
                        bound))
        return differs(k, i, gv[i], wv[i], bound);
    }
  }
  return "";
}

}  // namespace ss::fuzz
