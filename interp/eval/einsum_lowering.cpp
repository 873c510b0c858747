// einsum as batched matmuls of the differentiable API (einsum_lowering.h).
#include "interp/eval/einsum_lowering.h"

#include <algorithm>
#include <limits>
#include <map>

#include "ops/api.h"

namespace ss::eval {

namespace {

// Note [einsum as batched matmuls]
// Operands are contracted two at a time, each pair in one batched matmul,
// as PyTorch's einsum does; the backward is the matmul's and the permutes'
// VJPs, so it is matmuls of the same kind (Note [Transposes read in place]
// in ops/api_shape.cpp).
//
// Before a contraction each side sums away the labels nothing else needs
// (not the output, not the other side, not a remaining operand): a label
// the two sides share is contracted by the matmul, never summed on each
// side first (that multiplied the two sums, issue 10's
// `einsum(a, c, n d, t d -> n t)`). The pair's labels are then batch (both
// sides, needed later), contracted (both sides, needed no more), left only
// and right only, and the step is one product
//   [batch left contract] @ [batch contract right] -> [batch left right].
// The order of the labels inside each of the four groups is free, and BLAS
// reads either operand transposed in place, so an operand is used as it
// lies (a reshape is a view) when its axes are [batch left contract] or
// [batch contract left] in some order of each group; the right side
// likewise. Computing the transpose (Bᵀ Aᵀ) gives [batch right left]. Each
// step picks the group orders (each operand's own, or, at the last step,
// the output's), the transposes and the side of the result that copy the
// fewest elements: an operand that fits no choice is permuted once, the
// last result once if the output's order needs it. Attention's two
// products, `b h n d, b h m d -> b h n m` and `b h n m, b h m d -> b h n d`,
// copy nothing.
//
// With more than two operands the pair contracted next is the one with the
// fewest multiply-adds (the product of its surviving labels' sizes; ties
// by the result's size, then left to right), greedily, as opt_einsum's
// greedy path does.

using Atoms = std::vector<std::string>;

bool has(const Atoms& v, const std::string& a) {
  return std::find(v.begin(), v.end(), a) != v.end();
}

// The atoms of [v] that [of] has, in [v]'s order.
Atoms among(const Atoms& v, const Atoms& of) {
  Atoms out;
  for (const auto& a : v)
    if (has(of, a)) out.push_back(a);
  return out;
}

Atoms join(std::initializer_list<const Atoms*> parts) {
  Atoms out;
  for (const Atoms* p : parts) out.insert(out.end(), p->begin(), p->end());
  return out;
}

struct Operand {
  ops::Tensor t;
  Atoms at;  // one per axis of t
};

class Lowering {
 public:
  Lowering(const std::vector<Operand>& xs, const Atoms& out) : out_(out) {
    for (const auto& x : xs)
      for (size_t i = 0; i < x.at.size(); ++i) size_[x.at[i]] = x.t.shape()[i];
  }

  ops::Tensor run(std::vector<Operand> xs) {
    while (xs.size() > 1) {
      auto [i, j] = next_pair(xs);
      Atoms keep = needed(xs, i, j);
      xs[i] = contract(xs[i], xs[j], keep, xs.size() == 2);
      xs.erase(xs.begin() + static_cast<long>(j));
    }
    Operand& x = xs[0];
    sum_except(x, out_);
    permute_to(x, among(out_, x.at));
    return x.t;
  }

 private:
  int64_t prod(const Atoms& v) const {
    int64_t p = 1;
    for (const auto& a : v) p *= size_.at(a);
    return p;
  }

  // The output's atoms and those of every operand but [i] and [j].
  Atoms needed(const std::vector<Operand>& xs, size_t i, size_t j) const {
    Atoms keep = out_;
    for (size_t k = 0; k < xs.size(); ++k)
      if (k != i && k != j)
        for (const auto& a : xs[k].at)
          if (!has(keep, a)) keep.push_back(a);
    return keep;
  }

  // The labels of a pair that survive its sums (see the Note).
  static Atoms surviving(const Operand& a,
                         const Operand& b,
                         const Atoms& keep) {
    Atoms u;
    for (const auto& x : a.at)
      if (has(keep, x) || has(b.at, x)) u.push_back(x);
    for (const auto& x : b.at)
      if ((has(keep, x) || has(a.at, x)) && !has(u, x)) u.push_back(x);
    return u;
  }

  std::pair<size_t, size_t> next_pair(const std::vector<Operand>& xs) const {
    std::pair<size_t, size_t> best{0, 1};
    std::pair<int64_t, int64_t> best_cost{std::numeric_limits<int64_t>::max(),
                                          0};
    for (size_t i = 0; i < xs.size(); ++i)
      for (size_t j = i + 1; j < xs.size(); ++j) {
        Atoms keep = needed(xs, i, j);
        Atoms u = surviving(xs[i], xs[j], keep);
        std::pair<int64_t, int64_t> cost{prod(u), prod(among(u, keep))};
        if (cost < best_cost) {
          best_cost = cost;
          best = {i, j};
        }
      }
    return best;
  }

  // Sums away the atoms of [x] that [keep] does not have; a size-1 one is
  // only dropped (a reshape, a view).
  void sum_except(Operand& x, const Atoms& keep) const {
    std::vector<int> axes;
    Atoms kept, ones;
    for (size_t i = 0; i < x.at.size(); ++i) {
      if (has(keep, x.at[i]))
        kept.push_back(x.at[i]);
      else if (size_.at(x.at[i]) == 1)
        ones.push_back(x.at[i]);
      else
        axes.push_back(static_cast<int>(i));
    }
    if (axes.empty() && ones.empty()) return;
    if (!axes.empty()) x.t = ops::sum(x.t, axes);
    ops::Shape s;
    for (const auto& a : kept) s.push_back(size_.at(a));
    x.t = ops::reshape(x.t, s);
    x.at = kept;
  }

  // [x] with its axes in [order] (a permutation of its atoms).
  static void permute_to(Operand& x, const Atoms& order) {
    if (order == x.at) return;
    std::vector<int> perm;
    for (const auto& a : order)
      perm.push_back(static_cast<int>(std::find(x.at.begin(), x.at.end(), a) -
                                      x.at.begin()));
    x.t = ops::permute(x.t, perm);
    x.at = order;
  }

  // One contraction's plan (see the Note).
  struct Plan {
    Atoms batch, left, contract, right;
    bool permute_a = false, permute_b = false;
    bool ta = false, tb = false;  // read transposed, in place
    bool swap = false;            // computes [batch right left]
    int64_t copied = 0;           // elements the permutes copy
  };

  // The plan for these group orders that copies the least.
  Plan fit(const Operand& a,
           const Operand& b,
           const Atoms& bt,
           const Atoms& l,
           const Atoms& c,
           const Atoms& r,
           bool last) const {
    Plan p{bt, l, c, r};
    if (a.at == join({&bt, &c, &l})) {
      p.ta = a.at != join({&bt, &l, &c});
    } else if (a.at != join({&bt, &l, &c})) {
      p.permute_a = true;
      p.copied += prod(a.at);
    }
    if (b.at == join({&bt, &r, &c})) {
      p.tb = b.at != join({&bt, &c, &r});
    } else if (b.at != join({&bt, &c, &r})) {
      p.permute_b = true;
      p.copied += prod(b.at);
    }
    if (!last) return p;
    Atoms straight = join({&bt, &l, &r}), swapped = join({&bt, &r, &l});
    bool fits = among(out_, straight) == straight;
    if (!fits && among(out_, swapped) == swapped) {
      p.swap = true;
    } else if (!fits) {
      p.copied += prod(straight);
    }
    return p;
  }

  Operand contract(Operand a, Operand b, const Atoms& keep, bool last) const {
    sum_except(a, join({&keep, &b.at}));
    sum_except(b, join({&keep, &a.at}));
    Atoms batch, contracted, left, right;
    for (const auto& x : a.at) {
      if (!has(b.at, x))
        left.push_back(x);
      else
        (has(keep, x) ? batch : contracted).push_back(x);
    }
    for (const auto& x : b.at)
      if (!has(a.at, x)) right.push_back(x);
    // The candidate orders of each group: an operand's own, or the
    // output's at the last step.
    std::vector<Atoms> bts{batch, among(b.at, batch)};
    std::vector<Atoms> cs{contracted, among(b.at, contracted)};
    std::vector<Atoms> ls{left}, rs{right};
    if (last) {
      bts.push_back(among(out_, batch));
      ls.push_back(among(out_, left));
      rs.push_back(among(out_, right));
    }
    Plan best;
    best.copied = -1;
    for (const auto& bt : bts)
      for (const auto& c : cs)
        for (const auto& l : ls)
          for (const auto& r : rs) {
            Plan p = fit(a, b, bt, l, c, r, last);
            if (best.copied < 0 || p.copied < best.copied) best = p;
          }
    return apply(best, std::move(a), std::move(b));
  }

  Operand apply(const Plan& p, Operand a, Operand b) const {
    if (p.permute_a) permute_to(a, join({&p.batch, &p.left, &p.contract}));
    if (p.permute_b) permute_to(b, join({&p.batch, &p.contract, &p.right}));
    int64_t nb = prod(p.batch), nl = prod(p.left), nc = prod(p.contract),
            nr = prod(p.right);
    ops::Tensor a3 = ops::reshape(
        a.t, p.ta ? ops::Shape{nb, nc, nl} : ops::Shape{nb, nl, nc});
    ops::Tensor b3 = ops::reshape(
        b.t, p.tb ? ops::Shape{nb, nr, nc} : ops::Shape{nb, nc, nr});
    // (op(a) op(b))ᵀ = op(b)ᵀ op(a)ᵀ: the flags flip.
    ops::Tensor y = p.swap ? ops::matmul_transposed(b3, a3, !p.tb, !p.ta)
                           : ops::matmul_transposed(a3, b3, p.ta, p.tb);
    Operand out;
    out.at = p.swap ? join({&p.batch, &p.right, &p.left})
                    : join({&p.batch, &p.left, &p.right});
    ops::Shape s;
    for (const auto& x : out.at) s.push_back(size_.at(x));
    out.t = ops::reshape(y, s);
    return out;
  }

  const Atoms& out_;
  std::map<std::string, int64_t> size_;
};

}  // namespace

ops::Tensor einsum_atoms(std::vector<ops::Tensor> xs,
                         std::vector<std::vector<std::string>> atoms,
                         const std::vector<std::string>& out) {
  std::vector<Operand> ops;
  for (size_t i = 0; i < xs.size(); ++i)
    ops.push_back({std::move(xs[i]), std::move(atoms[i])});
  Lowering l(ops, out);
  return l.run(std::move(ops));
}

}  // namespace ss::eval
