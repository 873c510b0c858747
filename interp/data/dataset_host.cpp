// Datasets written in a host language (Note [Datasets written in a host
// language] in dataset.h): their batches, checked as they load.
#include <atomic>
#include <cstring>

#include "interp/data/dataset.h"
#include "interp/data/dataset_impl.h"

namespace ss::data {

namespace {

std::atomic<HostSourceMaker> g_maker{nullptr};

// Item [i] of [got]'s rows alone, as a store of one item.
TensorStore one_item(const TensorStore& s, const Rows& got, int64_t i) {
  TensorStore one;
  one.info = s.info;
  one.n = 1;
  for (const auto& [name, t] : got.fields) {
    if (t.rank() == 0 || t.shape()[0] <= i) {
      one.fields[name] = t;  // wrong either way: check_store says how
      continue;
    }
    ops::Shape shape = t.shape();
    shape[0] = 1;
    size_t row = t.nbytes() / t.shape()[0];
    auto keeper = std::make_shared<ops::Tensor>(t);
    one.fields[name] = ops::Tensor::external(
        const_cast<char*>(static_cast<const char*>(t.raw())) + i * row,
        shape,
        t.dtype(),
        keeper);
  }
  for (const auto& [name, v] : got.items)
    if (i < static_cast<int64_t>(v.size())) one.items[name] = {v[i]};
  return one;
}

}  // namespace

void set_host_source_maker(HostSourceMaker m) {
  g_maker.store(m);
}

HostSourceMaker host_source_maker() {
  return g_maker.load();
}

namespace dataset_detail {

Rows load_host_rows(const TensorStore& s, const std::vector<int64_t>& rows) {
  Rows got = s.host->load(rows);
  const int64_t b = static_cast<int64_t>(rows.size());
  for (const auto& [name, t] : got.fields)
    if (t.rank() == 0 || t.shape()[0] != b)
      throw DataError("ShapeError",
                      s.host->name() + ": field `" + name + "` of a batch of " +
                          std::to_string(b) + " items has " +
                          (t.rank() ? std::to_string(t.shape()[0]) : "no") +
                          " rows");
  TensorStore batch;
  batch.info = s.info;
  batch.n = b;
  batch.fields = got.fields;
  batch.items = got.items;
  try {
    check_store(batch, s.host_dims, s.host->name());
  } catch (const DataError&) {
    // The batch as a whole does not fit: which item, by its index in the
    // dataset.
    for (int64_t i = 0; i < b; ++i) {
      try {
        check_store(one_item(s, got, i), s.host_dims, s.host->name());
      } catch (const DataError& e) {
        std::string m = e.what();
        const std::string first = "item 0 of ";
        if (m.rfind(first, 0) == 0)
          m = "item " + std::to_string(rows[i]) + " of " +
              m.substr(first.size());
        throw DataError(e.kind, m, e.notes);
      }
    }
    throw;
  }
  return got;
}

}  // namespace dataset_detail

}  // namespace ss::data
