#pragma once
// Note [Chunked sites]
// Deterministic mode's op-site hook (Note [Deterministic mode] in
// chunks.h). An op where a value with the batch axis meets one without it
// (`x @ w`, `x + b`, linear(m.l1, x), embedding(m.emb, idx)) runs once
// per canonical chunk of this rank's share: its batch operands cut into
// the chunks' rows, its result joined again along the batch axis. So every
// product has a chunk's rows and shape on every layout (a kernel that
// changes its blocking with the number of rows cannot change a bit), and
// in the backward pass each chunk's cotangent of a whole operand (a
// param, a value computed from params) is one partial: each use of the
// operand in a chunk is its own node, and the last of them to be reached
// adds the chunks' partials in the fold tree, across the ranks, and hands
// the whole operand its cotangent, the same on every rank. A batch
// operand's chunks hand theirs back joined, once. A lowered reduction
// (sum, mean, the losses, batch_norm's statistics) computes its entry's
// payload per chunk and folds the payloads in the same tree; its VJP
// hands every chunk the result's cotangent, which is whole already.
// The ops where only batch values meet (relu, softmax over a feature
// axis, x * mask) compute each element from its own row and run as one.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "interp/devices/lower/chunks.h"
#include "interp/eval/op_site.h"

namespace ss::check {
struct FnInfo;
}
namespace ss::types {
struct Type;
}

namespace ss::devices::lower {

struct DeviceContext;
class DeferredFolds;

/// The canonical chunks of the share a batch operand holds here.
struct Chunks {
  ChunkLayout layout;
  int64_t a = 0, b = 0;  // the global chunks held here, [a, b)
  int64_t row0 = 0;      // the global row of local row 0
  /// Whether other ranks hold the other chunks (else this rank holds
  /// them all: one device).
  bool across = false;
  /// Local chunks; a share with no rows runs one empty chunk (its
  /// collectives meet the other ranks').
  int64_t count() const { return b > a ? b - a : 1; }
  /// Local chunk [j]'s local rows.
  std::pair<int64_t, int64_t> rows(int64_t j) const;
};

struct Operands;  // how an op's operands meet the batch (chunked_sites.cpp)

/// A param as a chunked op uses it: the leaf (its AutogradMeta) and, for
/// one model's param of a stack, its index in the stack (empty: the leaf
/// itself).
struct ParamView {
  const void* leaf = nullptr;
  std::vector<int64_t> index;
};

/// Where a batch operand is cut: [axis] (-1: a whole operand), each batch
/// row [per_row] entries of it (a group `(b t)`: t's size).
struct Cut {
  int axis = -1;
  int64_t per_row = 1;
};

class ChunkedSites {
 public:
  explicit ChunkedSites(DeviceContext& d) : d_(d) {}
  ChunkedSites(const ChunkedSites&) = delete;
  ChunkedSites& operator=(const ChunkedSites&) = delete;

  /// [s] run chunk by chunk, or its reduction folded; nullopt: an op the
  /// chunks do not change, which runs as one device runs it.
  std::optional<eval::Value> run_op(eval::OpSite& s);
  /// Whether a chunked op runs now.
  bool running() const { return running_ != nullptr; }
  /// While value_and_grad's pass runs: where the params' folds wait for
  /// its end (Note [Deferred folds]); null: each folds where it is.
  void set_deferred(DeferredFolds* f) { deferred_ = f; }
  DeferredFolds* deferred() const { return deferred_; }
  /// A param read inside a chunked op: [read] once per op (a sharded
  /// param's gather happens once, whatever this rank's count of chunks),
  /// then each chunk's use of it.
  eval::Value param_read(eval::OpSite& s,
                         const std::function<eval::Value()>& read);
  /// Deterministic mode, one model's param of a stack read as [view]
  /// (`blk.w` in `for blk in m.blocks`) from the leaf [stack] at
  /// [index]: its uses in chunked ops fold when value_and_grad's pass
  /// ends, as the leaf's own do (Note [Deferred folds]).
  void note_stack_read(const ops::Tensor& view,
                       const ops::Tensor& stack,
                       const std::vector<int64_t>& index);
  /// The values note_stack_read named let go (the tape is released).
  void forget_stack_reads() { stack_views_.clear(); }
  /// [w] as a param a chunked op uses: a leaf, or a read of one of a
  /// stack; nullopt for a value computed from params.
  std::optional<ParamView> param_view(const ops::Tensor& w) const;
  /// The global first row of the rows an op runs on now: the running
  /// chunk's (random draws are keyed by it); nullopt outside a chunk.
  std::optional<int64_t> chunk_row_start() const;

  /// The sum of one partial per local chunk of [c] ([values], one each;
  /// an empty share's one value is no chunk's) over every rank's chunks,
  /// in the fold tree: the same bits on every rank and layout.
  ops::Tensor fold(const std::vector<ops::Tensor>& values, const Chunks& c);
  /// fold() on the tape: its VJP hands each of [values] the sum's
  /// cotangent.
  ops::Tensor fold_taped(const std::vector<ops::Tensor>& values,
                         const Chunks& c);

  /// [run] once per local piece of [c] (a chunk, or `split H`'s head: Note
  /// [Heads one at a time] in heads.cpp), with each of [operands] set to
  /// the piece's part as [cuts] says, or to the piece's own use of it
  /// where whole (its cotangent one partial of the fold over the pieces);
  /// the operands are restored after. Each piece's value, in order.
  std::vector<eval::Value> run_pieces(const std::function<eval::Value()>& run,
                                      const std::vector<ops::Tensor*>& operands,
                                      const std::vector<Cut>& cuts,
                                      const Chunks& c);

 private:
  struct Run;
  /// The chunks of a share of [local_rows] rows; nullopt when this rank's
  /// rows are not a share of the call's batch.
  std::optional<Chunks> chunks_for(int64_t local_rows) const;
  std::optional<eval::Value> builtin(eval::OpSite& s);
  std::optional<eval::Value> operands(eval::OpSite& s);
  std::optional<eval::Value> reduction(eval::OpSite& s);
  /// [s] with [operands] (cut as [o] says) run by chunks, its result of
  /// type [result] joined; nullopt where the chunks change nothing.
  std::optional<eval::Value> chunked(eval::OpSite& s,
                                     const std::vector<ops::Tensor*>& operands,
                                     const Operands& o,
                                     const types::Type& result);
  /// Runs [s] once per chunk with [operands] set to the chunk's (cut as
  /// [cuts] say) and joins the results along the result's batch axis
  /// [out_axis].
  eval::Value run_chunks(eval::OpSite& s,
                         const std::vector<ops::Tensor*>& operands,
                         const std::vector<Cut>& cuts,
                         const Chunks& c,
                         int out_axis);

  DeviceContext& d_;
  Run* running_ = nullptr;  // the chunked op running now
  DeferredFolds* deferred_ = nullptr;
  uint64_t uses_made_ = 0;  // by the forward pass so far (Slot::order)
  /// note_stack_read's views, by their AutogradMeta (held).
  std::map<const void*,
           std::pair<std::shared_ptr<ops::AutogradMeta>, ParamView>>
      stack_views_;
};

/// Where a tensor type has [fn]'s batch axis: [axis] of its shape, alone
/// or as the first item of a group (`(b t)`, [grouped]; [var] the batch
/// size variable); Uncut where no chunk can cut it (after another item of
/// a group, or twice).
struct BatchAxis {
  enum class Kind { None, Axis, Uncut };
  Kind kind = Kind::None;
  int axis = -1;
  bool grouped = false;
  uint32_t var = 0;
};
BatchAxis batch_axis_of(const types::Type& t, const check::FnInfo* fn);

}  // namespace ss::devices::lower
