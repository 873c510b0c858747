// Datasets, batches and progress (library.md, Data), and mean_logs
// (library.md, Output): the runtime entries. The sources are in
// loaders.cpp and synthetic_digits.cpp, the dataset views in dataset.cpp,
// batching and its loader threads in batches.cpp, the bar in progress.cpp.
//
// `ds.take(n)`, `ds.split(f)` and `len(ds)` are the `take`, `split` and
// `len` builtins with a Dataset (or Batches) first argument: the evaluator
// routes those to "dataset.<name>" before any tensor forward.
#include "interp/data/data.h"

#include <cmath>

#include "interp/data/batches.h"
#include "interp/data/dataset.h"
#include "interp/eval/runtime_table.h"

namespace ss::data {

using namespace ss::eval;

using VK = Value::Kind;

namespace {

const types::RecordInfo& record_of(BuiltinCall& c, size_t i) {
  const Value& v = c.arg(i);
  if (v.kind != VK::Type || !v.type || !v.type->record)
    c.fail(
        "ValueError",
        std::string(c.op.name) + " needs a record type (a `data` declaration)");
  return *v.type->record;
}

template <class F>
auto guarded(BuiltinCall& c, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const DataError& e) {
    c.fail(e.kind, e.what(), e.notes);
  } catch (const std::bad_alloc&) {
    c.fail("IOError", std::string(c.op.name) + ": out of memory");
  }
}

Value dataset_value(std::shared_ptr<const TensorStore> s) {
  return Value::object(VK::Dataset, DatasetValue::of(std::move(s)));
}

const DatasetValue& dataset_arg(BuiltinCall& c, size_t i) {
  auto* d = dynamic_cast<DatasetValue*>(c.arg(i).obj.get());
  if (!d)
    c.fail("ValueError",
           std::string(c.op.name) +
               " needs a dataset here (not a progress(...) "
               "wrapper or another value)");
  return *d;
}

Value dataset(BuiltinCall& c) {
  const types::RecordInfo& r = record_of(c, 0);
  if (c.arg(1).kind != VK::Str)
    c.fail("ValueError", "dataset needs a path, a str");
  std::map<std::string, std::string> renames;
  for (const auto& [k, v] : c.keywords) {
    if (v.kind != VK::Str)
      c.fail("ValueError",
             "dataset's " + k + "= names an array in the file, a str");
    if (!r.field(k))
      c.fail("ValueError",
             "dataset renames " + k + ", which is not a field of " + r.name);
    renames[k] = v.s;
  }
  // stream=true: mapped and read as batches load for a .npy directory, a
  // .safetensors file or an .npz; other formats are read now (see
  // dataset.h).
  bool stream = c.flag(2, false);
  return guarded(c, [&] {
    const auto& dims = c.in.program().dims();
    return dataset_value(stream ? stream_dataset(r, dims, c.arg(1).s, renames)
                                : load_dataset(r, dims, c.arg(1).s, renames));
  });
}

Value mnist(BuiltinCall& c) {
  const types::RecordInfo& r = record_of(c, 0);
  if (c.arg(1).kind != VK::Str)
    c.fail("ValueError", "mnist needs a directory, a str");
  return guarded(c, [&] {
    return dataset_value(load_mnist(r, c.in.program().dims(), c.arg(1).s));
  });
}

Value synthetic_digits(BuiltinCall& c) {
  const types::RecordInfo& r = record_of(c, 0);
  int64_t n = c.integer(1, 0);
  uint64_t seed = static_cast<uint64_t>(c.integer(2, 0));
  return guarded(c, [&] {
    return dataset_value(
        make_synthetic_digits(r, c.in.program().dims(), n, seed));
  });
}

Value len(BuiltinCall& c) {
  const Value& v = c.arg(0);
  if (auto* it = dynamic_cast<IterableObject*>(v.obj.get())) {
    int64_t n = it->length();
    if (n < 0) c.fail("ValueError", "len() of an iterable of unknown length");
    return Value::integer(n);
  }
  if ((v.kind == VK::List || v.kind == VK::Tuple) && v.items)
    return Value::integer(static_cast<int64_t>(v.items->size()));
  if (v.kind == VK::Str)
    return Value::integer(static_cast<int64_t>(v.s.size()));
  if (v.kind == VK::Tensor && v.t.rank() > 0)
    return Value::integer(v.t.shape()[0]);
  c.fail("ValueError", "len() of a value without a length");
}

Value take(BuiltinCall& c) {
  if (c.arg(0).kind != VK::Dataset)
    c.fail("ValueError",
           "take of batches: take from the dataset first, "
           "ds.take(n).batches(m)");
  const DatasetValue& d = dataset_arg(c, 0);
  int64_t n = c.integer(1, 0);
  return guarded(c, [&] { return Value::object(VK::Dataset, d.take(n)); });
}

Value split(BuiltinCall& c) {
  if (c.arg(0).kind != VK::Dataset)
    c.fail("ValueError",
           "split of batches: split the dataset first, "
           "ds.split(0.9)");
  const DatasetValue& d = dataset_arg(c, 0);
  if (!c.has(1))
    c.fail("ValueError", "ds.split needs a fraction: ds.split(0.9)");
  double frac = c.number(1, 0);
  return guarded(c, [&] {
    auto [a, b] = d.split(frac);
    return Value::tuple(
        {Value::object(VK::Dataset, a), Value::object(VK::Dataset, b)});
  });
}

Value batches(BuiltinCall& c) {
  const DatasetValue& d = dataset_arg(c, 0);
  auto b = std::make_shared<BatchesValue>();
  b->ds = std::make_shared<DatasetValue>(d);
  b->n = c.integer(1, 1);
  if (b->n <= 0)
    c.fail("ValueError",
           "batches needs a positive batch size, not " + std::to_string(b->n));
  if (c.has(2)) {
    b->shuffle = true;
    b->seed = static_cast<uint64_t>(c.integer(2, 0));
  }
  b->drop_last = c.flag(3, false);
  int64_t t = c.integer(4, 2);
  if (t < 0 || t > 256)
    c.fail(
        "ValueError",
        "loader_threads must be between 0 and 256, not " + std::to_string(t));
  b->threads = static_cast<int>(t);
  return Value::object(VK::Batches, b);
}

Value progress(BuiltinCall& c) {
  return make_progress(c.arg(0));
}

// The number of examples in a batch: its fields' leading size.
double batch_weight(const Value& batch) {
  if (batch.kind == VK::Record)
    if (auto* r = dynamic_cast<RecordValue*>(batch.obj.get()))
      if (r->batch) {
        if (r->lazy) return static_cast<double>(r->lazy->size());
        for (const auto& [name, t] : r->fields)
          if (t.rank() > 0) return static_cast<double>(t.shape()[0]);
      }
  return 1;
}

struct Mean {
  bool host = true;
  double sum = 0;
  std::vector<double> sums;
  ops::Shape shape;
  types::DType dtype = types::DType::F32;
};

Value mean_logs(BuiltinCall& c) {
  auto* it = dynamic_cast<IterableObject*>(c.arg(2).obj.get());
  if (!it) c.fail("ValueError", "mean_logs needs batches (ds.batches(n))");
  std::vector<std::pair<std::string, Mean>> acc;
  double total = 0;
  auto cur = it->cursor(c.in, c.span);
  Value batch;
  while (cur->next(batch)) {
    double w = batch_weight(batch);
    Value r = c.in.call_value(c.arg(0), {c.arg(1), batch}, c.span);
    if (r.kind != VK::Logs)
      c.fail("ValueError", "mean_logs needs a function returning logs(...)");
    const auto& fields = r.as<LogsValue>()->fields;
    if (total == 0) {
      for (const auto& [name, v] : fields) {
        Mean m;
        if (v.kind == VK::Tensor) {
          m.host = false;
          m.shape = v.t.shape();
          m.sums.assign(v.t.numel(), 0.0);
          m.dtype = v.t.dtype() == types::DType::F64 ? types::DType::F64
                                                     : types::DType::F32;
        } else if (!v.is_number()) {
          c.fail("ValueError",
                 "mean_logs averages numbers and tensors, but `" + name +
                     "` is neither");
        }
        acc.push_back({name, m});
      }
    }
    if (fields.size() != acc.size())
      c.fail("ValueError", "mean_logs: every batch must log the same names");
    for (size_t i = 0; i < fields.size(); ++i) {
      const auto& [name, v] = fields[i];
      Mean& m = acc[i].second;
      if (name != acc[i].first)
        c.fail("ValueError",
               "mean_logs: every batch must log the same names, "
               "in the same order (found `" +
                   name + "` for `" + acc[i].first + "`)");
      if (m.host) {
        if (!v.is_number())
          c.fail("ValueError",
                 "mean_logs: `" + name + "` changed kind between batches");
        m.sum += w * v.number();
      } else {
        if (v.kind != VK::Tensor || v.t.shape() != m.shape)
          c.fail("ShapeError",
                 "mean_logs: `" + name + "` changed shape between batches");
        std::vector<double> vals = v.t.to_doubles();
        for (size_t k = 0; k < vals.size(); ++k) m.sums[k] += w * vals[k];
      }
    }
    total += w;
  }
  if (total == 0) c.fail("ValueError", "mean_logs over no batches");
  auto out = std::make_shared<LogsValue>();
  for (auto& [name, m] : acc) {
    if (m.host) {
      out->fields.push_back({name, Value::floating(m.sum / total)});
      continue;
    }
    for (double& x : m.sums) x /= total;
    out->fields.push_back(
        {name,
         Value::tensor(ops::Tensor::from_doubles(m.shape, m.sums, m.dtype))});
  }
  return Value::object(VK::Logs, out);
}

}  // namespace

std::vector<RuntimeEntry> lib_data() {
  return {{"dataset", dataset},
          {"mnist", mnist},
          {"synthetic_digits", synthetic_digits},
          {"len", len},
          {"take", take, Overload::OnDataset},
          {"split", split, Overload::OnDataset},
          {"len", len, Overload::OnDataset},
          {"batches", batches},
          {"progress", progress},
          {"mean_logs", mean_logs}};
}

}  // namespace ss::data
