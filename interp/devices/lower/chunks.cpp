// Canonical chunks and the fold tree (Note [Deterministic mode] in
// chunks.h).
#include "interp/devices/lower/chunks.h"

#include <map>
#include <stdexcept>
#include <string>

#include "ops/api.h"
#include "ops/autodiff/tape.h"

namespace ss::devices::lower {

ops::Tensor add_partials(const ops::Tensor& x, const ops::Tensor& y) {
  ops::GradMode::Guard no_grad(false);
  return ops::add(x, y);
}

namespace {

ChunkLayout layout(int64_t n, int64_t size, int world) {
  ChunkLayout l;
  l.rows = n;
  l.size = size;
  l.chunks = (n + l.size - 1) / l.size;
  std::vector<int64_t> parts = ops::batch_split(l.chunks, world);
  l.first.assign(1, 0);
  for (int64_t p : parts) l.first.push_back(l.first.back() + p);
  return l;
}

}  // namespace

ChunkLayout ChunkLayout::of(int64_t n, int world) {
  return layout(n, chunk_size(n), world);
}

ChunkLayout ChunkLayout::each_one(int64_t n, int world) {
  return layout(n, 1, world);
}

std::pair<int64_t, int64_t> ChunkLayout::chunk_rows(int64_t j) const {
  return {std::min(rows, j * size), std::min(rows, (j + 1) * size)};
}

std::pair<int64_t, int64_t> ChunkLayout::rows_of(int r) const {
  return {chunk_rows(first[r]).first, chunk_rows(first[r + 1]).first};
}

namespace {

// The chunks node [n] covers.
std::pair<int64_t, int64_t> span_of(const TreeNode& n, int64_t chunks) {
  const int64_t w = int64_t{1} << n.level;
  return {std::min(chunks, n.index * w), std::min(chunks, (n.index + 1) * w)};
}

int root_level(int64_t chunks) {
  int l = 0;
  while ((int64_t{1} << l) < chunks) ++l;
  return l;
}

}  // namespace

std::vector<TreeNode> tree_pieces(int64_t a, int64_t b, int64_t chunks) {
  std::vector<TreeNode> out;
  // From the root down: a node inside [a, b) is a piece; one that meets
  // it in part splits into its children.
  std::function<void(TreeNode)> visit = [&](TreeNode n) {
    auto [s, e] = span_of(n, chunks);
    if (s >= e || e <= a || s >= b) return;
    if (a <= s && e <= b) {
      out.push_back(n);
      return;
    }
    visit({n.level - 1, 2 * n.index});
    visit({n.level - 1, 2 * n.index + 1});
  };
  if (a < b) visit({root_level(chunks), 0});
  return out;
}

namespace {

// Node [n]'s value from the leaves [values] (chunk j at [j - a]).
ops::Tensor fold_node(const TreeNode& n,
                      const std::vector<ops::Tensor>& values,
                      int64_t a,
                      int64_t chunks,
                      const Add& add) {
  auto [s, e] = span_of(n, chunks);
  if (n.level == 0) return values.at(s - a);
  TreeNode left{n.level - 1, 2 * n.index}, right{n.level - 1, 2 * n.index + 1};
  ops::Tensor l = fold_node(left, values, a, chunks, add);
  if (span_of(right, chunks).first >= e) return l;  // no right child
  return add(l, fold_node(right, values, a, chunks, add));
}

}  // namespace

std::vector<ops::Tensor> fold_pieces(const std::vector<ops::Tensor>& values,
                                     int64_t a,
                                     int64_t b,
                                     int64_t chunks,
                                     const Add& add) {
  if (static_cast<int64_t>(values.size()) != b - a)
    throw std::logic_error("fold_pieces: " + std::to_string(values.size()) +
                           " values for chunks [" + std::to_string(a) + ", " +
                           std::to_string(b) + ")");
  std::vector<ops::Tensor> out;
  for (const TreeNode& n : tree_pieces(a, b, chunks))
    out.push_back(fold_node(n, values, a, chunks, add));
  return out;
}

ops::Tensor fold_root(const std::vector<TreeNode>& nodes,
                      const std::vector<ops::Tensor>& values,
                      int64_t chunks,
                      const Add& add) {
  std::map<std::pair<int, int64_t>, size_t> at;
  for (size_t i = 0; i < nodes.size(); ++i)
    at[{nodes[i].level, nodes[i].index}] = i;
  std::function<ops::Tensor(TreeNode)> value = [&](TreeNode n) {
    if (auto it = at.find({n.level, n.index}); it != at.end())
      return values.at(it->second);
    auto [s, e] = span_of(n, chunks);
    if (n.level == 0 || s >= e)
      throw std::logic_error("fold_root: chunk " + std::to_string(s) +
                             " is in no piece");
    TreeNode left{n.level - 1, 2 * n.index},
        right{n.level - 1, 2 * n.index + 1};
    ops::Tensor l = value(left);
    if (span_of(right, chunks).first >= e) return l;
    return add(l, value(right));
  };
  return value({root_level(chunks), 0});
}

}  // namespace ss::devices::lower
