// The reference: reductions over a list of axes, and the ops along one
// axis (softmax, log_softmax, cumsum, sort, topk, gather, scatter).

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "ref/ref_ops.h"

namespace ss::ref {

using namespace detail;

namespace {

// The elements of x grouped by their index outside [axes]: one group per
// element of the result, each listing the flat indices of x it reduces, in
// row-major order over the reduced axes (taken in x's axis order).
struct Groups {
  Shape out;
  std::vector<std::vector<int64_t>> members;
};

Groups groups(const Shape& s, const std::vector<int>& axes) {
  std::vector<bool> reduced(s.size(), axes.empty());
  for (int a : axes) reduced[norm_axis(a, s.size())] = true;
  Groups g;
  for (size_t i = 0; i < s.size(); ++i)
    if (!reduced[i]) g.out.push_back(s[i]);
  g.members.resize(ops::numel_of(g.out));
  int64_t n = ops::numel_of(s);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> idx = unravel(i, s), kept;
    for (size_t d = 0; d < s.size(); ++d)
      if (!reduced[d]) kept.push_back(idx[d]);
    g.members[ravel(kept, g.out)].push_back(i);
  }
  return g;
}

// One value per group from f(the group's values).
template <class F>
Tensor reduce_by(const Tensor& x,
                 const std::vector<int>& axes,
                 DType out,
                 F f) {
  Groups g = groups(x.shape(), axes);
  std::vector<double> v = x.to_doubles(), r;
  for (const auto& m : g.members) {
    std::vector<double> vals;
    for (int64_t i : m) vals.push_back(v[i]);
    r.push_back(f(vals));
  }
  return Tensor::from_doubles(g.out, r, out);
}

double total(const std::vector<double>& v) {
  double s = 0;
  for (double e : v) s += e;
  return s;
}

double unbiased_var(const std::vector<double>& v) {
  double n = static_cast<double>(v.size());
  double mu = total(v) / n;
  double ss = 0;
  for (double e : v) ss += (e - mu) * (e - mu);
  return ss / (n - 1);
}

// A position along [axis]: the lines of x along it, each as flat indices.
struct Lines {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t at(int64_t line, int64_t j) const {
    return ((line / inner) * n + j) * inner + line % inner;
  }
  int64_t count() const { return outer * inner; }
};

Lines lines(const Shape& s, int axis) {
  Lines l;
  for (int i = 0; i < axis; ++i) l.outer *= s[i];
  l.n = s[axis];
  for (size_t i = axis + 1; i < s.size(); ++i) l.inner *= s[i];
  return l;
}

}  // namespace

// ---------------------------------------------------------------- reductions

Tensor sum(const Tensor& x, const std::vector<int>& axes) {
  return reduce_by(x, axes, sum_of(x.dtype()), total);
}

Tensor mean(const Tensor& x, const std::vector<int>& axes) {
  return reduce_by(x, axes, float_of(x.dtype()), [](const auto& v) {
    return total(v) / static_cast<double>(v.size());
  });
}

Tensor max(const Tensor& x, const std::vector<int>& axes) {
  return reduce_by(x, axes, x.dtype(), [](const auto& v) {
    double m = -std::numeric_limits<double>::infinity();
    for (double e : v) {
      if (std::isnan(e)) return e;
      m = e > m ? e : m;
    }
    return m;
  });
}

Tensor min(const Tensor& x, const std::vector<int>& axes) {
  return reduce_by(x, axes, x.dtype(), [](const auto& v) {
    double m = std::numeric_limits<double>::infinity();
    for (double e : v) {
      if (std::isnan(e)) return e;
      m = e < m ? e : m;
    }
    return m;
  });
}

Tensor prod(const Tensor& x, const std::vector<int>& axes) {
  return reduce_by(x, axes, sum_of(x.dtype()), [](const auto& v) {
    double p = 1;
    for (double e : v) p *= e;
    return p;
  });
}

Tensor var(const Tensor& x, const std::vector<int>& axes) {
  return reduce_by(x, axes, float_of(x.dtype()), unbiased_var);
}

Tensor std(const Tensor& x, const std::vector<int>& axes) {
  return reduce_by(x, axes, float_of(x.dtype()), [](const auto& v) {
    return std::sqrt(unbiased_var(v));
  });
}

Tensor logsumexp(const Tensor& x, const std::vector<int>& axes) {
  return reduce_by(x, axes, float_of(x.dtype()), [](const auto& v) {
    double m = -std::numeric_limits<double>::infinity();
    for (double e : v) m = e > m ? e : m;
    if (!std::isfinite(m)) m = 0;  // all -inf: log(0) = -inf below
    double s = 0;
    for (double e : v) s += std::exp(e - m);
    return m + std::log(s);
  });
}

Tensor norm(const Tensor& x, const std::vector<int>& axes) {
  return reduce_by(x, axes, float_of(x.dtype()), [](const auto& v) {
    double s = 0;
    for (double e : v) s += e * e;
    return std::sqrt(s);
  });
}

Tensor argmax(const Tensor& x, const std::vector<int>& axes) {
  return reduce_by(x, axes, DType::I64, [](const auto& v) {
    // torch: a NaN is the largest (and the smallest), the first one wins.
    size_t best = 0;
    for (size_t i = 1; i < v.size() && !std::isnan(v[best]); ++i)
      if (v[i] > v[best] || std::isnan(v[i])) best = i;  // strict: the first
    return static_cast<double>(best);
  });
}

Tensor argmin(const Tensor& x, const std::vector<int>& axes) {
  return reduce_by(x, axes, DType::I64, [](const auto& v) {
    size_t best = 0;
    for (size_t i = 1; i < v.size() && !std::isnan(v[best]); ++i)
      if (v[i] < v[best] || std::isnan(v[i])) best = i;
    return static_cast<double>(best);
  });
}

Tensor any(const Tensor& x, const std::vector<int>& axes) {
  return reduce_by(x, axes, DType::Bool, [](const auto& v) {
    for (double e : v)
      if (e != 0) return 1.0;
    return 0.0;
  });
}

Tensor all(const Tensor& x, const std::vector<int>& axes) {
  return reduce_by(x, axes, DType::Bool, [](const auto& v) {
    for (double e : v)
      if (e == 0) return 0.0;
    return 1.0;
  });
}

Tensor reduce(const Tensor& x,
              const std::vector<int>& axes,
              const std::string& with) {
  if (with == "sum") return sum(x, axes);
  if (with == "max") return max(x, axes);
  if (with == "min") return min(x, axes);
  if (with == "prod") return prod(x, axes);
  if (with == "mean") return mean(x, axes);
  throw std::invalid_argument("ref: reduce with=" + with);
}

// ---------------------------------------------------------------- along an
// axis

Tensor softmax(const Tensor& x, int axis) {
  int a = norm_axis(axis, x.rank());
  Lines l = lines(x.shape(), a);
  std::vector<double> v = x.to_doubles(), r(v.size());
  for (int64_t line = 0; line < l.count(); ++line) {
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < l.n; ++j) m = std::max(m, v[l.at(line, j)]);
    if (!std::isfinite(m)) m = 0;
    double z = 0;
    for (int64_t j = 0; j < l.n; ++j) z += std::exp(v[l.at(line, j)] - m);
    for (int64_t j = 0; j < l.n; ++j)
      r[l.at(line, j)] = std::exp(v[l.at(line, j)] - m) / z;
  }
  return Tensor::from_doubles(x.shape(), r, float_of(x.dtype()));
}

Tensor log_softmax(const Tensor& x, int axis) {
  int a = norm_axis(axis, x.rank());
  Lines l = lines(x.shape(), a);
  std::vector<double> v = x.to_doubles(), r(v.size());
  for (int64_t line = 0; line < l.count(); ++line) {
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < l.n; ++j) m = std::max(m, v[l.at(line, j)]);
    if (!std::isfinite(m)) m = 0;
    double z = 0;
    for (int64_t j = 0; j < l.n; ++j) z += std::exp(v[l.at(line, j)] - m);
    double lse = m + std::log(z);
    for (int64_t j = 0; j < l.n; ++j) r[l.at(line, j)] = v[l.at(line, j)] - lse;
  }
  return Tensor::from_doubles(x.shape(), r, float_of(x.dtype()));
}

Tensor cumsum(const Tensor& x, int axis) {
  int a = norm_axis(axis, x.rank());
  Lines l = lines(x.shape(), a);
  std::vector<double> v = x.to_doubles(), r(v.size());
  for (int64_t line = 0; line < l.count(); ++line) {
    double s = 0;
    for (int64_t j = 0; j < l.n; ++j) {
      s += v[l.at(line, j)];
      r[l.at(line, j)] = s;
    }
  }
  return Tensor::from_doubles(x.shape(), r, sum_of(x.dtype()));
}

namespace {

// Sorted positions of each line: ascending, or descending; stable.
std::pair<Tensor, Tensor> sorted(const Tensor& x,
                                 int axis,
                                 bool descending,
                                 int64_t k) {
  int a = norm_axis(axis, x.rank());
  Lines l = lines(x.shape(), a);
  if (k < 0 || k > l.n)
    throw std::out_of_range("ref: topk k = " + std::to_string(k));
  Shape out = x.shape();
  out[a] = k;
  Lines lo = lines(out, a);
  std::vector<double> v = x.to_doubles();
  std::vector<double> vals(ops::numel_of(out)), idx(vals.size());
  for (int64_t line = 0; line < l.count(); ++line) {
    std::vector<int64_t> order(l.n);
    std::iota(order.begin(), order.end(), 0);
    // torch orders NaN above every number: last ascending, first in topk
    // (and a comparison with NaN would break stable_sort's ordering).
    std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
      double vp = v[l.at(line, p)], vq = v[l.at(line, q)];
      if (descending) std::swap(vp, vq);
      return !std::isnan(vp) && (std::isnan(vq) || vp < vq);
    });
    for (int64_t j = 0; j < k; ++j) {
      vals[lo.at(line, j)] = v[l.at(line, order[j])];
      idx[lo.at(line, j)] = static_cast<double>(order[j]);
    }
  }
  return {Tensor::from_doubles(out, vals, x.dtype()),
          Tensor::from_doubles(out, idx, DType::I64)};
}

}  // namespace

std::pair<Tensor, Tensor> sort(const Tensor& x, int axis) {
  return sorted(x, axis, false, x.shape()[norm_axis(axis, x.rank())]);
}

std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int axis) {
  return sorted(x, axis, true, k);
}

Tensor gather(const Tensor& x, const Tensor& idx, int axis) {
  int a = norm_axis(axis, x.rank());
  if (idx.rank() != x.rank())
    throw std::invalid_argument("ref: gather's idx needs x's rank");
  std::vector<double> xv = x.to_doubles(), iv = idx.to_doubles();
  std::vector<double> r(iv.size());
  for (int64_t i = 0; i < static_cast<int64_t>(r.size()); ++i) {
    std::vector<int64_t> p = unravel(i, idx.shape());
    int64_t j = static_cast<int64_t>(iv[i]);
    if (j < 0 || j >= x.shape()[a])
      throw std::out_of_range("ref: gather index " + std::to_string(j));
    p[a] = j;
    r[i] = xv[ravel(p, x.shape())];
  }
  return Tensor::from_doubles(idx.shape(), r, x.dtype());
}

Tensor scatter(const Tensor& x, const Tensor& idx, const Tensor& v, int axis) {
  int a = norm_axis(axis, x.rank());
  if (idx.rank() != x.rank())
    throw std::invalid_argument("ref: scatter's idx needs x's rank");
  std::vector<double> r = x.to_doubles(), iv = idx.to_doubles(),
                      vv = v.to_doubles();
  // A written position takes its value; one written several times takes
  // the sum of its values (library.md leaves duplicates to us; see the
  // forward in ops/defs/along_axis.cpp).
  std::vector<bool> written(r.size(), false);
  for (int64_t i = 0; i < static_cast<int64_t>(iv.size()); ++i) {
    std::vector<int64_t> p = unravel(i, idx.shape());
    double value = vv[broadcast_index(p, idx.shape(), v.shape())];
    int64_t j = static_cast<int64_t>(iv[i]);
    if (j < 0 || j >= x.shape()[a])
      throw std::out_of_range("ref: scatter index " + std::to_string(j));
    p[a] = j;
    int64_t at = ravel(p, x.shape());
    r[at] = written[at] ? r[at] + value : value;
    written[at] = true;
  }
  return Tensor::from_doubles(x.shape(), r, x.dtype());
}

}  // namespace ss::ref
