// TensorDataset views: split, take (cycling), items and the for-loop cursor.
#include <cmath>

#include "interp/data/dataset.h"
#include "interp/data/dataset_impl.h"
#include "interp/eval/interpreter.h"

namespace ss::data {

using namespace ss::eval;

using namespace dataset_detail;

std::shared_ptr<DatasetValue> DatasetValue::of(
    std::shared_ptr<const TensorStore> s) {
  auto d = std::make_shared<DatasetValue>();
  d->count = d->base_count = s->n;
  d->store = std::move(s);
  return d;
}

std::shared_ptr<DatasetValue> DatasetValue::plain() const {
  auto d = std::make_shared<DatasetValue>(*this);
  if (offset + count <= base_count) {
    d->base = base + offset;
    d->offset = 0;
    return d;
  }
  // A cycling view (a take past the end): list its store indices.
  auto idx = std::make_shared<std::vector<int64_t>>(count);
  for (int64_t k = 0; k < count; ++k) (*idx)[k] = index(k);
  d->idx = idx;
  d->base = d->offset = 0;
  d->base_count = count;
  return d;
}

std::pair<std::shared_ptr<DatasetValue>, std::shared_ptr<DatasetValue>>
DatasetValue::split(double frac) const {
  if (!(frac > 0 && frac < 1))
    throw DataError("ValueError",
                    "split needs a fraction strictly between 0 "
                    "and 1, not " +
                        num_str(frac));
  int64_t k = static_cast<int64_t>(std::llround(frac * count));
  auto a = plain();
  auto b = std::make_shared<DatasetValue>(*a);
  a->count = k;
  b->base = a->base + k;
  b->count = count - k;
  a->base_count = a->count;
  b->base_count = b->count;
  return {a, b};
}

std::shared_ptr<DatasetValue> DatasetValue::take(int64_t n) const {
  if (n < 0)
    throw DataError(
        "ValueError",
        "take needs a count of 0 or more, not " + std::to_string(n));
  if (n > 0 && count == 0)
    throw DataError(
        "ValueError",
        "take of " + std::to_string(n) + " items from an empty dataset");
  auto d = plain();
  d->base_count = count;
  d->count = n;
  return d;
}

std::shared_ptr<RecordValue> DatasetValue::item(int64_t k) const {
  Rows got = load_rows(*store, {index(k)});
  auto r = std::make_shared<RecordValue>();
  r->info = store->info;
  for (const auto& [name, t] : got.fields)
    r->fields[name] =
        t.reshape(ops::Shape(t.shape().begin() + 1, t.shape().end()));
  for (const auto& [name, v] : got.items) r->fields[name] = v[0];
  return r;
}

namespace {
struct DatasetCursor : Cursor {
  std::shared_ptr<const DatasetValue> ds;
  Interpreter* in = nullptr;
  diag::Span loop;
  int64_t k = 0;
  bool next(Value& out) override {
    if (k >= ds->count) return false;
    std::shared_ptr<RecordValue> r;
    try {
      r = ds->item(k++);
    } catch (const DataError& e) {
      in->fail(e.kind, loop, e.what(), e.notes);
    }
    out = Value::object(Value::Kind::Record, std::move(r));
    return true;
  }
};
}  // namespace

std::unique_ptr<Cursor> DatasetValue::cursor(Interpreter& in, diag::Span loop) {
  auto c = std::make_unique<DatasetCursor>();
  c->ds = std::make_shared<DatasetValue>(*this);
  c->in = &in;
  c->loop = loop;
  return c;
}

}  // namespace ss::data
