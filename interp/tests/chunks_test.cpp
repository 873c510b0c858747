// Deterministic mode's canonical chunks and fold tree
// (interp/devices/lower/chunks.h): the chunk sizes, the shares, the pieces
// a rank folds alone, and that every split of the chunks over ranks folds
// to the one tree a single device folds, checked against trees written out
// by hand.
#include "interp/devices/lower/chunks.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace ss;
using namespace ss::devices::lower;

namespace {

// Each value is an index into [labels]; adding two makes the label of
// their sum, so a fold's result names the tree it added in.
struct Labels {
  std::vector<std::string> text;
  ops::Tensor leaf(int64_t j) {
    text.push_back(std::to_string(j));
    return ops::Tensor::scalar(double(text.size() - 1), types::DType::F64);
  }
  Add add() {
    return [this](const ops::Tensor& x, const ops::Tensor& y) {
      text.push_back("(" + of(x) + "+" + of(y) + ")");
      return ops::Tensor::scalar(double(text.size() - 1), types::DType::F64);
    };
  }
  std::string of(const ops::Tensor& t) {
    return text.at(static_cast<size_t>(t.item()));
  }
};

// The root folded from ranks holding chunks [bounds[r], bounds[r + 1]).
std::string fold_split(int64_t chunks, const std::vector<int64_t>& bounds) {
  Labels l;
  std::vector<TreeNode> nodes;
  std::vector<ops::Tensor> values;
  for (size_t r = 0; r + 1 < bounds.size(); ++r) {
    std::vector<ops::Tensor> leaves;
    for (int64_t j = bounds[r]; j < bounds[r + 1]; ++j)
      leaves.push_back(l.leaf(j));
    std::vector<ops::Tensor> p =
        fold_pieces(leaves, bounds[r], bounds[r + 1], chunks, l.add());
    std::vector<TreeNode> n = tree_pieces(bounds[r], bounds[r + 1], chunks);
    REQUIRE(p.size() == n.size());
    nodes.insert(nodes.end(), n.begin(), n.end());
    values.insert(values.end(), p.begin(), p.end());
  }
  return l.of(fold_root(nodes, values, chunks, l.add()));
}

}  // namespace

TEST_CASE("chunk sizes: powers of two from 8, at most 16 chunks", "[chunks]") {
  CHECK(chunk_size(1) == 8);
  CHECK(chunk_size(4) == 8);
  CHECK(chunk_size(64) == 8);
  CHECK(chunk_size(128) == 8);
  CHECK(chunk_size(129) == 16);
  CHECK(chunk_size(900) == 64);
  CHECK(chunk_size(6144) == 512);
}

TEST_CASE("shares are whole chunks, the first ranks one more", "[chunks]") {
  ChunkLayout l = ChunkLayout::of(64, 3);
  CHECK(l.size == 8);
  CHECK(l.chunks == 8);
  CHECK(l.rows_of(0) == std::pair<int64_t, int64_t>{0, 24});
  CHECK(l.rows_of(1) == std::pair<int64_t, int64_t>{24, 48});
  CHECK(l.rows_of(2) == std::pair<int64_t, int64_t>{48, 64});
  // A last batch of 4: one chunk, on rank 0; the others hold no rows.
  ChunkLayout small = ChunkLayout::of(4, 3);
  CHECK(small.chunks == 1);
  CHECK(small.rows_of(0) == std::pair<int64_t, int64_t>{0, 4});
  CHECK(small.rows_of(1) == std::pair<int64_t, int64_t>{4, 4});
  CHECK(small.rows_of(2) == std::pair<int64_t, int64_t>{4, 4});
  // 100 rows in chunks of 8: the last chunk has 4.
  ChunkLayout odd = ChunkLayout::of(100, 5);
  CHECK(odd.chunks == 13);
  CHECK(odd.chunk_rows(12) == std::pair<int64_t, int64_t>{96, 100});
  CHECK(odd.rows_of(4) == std::pair<int64_t, int64_t>{88, 100});
}

TEST_CASE("a rank folds the largest subtrees inside its chunks", "[chunks]") {
  using N = std::vector<TreeNode>;
  // 16 chunks over 3 ranks: 6/5/5.
  CHECK(tree_pieces(0, 6, 16) == N{{2, 0}, {1, 2}});
  CHECK(tree_pieces(6, 11, 16) == N{{1, 3}, {1, 4}, {0, 10}});
  CHECK(tree_pieces(11, 16, 16) == N{{0, 11}, {2, 3}});
  // Over 2 ranks each holds one subtree: the same bytes as an all-reduce.
  CHECK(tree_pieces(0, 8, 16) == N{{3, 0}});
  CHECK(tree_pieces(8, 16, 16) == N{{3, 1}});
  // A node cut by the end of the chunks covers what is left.
  CHECK(tree_pieces(4, 5, 5) == N{{2, 1}});
  CHECK(tree_pieces(0, 5, 5) == N{{3, 0}});
  CHECK(tree_pieces(3, 3, 5).empty());
}

TEST_CASE("the fold tree, written out by hand", "[chunks]") {
  CHECK(fold_split(1, {0, 1}) == "0");
  CHECK(fold_split(3, {0, 3}) == "((0+1)+2)");
  CHECK(fold_split(5, {0, 5}) == "(((0+1)+(2+3))+4)");
  CHECK(fold_split(6, {0, 6}) == "(((0+1)+(2+3))+(4+5))");
  CHECK(fold_split(6, {0, 4, 6}) == "(((0+1)+(2+3))+(4+5))");
  CHECK(fold_split(6, {0, 1, 3, 6}) == "(((0+1)+(2+3))+(4+5))");
}

TEST_CASE("every split of the chunks folds to one device's tree", "[chunks]") {
  for (int64_t chunks = 1; chunks <= 17; ++chunks) {
    const std::string one = fold_split(chunks, {0, chunks});
    for (int world = 2; world <= 5; ++world) {
      // The shares ss cuts (17 x 8 rows are 9 chunks of 16).
      ChunkLayout l = ChunkLayout::of(chunks * 8, world);
      CHECK(fold_split(l.chunks, l.first) ==
            fold_split(l.chunks, {0, l.chunks}));
    }
    // Every cut point between two ranks, and ranks with nothing.
    for (int64_t cut = 0; cut <= chunks; ++cut) {
      INFO("chunks " << chunks << ", cut at " << cut);
      CHECK(fold_split(chunks, {0, cut, chunks}) == one);
      CHECK(fold_split(chunks, {0, 0, cut, cut, chunks}) == one);
    }
  }
}
