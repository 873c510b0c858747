// The params' folds, one exchange after the pass (Note [Deferred folds]
// in deferred_folds.h).
#include "interp/devices/lower/deferred_folds.h"

#include <algorithm>
#include <map>

#include "dist/comm/communicator.h"
#include "interp/devices/lower/chunked_sites.h"
#include "interp/devices/lower/lowering.h"
#include "interp/eval/objects.h"
#include "ops/api.h"
#include "ops/autodiff/tape.h"

namespace ss::devices::lower {

using ops::Tensor;

void DeferredFolds::add(uint64_t order,
                        const ParamView& param,
                        const std::vector<Tensor>& values,
                        const Chunks& c) {
  // values holds one tensor at least: an empty share runs one chunk.
  Use u{order,
        param,
        values.at(0).shape(),
        values.at(0).dtype(),
        {},
        c.layout,
        c.across};
  std::vector<Tensor> leaves;
  if (c.b > c.a) leaves = values;
  for (const Tensor& p :
       fold_pieces(leaves, c.a, c.b, c.layout.chunks, add_partials))
    u.pieces.push_back(ops::reshape(p, {p.numel()}));
  uses_.push_back(std::move(u));
}

std::vector<Tensor> DeferredFolds::fold_all(DeviceContext& d) {
  ops::GradMode::Guard no_grad(false);
  std::stable_sort(uses_.begin(), uses_.end(), [](const Use& a, const Use& b) {
    return a.order < b.order;
  });
  // Every rank's pieces of every use, by dtype: one exchange each.
  std::vector<std::vector<TreeNode>> nodes(uses_.size());
  std::vector<std::vector<Tensor>> values(uses_.size());
  std::map<int, std::vector<size_t>> by_dtype;
  for (size_t i = 0; i < uses_.size(); ++i)
    by_dtype[static_cast<int>(uses_[i].dtype)].push_back(i);
  for (const auto& [dt, idx] : by_dtype) {
    const bool across = uses_[idx[0]].across && d.active();
    const int world = across ? d.world : 1;
    // What rank r sends: its pieces of each use in order.
    std::vector<int64_t> rows(world, 0);
    std::vector<std::vector<std::vector<TreeNode>>> held(world);
    for (int r = 0; r < world; ++r)
      for (size_t i : idx) {
        const Use& u = uses_[i];
        auto [a, b] = across ? u.layout.chunks_of(r)
                             : std::pair<int64_t, int64_t>{0, u.layout.chunks};
        held[r].push_back(tree_pieces(a, b, u.layout.chunks));
        rows[r] += static_cast<int64_t>(held[r].back().size()) *
                   ops::numel_of(u.shape);
      }
    std::vector<Tensor> mine;
    for (size_t i : idx)
      for (const Tensor& p : uses_[i].pieces) mine.push_back(p);
    Tensor sent = mine.empty()
                      ? Tensor::zeros({0}, uses_[idx[0]].dtype, d.device())
                      : ops::concat(mine, 0);
    Tensor all = sent;
    if (across) {
      Waiting w(d);
      all = Tensor();
      d.comm->all_gather_v(sent, all, rows, dist::Options{});
    }
    int64_t at = 0;
    for (int r = 0; r < world; ++r)
      for (size_t k = 0; k < idx.size(); ++k) {
        const Use& u = uses_[idx[k]];
        const int64_t n = ops::numel_of(u.shape);
        for (const TreeNode& node : held[r][k]) {
          nodes[idx[k]].push_back(node);
          values[idx[k]].push_back(
              ops::reshape(ops::slice(all, 0, at, at + n), u.shape));
          at += n;
        }
      }
  }
  std::vector<Tensor> folds;
  for (size_t i = 0; i < uses_.size(); ++i)
    folds.push_back(
        fold_root(nodes[i], values[i], uses_[i].layout.chunks, add_partials));
  return folds;
}

void DeferredFolds::finish(const std::vector<Tensor>& leaves,
                           std::vector<Tensor>& grads,
                           DeviceContext& d) {
  if (uses_.empty()) return;
  std::vector<Tensor> folds = fold_all(d);
  // Each use's fold, added to its leaf's gradient (a stack's model's, to
  // its entry) in the uses' forward order.
  ops::GradMode::Guard no_grad(false);
  for (size_t i = 0; i < uses_.size(); ++i)
    for (size_t k = 0; k < leaves.size(); ++k) {
      if (leaves[k].autograd().get() != uses_[i].param.leaf) continue;
      Tensor& g = grads[k];
      if (!g.defined())
        g = Tensor::zeros(
            leaves[k].shape(), folds[i].dtype(), leaves[k].device());
      const std::vector<int64_t>& at = uses_[i].param.index;
      if (at.empty()) {
        g = add_partials(g, folds[i]);
        continue;
      }
      Tensor entry = g;
      for (int64_t j : at) entry = ops::take_one(entry, j, 0);
      g = eval::put_at(g, at, add_partials(entry, folds[i]));
    }
  uses_.clear();
}

}  // namespace ss::devices::lower
