#pragma once
// ds.batches(n, shuffle=seed, drop_last=false, loader_threads=2): batches of
// n records as `[b] R` (library.md, Data). Batch tensors are plain CPU
// tensors with a leading batch axis; a size-variable field is padded (with
// 0) to the longest item of the batch and the batch gets `mask_<var>`
// ([b var] bool, true where an item has a value).
//
// Order: with a seed, a Fisher-Yates shuffle of the view's items driven by
// Philox: for i = count-1 down to 1, j = (64 bits drawn at counter (i, 0)
// under key_for(seed, "batches")) mod (i + 1), swap(i, j). Without one,
// the dataset's order. The same Batches value walks the same order every
// time; draw a new one per epoch (`ds.batches(64, shuffle=epoch)`).
//
// Loading: loader_threads threads build the next batches while the loop
// body runs, at most 2 x threads batches ahead; 0 threads builds each batch
// when asked. Leaving the loop early (break, an error) stops and joins them.
//
// On several devices the controller's loop builds nothing: it hands out
// lazy batches (LazyBatch), sent to the workers as references, and each
// worker loads only its own rows on its own threads (batch_shares.h).

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "interp/data/dataset.h"

namespace ss::data {

/// The shuffled order of [count] items under [seed].
std::vector<int64_t> shuffle_order(int64_t count, uint64_t seed);

struct BatchesValue : eval::IterableObject {
  std::shared_ptr<const DatasetValue> ds;
  int64_t n = 1;
  bool shuffle = false;
  uint64_t seed = 0;
  bool drop_last = false;
  int threads = 2;

  /// The view's item indices in batch order.
  std::vector<int64_t> order() const;
  /// Batch [k] of [order] (view indices) as a batch record; a DataError
  /// for a bad item of a streamed dataset.
  std::shared_ptr<eval::RecordValue> make_batch(
      const std::vector<int64_t>& order,
      int64_t k,
      ops::Device device = {}) const;
  /// The store items of batch [k] of [order], in batch order.
  std::vector<int64_t> batch_rows(const std::vector<int64_t>& order,
                                  int64_t k) const;
  /// The batch record of store items [rows] (padding, masks): make_batch's
  /// second half. A size-variable field is padded to [longest] when given
  /// (a worker's rows, padded over the whole batch: devices.md 8), else to
  /// its longest item among [rows]. [device]: where the batch goes (a
  /// TensorDataset's fields are gathered on a GPU from its copy there,
  /// Note [Datasets kept on a GPU]; the rest is uploaded).
  std::shared_ptr<eval::RecordValue> make_batch_of_rows(
      const std::vector<int64_t>& rows,
      const std::map<std::string, int64_t>* longest = nullptr,
      ops::Device device = {}) const;
  /// Errors from loading (a streamed dataset's bad item) are raised by the
  /// cursor's next() in the calling thread, at [loop], before the batch is
  /// handed out; the batches before it are handed out as usual.
  std::unique_ptr<eval::Cursor> cursor(eval::Interpreter& in,
                                       diag::Span loop = {}) override;
  int64_t length() const override;
};

/// A batch the controller hands out without building it: batch [k] of a
/// walk (one `for` over a Batches value) over [order].
struct LazyBatch : eval::UnloadedBatch {
  std::shared_ptr<const BatchesValue> bv;
  std::shared_ptr<const std::vector<int64_t>> order;
  int64_t k = 0;
  uint64_t walk = 0;  // unique per walk in this process
  diag::Span loop;    // where a bad item is raised
  /// Sent to the workers or built here: its items were (or will be, by
  /// the workers) checked.
  mutable bool loaded = false;
  /// The number of examples in the batch.
  int64_t size() const override;
  /// Builds the batch here (the controller read it): a bad streamed item
  /// raised at [loop], as on one device.
  void load_into(eval::Interpreter& in, eval::RecordValue& r) const override;

  /// [r]'s lazy batch, or null when it has none.
  static const LazyBatch* of(const eval::RecordValue& r);
};

/// Builds batches [first, total) in order on [threads] threads, at most
/// 2 x threads ahead of the one taken (0 threads: each when taken).
/// Destroying it stops and joins the threads.
class Prefetcher {
 public:
  using Build = std::function<std::shared_ptr<eval::RecordValue>(int64_t k)>;
  Prefetcher(int64_t first, int64_t total, int threads, Build build);
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;
  /// The next batch's index, or total when done.
  int64_t next_index() const;
  /// The next batch (its build's exception rethrown here).
  std::shared_ptr<eval::RecordValue> take();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// progress(it) (progress.cpp): an iterable wrapping [inner] (any iterable:
/// a list, a dataset, batches, a tensor's rows). [tty]: -1 asks isatty(2),
/// 0 or 1 forces the summary line or the bar; [err] defaults to std::cerr.
eval::Value make_progress(const eval::Value& inner,
                          int tty = -1,
                          std::ostream* err = nullptr);
/// Where progress bars go when make_progress is given none: [err] (null:
/// std::cerr) drawn as a terminal's bar when [tty] is 1, as a notebook's
/// (carriage returns, no escape sequences) when 2, a summary line when 0,
/// by isatty(2) when -1. A host language sets its own (the Python module:
/// sys.stderr, so a notebook shows the bar).
void set_progress_output(std::ostream* err, int tty);

}  // namespace ss::data
