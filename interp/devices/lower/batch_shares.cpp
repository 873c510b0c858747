// A worker's own rows of the controller's batches (batch_shares.h).
#include "interp/devices/lower/batch_shares.h"

#include <algorithm>
#include <numeric>

#include "dist/comm/communicator.h"
#include "interp/data/batches.h"
#include "interp/devices/lower/lowering.h"
#include "ops/api.h"
#include "ops/core/batch_split.h"

namespace ss::devices::lower {

// The evaluator's values and objects, which the ranks' code works on.
using namespace ss::eval;
using namespace ss::data;

namespace {

// Walks kept per worker: a training loop and an evaluation loop inside it
// interleave; older walks (finished or abandoned) are dropped.
constexpr size_t kWalksKept = 8;

// Rank [rank]'s rows of batch [k] of [order], padded over the whole batch.
std::shared_ptr<RecordValue> build_share(const BatchesValue& bv,
                                         const std::vector<int64_t>& order,
                                         int64_t k,
                                         int rank,
                                         int world,
                                         bool deterministic,
                                         ops::Device device) {
  std::vector<int64_t> rows = bv.batch_rows(order, k);
  const auto [start, end] =
      share_rows(static_cast<int64_t>(rows.size()), rank, world, deterministic);
  // Each size-variable field's longest item in the whole batch.
  const TensorStore& store = *bv.ds->store;
  std::map<std::string, int64_t> longest;
  for (const types::FieldInfo& f : store.info->fields)
    if (f.type.is_tensor() && var_axis(f) >= 0)
      for (int64_t row : rows)
        longest[f.name] = std::max(longest[f.name], item_length(store, f, row));
  std::vector<int64_t> mine(rows.begin() + start, rows.begin() + end);
  std::shared_ptr<RecordValue> r;
  if (mine.empty() && !rows.empty()) {
    // Note [Empty shares]: a batch smaller than the device count leaves
    // the last ranks no rows, but they still run the step and its
    // collectives, so their share must have every field (a padded field
    // and its mask too, which rows of nothing cannot shape): one row of
    // the batch, padded like the others, cut to none.
    r = bv.make_batch_of_rows({rows[0]}, &longest, device);
    for (auto& [name, t] : r->fields) t = ops::slice(t, 0, 0, 0);
  } else {
    r = bv.make_batch_of_rows(mine, &longest, device);
  }
  r->share_start = start;
  r->batch_rows = static_cast<int64_t>(rows.size());
  return r;
}

}  // namespace

struct BatchShares::Walk {
  std::shared_ptr<const BatchesValue> bv;
  std::shared_ptr<const std::vector<int64_t>> order;
  std::unique_ptr<Prefetcher> loader;
  int64_t last_k = -1;
  std::shared_ptr<RecordValue> last;
  uint64_t used = 0;
};

BatchShares::BatchShares(int rank,
                         int world,
                         bool deterministic,
                         ops::Device device)
    : rank_(rank),
      world_(world),
      deterministic_(deterministic),
      device_(device) {}
BatchShares::~BatchShares() = default;

BatchShares::Walk& BatchShares::walk(const LazyBatch& b) {
  auto it = walks_.find(b.walk);
  if (it == walks_.end()) {
    if (walks_.size() >= kWalksKept) {
      auto oldest = std::min_element(
          walks_.begin(), walks_.end(), [](const auto& x, const auto& y) {
            return x.second->used < y.second->used;
          });
      walks_.erase(oldest);
    }
    auto w = std::make_unique<Walk>();
    w->bv = b.bv;
    w->order = std::make_shared<const std::vector<int64_t>>(b.bv->order());
    it = walks_.emplace(b.walk, std::move(w)).first;
  }
  it->second->used = ++uses_;
  return *it->second;
}

std::shared_ptr<RecordValue> BatchShares::share(const LazyBatch& b) {
  Walk& w = walk(b);
  if (b.k == w.last_k) return w.last;  // the same batch passed again
  // The controller walks in order; anything else (a batch kept from an
  // earlier step) restarts the loading at this batch.
  if (!w.loader || w.loader->next_index() != b.k) {
    w.loader.reset();
    auto bv = w.bv;
    auto order = w.order;
    int rank = rank_, world = world_;
    bool deterministic = deterministic_;
    ops::Device device = device_;
    w.loader = std::make_unique<Prefetcher>(
        b.k, bv->length(), bv->threads, [=](int64_t k) {
          return build_share(
              *bv, *order, k, rank, world, deterministic, device);
        });
  }
  w.last_k = -1;
  w.last = w.loader->take();
  w.last_k = b.k;
  return w.last;
}

std::optional<ShareFailure> BatchShares::resolve(std::vector<Value>& args,
                                                 DeviceContext& d) {
  std::optional<ShareFailure> failure;
  bool streamed = false;
  for (Value& v : args) {
    if (v.kind != Value::Kind::Record) continue;
    const LazyBatch* lazy = LazyBatch::of(*v.as<RecordValue>());
    if (!lazy) continue;
    streamed = streamed || lazy->bv->ds->store->checked_as_loaded();
    if (failure) continue;
    try {
      v = Value::object(Value::Kind::Record, share(*lazy));
    } catch (const DataError& e) {
      failure = ShareFailure{true, e.kind, e.what(), e.notes};
    } catch (const std::bad_alloc&) {
      failure = ShareFailure{
          true, "IOError", "out of memory while loading a batch", {}};
    }
  }
  // A dataset in memory was checked whole when it loaded: its shares
  // cannot fail, and the ranks need not agree.
  if (!streamed || !d.active()) return failure;
  ops::Tensor flag =
      ops::Tensor::scalar(failure ? 1.0 : 0.0, types::DType::I64).reshape({1});
  {
    Waiting w(d);
    d.comm->all_reduce(flag, dist::ReduceOp::Max, dist::Options{});
  }
  if (!failure && flag.at(0) > 0) failure = ShareFailure{false, "", "", {}};
  return failure;
}

}  // namespace ss::devices::lower
