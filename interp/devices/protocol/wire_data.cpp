// Batches on the control channel (devices.md 8). The controller never
// builds a batch it only passes to the workers: it sends a reference, and
// each worker loads its own rows (lib/batch_shares.h). A reference is
//   store id [+ the store, the first time]  the view  the Batches' options
//   walk  k
// A store in memory goes whole, once per worker (as DDP's processes each
// hold the dataset); a streamed one as its path, which each worker maps.
#include "dist/comm/gloo_comm.h"
#include "interp/data/batches.h"
#include "interp/data/stream_fingerprint.h"
#include "interp/devices/protocol/wire.h"

namespace ss::devices::protocol {

// The evaluator's values and objects, which this code sends and runs.
using namespace ss::eval;
using namespace ss::data;

namespace {

enum StoreKind : uint8_t { kInMemory, kStreamed, kHost };

void write_strings(Writer& w, const std::map<std::string, std::string>& m) {
  w.u32(static_cast<uint32_t>(m.size()));
  for (const auto& [k, v] : m) {
    w.str(k);
    w.str(v);
  }
}

std::map<std::string, std::string> read_strings(Reader& r) {
  std::map<std::string, std::string> m;
  for (uint32_t n = r.u32(), i = 0; i < n; ++i) {
    std::string k = r.str();
    m[k] = r.str();
  }
  return m;
}

}  // namespace

void Codec::write_data_store(Writer& w,
                             const std::shared_ptr<const TensorStore>& s) {
  auto it = c_stores_.find(s.get());
  if (it != c_stores_.end() && it->second.second.lock() == s) {
    w.u64(it->second.first);
    w.u8(0);  // known
    return;
  }
  uint64_t id = next_id_++;
  c_stores_[s.get()] = {id, s};
  w.u64(id);
  w.u8(1);  // sent now
  w.str(s->info ? s->info->name : "");
  w.i64(s->n);
  if (s->stream) {
    // Note [A streamed dataset on every host]
    // Each worker maps the file itself, on its own host when the job
    // spans hosts (in the controller's working directory, where that
    // exists there: Note [A remote worker's working directory]). So the
    // path goes with what the file is here (its size and first bytes),
    // and a worker whose host holds no such file, or another, says so by
    // name at the dataset's first batch, before it reads a row of the
    // wrong data.
    w.u8(kStreamed);
    w.str(s->stream->path);
    w.str(stream_fingerprint(s->stream->path));
    write_strings(w, s->stream->renames);
    w.u32(static_cast<uint32_t>(s->stream->dims.size()));
    for (const auto& [k, v] : s->stream->dims) {
      w.str(k);
      w.i64(v);
    }
    return;
  }
  if (s->host) {
    // Note [Datasets written in a host language]: each worker makes the
    // host's object again from its payload and loads its own rows.
    std::string payload = s->host->payload();
    if (payload.empty())
      throw WireError(s->host->name() +
                      " cannot be sent to the workers (its object cannot be "
                      "made again there)");
    w.u8(kHost);
    w.str(payload);
    return;
  }
  w.u8(kInMemory);
  w.u32(static_cast<uint32_t>(s->fields.size()));
  for (const auto& [name, t] : s->fields) {
    w.str(name);
    w.tensor(t);
  }
  w.u32(static_cast<uint32_t>(s->items.size()));
  for (const auto& [name, items] : s->items) {
    w.str(name);
    w.u64(items.size());
    for (const ops::Tensor& t : items) w.tensor(t);
  }
}

std::shared_ptr<const TensorStore> Codec::read_data_store(Reader& r) {
  uint64_t id = r.u64();
  if (r.u8() == 0) {
    auto it = w_stores_.find(id);
    if (it == w_stores_.end())
      throw WireError("a batch of a dataset this worker was never sent");
    return it->second;
  }
  std::string name = r.str();
  const types::RecordInfo* info = prog_->record(name);
  if (!info)
    throw WireError("the workers' program has no record `" + name + "`");
  int64_t n = r.i64();
  std::shared_ptr<const TensorStore> store;
  const uint8_t kind = r.u8();
  if (kind == kHost) {
    std::string payload = r.str();
    HostSourceMaker make = host_source_maker();
    if (!make)
      throw WireError(
          "a host language's dataset reached a worker with no "
          "host (`ss worker`, not a Python worker)");
    auto s = std::make_shared<TensorStore>();
    s->info = info;
    s->n = n;
    s->host = make(payload);
    s->host_dims = prog_->dims();
    store = s;
  } else if (kind == kStreamed) {
    std::string path = r.str();
    const std::string theirs = r.str();
    if (std::string why =
            fingerprint_difference(stream_fingerprint(path), theirs);
        !why.empty())
      throw DatasetMismatch(
          "the streamed dataset \"" + path + "\" on host " + dist::gloo_host() +
          " is not the controller's: " + why +
          " (each host needs the same file at the same path, a "
          "relative one in the same working directory: "
          "docs/several-hosts.md)");
    std::map<std::string, std::string> renames = read_strings(r);
    std::map<std::string, int64_t> dims;
    for (uint32_t k = r.u32(), i = 0; i < k; ++i) {
      std::string d = r.str();
      dims[d] = r.i64();
    }
    // This worker maps the file itself; a file changed since the
    // controller opened it is caught by the item checks as rows load.
    store = stream_dataset(*info, dims, path, renames);
  } else {
    auto s = std::make_shared<TensorStore>();
    s->info = info;
    s->n = n;
    for (uint32_t k = r.u32(), i = 0; i < k; ++i) {
      std::string f = r.str();
      s->fields[f] = r.host_tensor();
    }
    for (uint32_t k = r.u32(), i = 0; i < k; ++i) {
      std::string f = r.str();
      auto& items = s->items[f];
      uint64_t count = r.u64();
      items.reserve(count);
      for (uint64_t j = 0; j < count; ++j) items.push_back(r.host_tensor());
    }
    store = s;
  }
  w_stores_[id] = store;
  return store;
}

void Codec::write_batch_ref(Writer& w, const LazyBatch& b) {
  b.loaded = true;  // the workers check what they load
  const DatasetValue& ds = *b.bv->ds;
  write_data_store(w, ds.store);
  for (int64_t x : {ds.base, ds.base_count, ds.offset, ds.count}) w.i64(x);
  w.u8(ds.idx != nullptr);
  if (ds.idx) {
    w.u64(ds.idx->size());
    w.raw(ds.idx->data(), ds.idx->size() * sizeof(int64_t));
  }
  w.i64(b.bv->n);
  w.u8(b.bv->shuffle);
  w.u64(b.bv->seed);
  w.u8(b.bv->drop_last);
  w.i64(b.bv->threads);
  w.u64(b.walk);
  w.i64(b.k);
}

Value Codec::read_batch_ref(Reader& r) {
  auto ds = std::make_shared<DatasetValue>();
  ds->store = read_data_store(r);
  for (int64_t* x : {&ds->base, &ds->base_count, &ds->offset, &ds->count})
    *x = r.i64();
  if (r.u8()) {
    uint64_t n = r.u64();
    auto idx = std::make_shared<std::vector<int64_t>>(n);
    for (uint64_t i = 0; i < n; ++i) (*idx)[i] = r.i64();
    ds->idx = std::move(idx);
  }
  auto bv = std::make_shared<BatchesValue>();
  bv->ds = std::move(ds);
  bv->n = r.i64();
  bv->shuffle = r.u8() != 0;
  bv->seed = r.u64();
  bv->drop_last = r.u8() != 0;
  bv->threads = static_cast<int>(r.i64());
  auto lazy = std::make_shared<LazyBatch>();
  lazy->bv = std::move(bv);
  lazy->walk = r.u64();
  lazy->k = r.i64();
  auto rec = std::make_shared<RecordValue>();
  rec->info = lazy->bv->ds->store->info;
  rec->batch = true;
  rec->lazy = std::move(lazy);
  return Value::object(Value::Kind::Record, rec);
}

}  // namespace ss::devices::protocol
