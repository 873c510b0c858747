// Datasets written in a host language (Note [Datasets written in a host
// language] in dataset.h): their batches, checked as they load.
#include <atomic>

#include "interp/data/dataset.h"
#include "interp/data/dataset_impl.h"

namespace ss::data {

namespace {

std::atomic<HostSourceMaker> g_maker{nullptr};

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
  // Checked as a whole, each item named by its index in the dataset.
  check_store(batch, s.host_dims, s.host->name(), &rows);
  return got;
}

}  // namespace dataset_detail

}  // namespace ss::data
