// Batches: the order, the assembly of one batch (with padding and masks for
// size-variable fields) and the loader thread pool behind the cursor.
#include "interp/data/batches.h"

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

#include "interp/eval/device_hooks.h"
#include "interp/eval/interpreter.h"
#include "ops/core/op_error.h"
#include "ops/core/philox.h"

namespace ss::data {

using namespace ss::eval;

std::vector<int64_t> shuffle_order(int64_t count, uint64_t seed) {
  std::vector<int64_t> v(count);
  std::iota(v.begin(), v.end(), int64_t{0});
  uint64_t key = ops::philox::key_for(seed, "batches");
  for (int64_t i = count - 1; i > 0; --i) {
    ops::philox::Block b = ops::philox::draw(key, static_cast<uint64_t>(i), 0);
    uint64_t r = (static_cast<uint64_t>(b[0]) << 32) | b[1];
    int64_t j = static_cast<int64_t>(r % static_cast<uint64_t>(i + 1));
    std::swap(v[i], v[j]);
  }
  return v;
}

std::vector<int64_t> BatchesValue::order() const {
  // The order is held whole (a permutation when shuffled): a cycling
  // take of 2^62 items is a ValueError here, where it aborted in
  // std::vector (issue 32 item 4).
  try {
    ops::check_host_allocatable(
        static_cast<uint64_t>(ds->count),
        sizeof(int64_t),
        "the order of " + std::to_string(ds->count) + " items");
  } catch (const ops::OpError& e) {
    throw DataError(
        "ValueError",
        "batches of " + std::to_string(ds->count) + " items: " + e.detail());
  }
  if (shuffle) return shuffle_order(ds->count, seed);
  std::vector<int64_t> v(ds->count);
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

int64_t BatchesValue::length() const {
  int64_t c = ds->count;
  return drop_last ? c / n : (c + n - 1) / n;
}

std::vector<int64_t> BatchesValue::batch_rows(const std::vector<int64_t>& ord,
                                              int64_t k) const {
  int64_t lo = k * n;
  int64_t b = std::min<int64_t>(n, static_cast<int64_t>(ord.size()) - lo);
  std::vector<int64_t> rows(std::max<int64_t>(b, 0));
  for (int64_t i = 0; i < b; ++i) rows[i] = ds->index(ord[lo + i]);
  return rows;
}

std::shared_ptr<RecordValue> BatchesValue::make_batch(
    const std::vector<int64_t>& ord, int64_t k, ops::Device device) const {
  return make_batch_of_rows(batch_rows(ord, k), nullptr, device);
}

std::shared_ptr<RecordValue> BatchesValue::make_batch_of_rows(
    const std::vector<int64_t>& rows,
    const std::map<std::string, int64_t>* pad_to,
    ops::Device device) const {
  const TensorStore& s = *ds->store;
  int64_t b = static_cast<int64_t>(rows.size());
  // A streamed store's items are checked here.
  Rows got = load_rows(s, rows, device);
  auto r = std::make_shared<RecordValue>();
  r->info = s.info;
  r->batch = true;
  r->fields = std::move(got.fields);
  for (const auto& [name, items] : got.items) {
    if (items.empty()) continue;
    // The varying axis and its variable's name, from the record type.
    int axis = 0;
    std::string var = "n";
    if (const types::FieldInfo* f = s.info->field(name))
      if (int va = var_axis(*f); va >= 0) {
        axis = va;
        var = f->type.shape[va].name;
      }
    const ops::Tensor& first = items[0];
    ops::Shape item = first.shape();
    int64_t longest = 0;
    for (int64_t i = 0; i < b; ++i)
      longest = std::max(longest, items[i].shape()[axis]);
    if (pad_to)
      if (auto it = pad_to->find(name); it != pad_to->end())
        longest = std::max(longest, it->second);
    item[axis] = longest;
    ops::Shape shape = item;
    shape.insert(shape.begin(), b);
    double pad_value = 0;
    if (const types::FieldInfo* f = s.info->field(name)) pad_value = f->pad;
    ops::Tensor x = ops::Tensor::full(shape, pad_value, first.dtype());
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; ++i) outer *= item[i];
    for (size_t i = axis + 1; i < item.size(); ++i) inner *= item[i];
    size_t es = types::dtype_size(first.dtype());
    char* dst = static_cast<char*>(x.raw());
    for (int64_t i = 0; i < b; ++i) {
      const ops::Tensor& t = items[i];
      int64_t len = t.shape()[axis];
      const char* src = static_cast<const char*>(t.raw());
      char* d = dst + i * outer * longest * inner * es;
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(d + o * longest * inner * es,
                    src + o * len * inner * es,
                    len * inner * es);
    }
    r->fields[name] = x;
    std::string mask = "mask_" + var;
    if (r->fields.count(mask))
      continue;  // another field with the same variable
    ops::Tensor m = ops::Tensor::zeros({b, longest}, types::DType::Bool);
    uint8_t* mp = m.data<uint8_t>();
    for (int64_t i = 0; i < b; ++i) {
      int64_t len = items[i].shape()[axis];
      std::memset(mp + i * longest, 1, len);
    }
    r->fields[mask] = m;
  }
  // The padded fields and masks, built here, go where the batch goes (a
  // TensorDataset's fixed fields are there already).
  if (device.kind != ops::Device::Kind::Cpu)
    for (auto& [name, t] : r->fields) t = t.to(device);
  return r;
}

struct Prefetcher::State {
  Build build;
  int64_t total = 0, taken = 0, next_claim = 0, ahead = 0;
  std::mutex mu;
  std::condition_variable work_cv, ready_cv;
  std::map<int64_t, std::shared_ptr<RecordValue>> ready;
  std::map<int64_t, std::exception_ptr> errors;
  bool stop = false;
  std::vector<std::thread> threads;

  void work() {
    const ops::LoaderThread loader;  // Note [A copy stream]
    for (;;) {
      int64_t k;
      {
        std::unique_lock<std::mutex> lk(mu);
        work_cv.wait(lk, [&] {
          return stop || next_claim >= total || next_claim < taken + ahead;
        });
        if (stop || next_claim >= total) return;
        k = next_claim++;
      }
      std::shared_ptr<RecordValue> r;
      std::exception_ptr err;
      try {
        r = build(k);
      } catch (...) {
        err = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lk(mu);
        if (err)
          errors[k] = err;
        else
          ready[k] = std::move(r);
      }
      ready_cv.notify_all();
    }
  }
};

Prefetcher::Prefetcher(int64_t first, int64_t total, int threads, Build build)
    : s_(std::make_unique<State>()) {
  s_->build = std::move(build);
  s_->total = total;
  s_->taken = s_->next_claim = first;
  int t = std::max(0, threads);
  s_->ahead = 2 * static_cast<int64_t>(t);
  for (int i = 0; i < t && first + i < total; ++i)
    s_->threads.emplace_back([st = s_.get()] { st->work(); });
}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lk(s_->mu);
    s_->stop = true;
  }
  s_->work_cv.notify_all();
  for (auto& t : s_->threads) t.join();
}

int64_t Prefetcher::next_index() const {
  std::lock_guard<std::mutex> lk(s_->mu);
  return s_->taken;
}

std::shared_ptr<RecordValue> Prefetcher::take() {
  State& s = *s_;
  if (s.threads.empty()) return s.build(s.taken++);
  std::unique_lock<std::mutex> lk(s.mu);
  const int64_t k = s.taken;
  s.ready_cv.wait(lk, [&] { return s.ready.count(k) || s.errors.count(k); });
  ++s.taken;
  std::shared_ptr<RecordValue> r;
  std::exception_ptr err;
  if (auto e = s.errors.find(k); e != s.errors.end()) {
    err = e->second;
    s.errors.erase(e);
  } else {
    auto it = s.ready.find(k);
    r = std::move(it->second);
    s.ready.erase(it);
  }
  lk.unlock();
  // One slot opened: one loader claims it (all of them woke, and all but
  // one slept again, every batch: issue 29's thread hand-offs).
  s.work_cv.notify_one();
  if (err) std::rethrow_exception(err);
  return r;
}

int64_t LazyBatch::size() const {
  return std::max<int64_t>(
      0,
      std::min<int64_t>(bv->n,
                        static_cast<int64_t>(order->size()) - k * bv->n));
}

void LazyBatch::load_into(Interpreter& in, RecordValue& r) const {
  loaded = true;
  try {
    r.fields = bv->make_batch(*order, k)->fields;
  } catch (const DataError& e) {
    in.fail(e.kind, loop, e.what(), e.notes);
  }
}

const LazyBatch* LazyBatch::of(const RecordValue& r) {
  // The one kind of UnloadedBatch.
  return dynamic_cast<const LazyBatch*>(r.lazy.get());
}

namespace {

std::atomic<uint64_t> g_next_walk{1};

struct BatchCursor : Cursor {
  std::shared_ptr<const BatchesValue> bv;
  Interpreter* in = nullptr;
  diag::Span loop;
  std::shared_ptr<const std::vector<int64_t>> ord;
  int64_t total = 0;
  // Several devices, in the controller: lazy batches, no loading here.
  bool lazy = false;
  uint64_t walk = 0;
  int64_t handed = 0;
  std::shared_ptr<const LazyBatch> last;  // the batch handed out last
  std::unique_ptr<Prefetcher> loader;

  BatchCursor(std::shared_ptr<const BatchesValue> b,
              Interpreter& i,
              diag::Span l)
      : bv(std::move(b)), in(&i), loop(l) {
    try {
      ord = std::make_shared<const std::vector<int64_t>>(bv->order());
    } catch (const DataError& e) {
      in->fail(e.kind, loop, e.what(), e.notes);
    }
    total = bv->length();
    lazy = placement_of(*in).loads_on_workers;
    if (lazy) {
      walk = g_next_walk.fetch_add(1);
      return;
    }
    // Built on the host and placed where the run computes (Note [Values
    // on a GPU] in interp/devices/one_device.cpp) by the loader threads,
    // so a GPU's upload runs beside the step (Note [Uploads off the step]
    // in ops/cuda/cuda_memory.cu); on the CPU the batch stays as it is.
    loader = std::make_unique<Prefetcher>(
        0,
        total,
        bv->threads,
        [bv = bv, ord = ord, device = placement_of(i).device](int64_t k) {
          return bv->make_batch(*ord, k, device);
        });
  }

  // A streamed (or host's) batch the loop body neither sent to the workers nor
  // read is checked here, so a bad item stops the program as on one device
  // (after that body, not before it: the workers check the batches they get).
  void check_unloaded() {
    if (!last || last->loaded || !bv->ds->store->checked_as_loaded()) return;
    last->loaded = true;
    try {
      load_rows(*bv->ds->store, bv->batch_rows(*ord, last->k));
    } catch (const DataError& e) {
      in->fail(e.kind, loop, e.what(), e.notes);
    }
  }

  bool next(Value& out) override {
    if (lazy) {
      check_unloaded();
      if (handed >= total) return false;
      auto r = std::make_shared<RecordValue>();
      r->info = bv->ds->store->info;
      r->batch = true;
      auto l = std::make_shared<LazyBatch>();
      l->bv = bv;
      l->order = ord;
      l->k = handed++;
      l->walk = walk;
      l->loop = loop;
      last = l;
      r->lazy = std::move(l);
      out = Value::object(Value::Kind::Record, std::move(r));
      return true;
    }
    if (loader->next_index() >= total) return false;
    try {
      out = Value::object(Value::Kind::Record, loader->take());
      return true;
    } catch (const DataError& e) {
      // A bad item of a streamed dataset, found as its batch loaded (here
      // or on a loader thread): raised here, at the loop, before the batch
      // reaches the loop body.
      in->fail(e.kind, loop, e.what(), e.notes);
    } catch (const std::bad_alloc&) {
      in->fail("IOError", loop, "out of memory while loading a batch");
    }
  }
};

}  // namespace

std::unique_ptr<Cursor> BatchesValue::cursor(Interpreter& in, diag::Span loop) {
  return std::make_unique<BatchCursor>(
      std::make_shared<BatchesValue>(*this), in, loop);
}

}  // namespace ss::data
