// Batches: the order, the assembly of one batch (with padding and masks for
// size-variable fields) and the loader thread pool behind the cursor.
#include "interp/eval/lib/batches.h"

#include <condition_variable>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

#include "interp/eval/interpreter.h"
#include "ops/core/philox.h"

namespace ss::eval {

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
  if (shuffle) return shuffle_order(ds->count, seed);
  std::vector<int64_t> v(ds->count);
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

int64_t BatchesValue::length() const {
  int64_t c = ds->count;
  return drop_last ? c / n : (c + n - 1) / n;
}

std::shared_ptr<RecordValue> BatchesValue::make_batch(
    const std::vector<int64_t>& ord, int64_t k) const {
  int64_t lo = k * n;
  int64_t b = std::min<int64_t>(n, static_cast<int64_t>(ord.size()) - lo);
  std::vector<int64_t> rows(std::max<int64_t>(b, 0));
  for (int64_t i = 0; i < b; ++i) rows[i] = ds->index(ord[lo + i]);
  return make_batch_of_rows(rows);
}

std::shared_ptr<RecordValue> BatchesValue::make_batch_of_rows(
    const std::vector<int64_t>& rows) const {
  const TensorStore& s = *ds->store;
  int64_t b = static_cast<int64_t>(rows.size());
  Rows got = load_rows(s, rows);  // a streamed store's items checked here
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
      for (size_t i = 0; i < f->type.shape.size(); ++i)
        if (f->type.shape[i].kind == types::Axis::Kind::Var) {
          axis = static_cast<int>(i);
          var = f->type.shape[i].name;
          break;
        }
    const ops::Tensor& first = items[0];
    ops::Shape item = first.shape();
    int64_t longest = 0;
    for (int64_t i = 0; i < b; ++i)
      longest = std::max(longest, items[i].shape()[axis]);
    item[axis] = longest;
    ops::Shape shape = item;
    shape.insert(shape.begin(), b);
    ops::Tensor x = ops::Tensor::zeros(shape, first.dtype());  // pad value 0
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
  return r;
}

namespace {

struct BatchCursor : Cursor {
  std::shared_ptr<const BatchesValue> bv;
  Interpreter* in = nullptr;
  diag::Span loop;
  std::vector<int64_t> ord;
  int64_t total = 0, consumed = 0;

  // The loader pool (when threads > 0).
  std::mutex mu;
  std::condition_variable work_cv, ready_cv;
  std::map<int64_t, std::shared_ptr<RecordValue>> ready;
  std::map<int64_t, std::exception_ptr> errors;
  int64_t next_claim = 0, ahead = 0;
  bool stop = false;
  std::vector<std::thread> workers;

  BatchCursor(std::shared_ptr<const BatchesValue> b,
              Interpreter& i,
              diag::Span l)
      : bv(std::move(b)), in(&i), loop(l) {
    ord = bv->order();
    total = bv->length();
    int t = std::max(0, bv->threads);
    ahead = 2 * static_cast<int64_t>(t);
    for (int i = 0; i < t && i < total; ++i)
      workers.emplace_back([this] { work(); });
  }

  ~BatchCursor() override {
    {
      std::lock_guard<std::mutex> lk(mu);
      stop = true;
    }
    work_cv.notify_all();
    for (auto& w : workers) w.join();
  }

  void work() {
    for (;;) {
      int64_t k;
      {
        std::unique_lock<std::mutex> lk(mu);
        work_cv.wait(lk, [&] {
          return stop || next_claim >= total || next_claim < consumed + ahead;
        });
        if (stop || next_claim >= total) return;
        k = next_claim++;
      }
      std::shared_ptr<RecordValue> r;
      std::exception_ptr err;
      try {
        r = bv->make_batch(ord, k);
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

  bool next(Value& out) override {
    try {
      return next_batch(out);
    } catch (const DataError& e) {
      // A bad item of a streamed dataset, found as its batch loaded (here
      // or on a loader thread): raised here, at the loop, before the batch
      // reaches the loop body.
      in->fail(e.kind, loop, e.what());
    } catch (const std::bad_alloc&) {
      in->fail("IOError", loop, "out of memory while loading a batch");
    }
  }

  bool next_batch(Value& out) {
    if (consumed >= total) return false;
    std::shared_ptr<RecordValue> r;
    if (workers.empty()) {
      r = bv->make_batch(ord, consumed++);
    } else {
      std::unique_lock<std::mutex> lk(mu);
      ready_cv.wait(
          lk, [&] { return ready.count(consumed) || errors.count(consumed); });
      if (auto e = errors.find(consumed); e != errors.end()) {
        std::exception_ptr err = e->second;
        errors.erase(e);
        ++consumed;
        lk.unlock();
        work_cv.notify_all();
        std::rethrow_exception(err);
      }
      auto it = ready.find(consumed);
      r = std::move(it->second);
      ready.erase(it);
      ++consumed;
      lk.unlock();
      work_cv.notify_all();
    }
    out = Value::object(Value::Kind::Record, std::move(r));
    return true;
  }
};

}  // namespace

std::unique_ptr<Cursor> BatchesValue::cursor(Interpreter& in, diag::Span loop) {
  return std::make_unique<BatchCursor>(
      std::make_shared<BatchesValue>(*this), in, loop);
}

}  // namespace ss::eval
