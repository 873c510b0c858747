// Data on the workers (devices.md 8): the controller sends each batch as a
// reference and every worker loads its own rows, padded over the whole
// batch; a bad streamed item stops every worker before the step and is
// raised in the controller as one device raises it.
#include <catch2/catch.hpp>
#include <numeric>

#include "interp/devices/lower/batch_shares.h"
#include "interp/devices/protocol/wire.h"
#include "interp/tests/data_test_util.h"
#include "interp/tests/process_util.h"
#include "ops/api.h"

using namespace ss;
using namespace ss::eval;
using ss::devices::lower::BatchShares;
using namespace data_test;

namespace {

// A Seq folder of n items: item i has i % 5 + 1 tokens (10·i + k) and y = i.
std::string seq_dir(const std::string& name, int64_t n) {
  const int64_t L = 5;
  std::vector<int64_t> tok(n * L, 0), lens, y;
  for (int64_t i = 0; i < n; ++i) {
    lens.push_back(i % 5 + 1);
    for (int64_t k = 0; k <= i % 5; ++k) tok[i * L + k] = 10 * i + k;
    y.push_back(i);
  }
  std::string dir = tmp(name);
  write_file(dir + "/tokens.npy", npy("<i8", {n, L}, bytes_of(tok)));
  write_file(dir + "/tokens_lengths.npy", npy("<i8", {n}, bytes_of(lens)));
  write_file(dir + "/y.npy", npy("<i8", {n}, bytes_of(y)));
  return dir;
}

// [k]'s batch of [bv] as the workers of a world of [world] load it, each
// rank's share joined in rank order: must be the whole batch.
std::map<std::string, ops::Tensor> joined_shares(
    const std::shared_ptr<const BatchesValue>& bv, int64_t k, int world) {
  std::map<std::string, std::vector<ops::Tensor>> parts;
  int64_t next_row = 0;
  for (int rank = 0; rank < world; ++rank) {
    BatchShares shares(rank, world);
    LazyBatch lazy;
    lazy.bv = bv;
    lazy.walk = 1;
    lazy.k = k;
    std::shared_ptr<RecordValue> r = shares.share(lazy);
    CHECK(r->share_start == next_row);
    for (const auto& [name, t] : r->fields) {
      parts[name].push_back(t);
      if (name == "y") next_row += t.shape()[0];
    }
  }
  std::map<std::string, ops::Tensor> out;
  for (auto& [name, ts] : parts) out[name] = ops::concat(ts, 0);
  return out;
}

}  // namespace

TEST_CASE("each worker's rows, joined in rank order, are the whole batch",
          "[data][dp]") {
  // 23 items in batches of 7 (the last has 2: 1/1/0 on 3 ranks), shuffled:
  // every field, its padding (to the whole batch's longest) and its mask.
  std::string dir = seq_dir("shares_seq", 23);
  for (bool streamed : {false, true}) {
    auto store = streamed ? stream_dataset(rec("Seq"), dims(), dir, {})
                          : load("Seq", dir);
    auto bv = std::make_shared<BatchesValue>();
    bv->ds = DatasetValue::of(store);
    bv->n = 7;
    bv->shuffle = true;
    bv->seed = 5;
    bv->threads = 2;
    std::vector<int64_t> order = bv->order();
    for (int world : {1, 2, 3}) {
      for (int64_t k = 0; k < bv->length(); ++k) {
        INFO("streamed " << streamed << ", world " << world << ", batch " << k);
        auto whole = bv->make_batch(order, k);
        auto got = joined_shares(bv, k, world);
        REQUIRE(got.size() == whole->fields.size());
        for (const auto& [name, t] : whole->fields) {
          INFO(name);
          CHECK(got.at(name).shape() == t.shape());
          CHECK(got.at(name).to_doubles() == t.to_doubles());
        }
      }
    }
  }
}

TEST_CASE(
    "a worker loads ahead, and serves a batch passed twice or out of "
    "order",
    "[data][dp]") {
  auto bv = std::make_shared<BatchesValue>();
  bv->ds = DatasetValue::of(small_store(50));
  bv->n = 10;
  bv->threads = 2;
  BatchShares shares(1, 2);
  auto rows_of = [&](int64_t k) {
    LazyBatch lazy;
    lazy.bv = bv;
    lazy.walk = 7;
    lazy.k = k;
    return shares.share(lazy)->fields.at("y").to_doubles();
  };
  // Rank 1 of 2 holds rows 5..9 of each batch of 10; y = item % 10.
  CHECK(rows_of(0) == std::vector<double>{5, 6, 7, 8, 9});
  CHECK(rows_of(0) == std::vector<double>{5, 6, 7, 8, 9});  // again
  CHECK(rows_of(1) == std::vector<double>{5, 6, 7, 8, 9});
  CHECK(rows_of(4).size() == 5);  // skipping ahead restarts the loading
  CHECK(rows_of(2).size() == 5);  // and so does going back
}

TEST_CASE("a dataset goes to a worker once, and later batches are references",
          "[data][dp]") {
  ss::devices::protocol::Codec controller(
      ss::devices::protocol::Codec::Side::Controller, *records().prog);
  ss::devices::protocol::Codec worker(
      ss::devices::protocol::Codec::Side::Worker, *records().prog);
  auto bv = std::make_shared<BatchesValue>();
  bv->ds = DatasetValue::of(small_store(1000));
  bv->n = 64;
  auto ord = std::make_shared<const std::vector<int64_t>>(bv->order());
  std::vector<size_t> sizes;
  for (int64_t k = 0; k < 3; ++k) {
    auto r = std::make_shared<RecordValue>();
    r->batch = true;
    auto l = std::make_shared<LazyBatch>();
    l->bv = bv;
    l->order = ord;
    l->k = k;
    l->walk = 3;
    r->lazy = l;
    ss::devices::protocol::Writer w;
    controller.write(w, Value::object(Value::Kind::Record, r));
    sizes.push_back(w.buf.size());
    ss::devices::protocol::Reader rd(w.buf);
    Value v = worker.read(rd);
    CHECK(rd.done());
    auto* got = v.as<RecordValue>();
    const LazyBatch* lazy = LazyBatch::of(*got);
    REQUIRE(lazy);
    CHECK(lazy->k == k);
    CHECK(lazy->walk == 3);
    CHECK(lazy->bv->ds->store->n == 1000);
  }
  // 1000 × (4 f32 + 1 i64) = 24,000 bytes of tensors the first time.
  CHECK(sizes[0] > 24000);
  CHECK(sizes[1] < 200);
  CHECK(sizes[2] == sizes[1]);
}

namespace {

using ss::testing::decimals;
using ss::testing::run_ss_process;

// f32 sums in another order differ in the last bits.
// A Row folder (x: [4] f32, label: i64 in 0..10) of [labels].size()
// items, streamed by the programs below.
std::string row_dir(const std::string& name,
                    const std::vector<int64_t>& labels) {
  int64_t n = static_cast<int64_t>(labels.size());
  std::vector<float> x(n * 4, 0.5f);
  std::string dir = tmp(name);
  write_file(dir + "/x.npy", npy("<f4", {n, 4}, bytes_of(x)));
  write_file(dir + "/label.npy", npy("<i8", {n}, bytes_of(labels)));
  return dir;
}

std::vector<int64_t> digits_labels(int64_t n) {
  std::vector<int64_t> y(n);
  for (int64_t i = 0; i < n; ++i) y[i] = i % 10;
  return y;
}

void same_numbers(const std::string& got, const std::string& want) {
  std::vector<double> a = decimals(got), b = decimals(want);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i)
    CHECK(a[i] == Approx(b[i]).epsilon(1e-5));
}

}  // namespace

TEST_CASE(
    "ss run on cpu[0 1 2]: shares padded over the whole batch print "
    "what one device does",
    "[data][dp][process]") {
  std::string dir = seq_dir("dow_seq", 40);
  std::string path = tmp("dow_seq.ss");
  write_file(path,
             R"(data Seq:
    tokens: [n] i64
    y: i64

fn widths(batch: [b] Seq) -> [b n] i64:
    return batch.tokens + 1

fn total(batch: [b] Seq) -> i64:
    return sum(batch.tokens)

fn main():
    let ds = dataset(Seq, ")" +
                 dir + R"(", stream=true)
    for batch in ds.batches(6, shuffle=2):
        print(widths(batch), total(batch))
    for batch in ds.batches(8):
        print(total(batch), widths(batch))
)");
  ss::testing::ProcessRun one = run_ss_process("run " + path);
  ss::testing::ProcessRun three =
      run_ss_process("run --devices 'cpu[0 1 2]' " + path);
  INFO(one.err << three.err);
  REQUIRE(one.rc == 0);
  CHECK(three.rc == 0);
  CHECK(three.out == one.out);
  CHECK(one.out.size() > 500);
}

TEST_CASE(
    "ss run on cpu[0 1 2]: a bad streamed item stops every worker "
    "before the step and is raised at the loop",
    "[data][dp][process]") {
  std::vector<int64_t> y = digits_labels(600);
  y[437] = 12;  // batch 4 (of 100), row 37: rank 0's share on 3 workers
  std::string dir = row_dir("dow_bad", y);
  std::string path = tmp("dow_bad.ss");
  write_file(path,
             R"(data Row:
    x: [4] f32
    label: i64 in 0..10

model Lin:
    w: [4 10] = normal(std=0.1)

fn loss(m: Lin, batch: [b] Row) -> f32:
    return cross_entropy(batch.x @ m.w, batch.label)

fn step(mut m: Lin, mut opt: SGD[Lin], batch: [b] Row) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)

fn main():
    let m = Lin.init(seed=1)
    let opt = sgd(m, lr=0.1)
    let ds = dataset(Row, ")" +
                 dir + R"(", stream=true)
    for batch in ds.batches(100):
        print(step(m, opt, batch))
)");
  ss::testing::ProcessRun one = run_ss_process("run " + path);
  REQUIRE(one.rc == 2);
  REQUIRE(one.err.find("DomainError") != std::string::npos);
  for (const char* devices : {"cpu[0 1]", "cpu[0 1 2]"}) {
    INFO(devices);
    ss::testing::ProcessRun many =
        run_ss_process(std::string("run --devices '") + devices + "' " + path);
    CHECK(many.rc == 2);
    // The same report (at the `for` line), the same four steps logged.
    CHECK(many.err == one.err);
    same_numbers(many.out, one.out);
    CHECK(decimals(many.out).size() == 4);
  }
  // The bad item in rank 1's rows (row 60 of batch 4 on 2 workers).
  y[437] = 4;
  y[460] = -1;
  row_dir("dow_bad", y);
  ss::testing::ProcessRun one_b = run_ss_process("run " + path);
  ss::testing::ProcessRun two_b =
      run_ss_process("run --devices 'cpu[0 1]' " + path);
  CHECK(one_b.rc == 2);
  CHECK(two_b.rc == 2);
  CHECK(two_b.err == one_b.err);
  same_numbers(two_b.out, one_b.out);
  CHECK(one_b.err.find("item 460 ") != std::string::npos);
}

TEST_CASE(
    "ss run on cpu[0 1]: a bad streamed item in batches the loop "
    "never sends to the workers still stops the program",
    "[data][dp][process]") {
  // The controller checks a streamed batch its loop body neither sent nor
  // read, after that body: the same error as one device, which raises it
  // before.
  std::vector<int64_t> y = digits_labels(500);
  y[321] = 99;
  std::string dir = row_dir("dow_unsent", y);
  std::string path = tmp("dow_unsent.ss");
  write_file(path,
             R"(data Row:
    x: [4] f32
    label: i64 in 0..10

fn total(batch: [b] Row) -> f32:
    return sum(batch.x)

fn main():
    let ds = dataset(Row, ")" +
                 dir + R"(", stream=true)
    let k = 0
    for batch in ds.batches(100):
        k += 1
    print(k)
    for batch in ds.batches(100):
        print(total(batch))
)");
  auto one = run_ss_process("run " + path);
  auto two = run_ss_process("run --devices 'cpu[0 1]' " + path);
  REQUIRE(one.rc == 2);
  CHECK(two.rc == 2);
  CHECK(two.err == one.err);
  CHECK(one.err.find("item 321 ") != std::string::npos);
  CHECK(two.out.find("5") == std::string::npos);  // the first loop never ended
}

TEST_CASE("a bad streamed item found on a worker keeps its help line",
          "[data][process]") {
  // The help of Note [No silent dtype conversion] crosses the wire with
  // the error (kData), as on one device.
  std::string dir = tmp("worker_help");
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(std::string(SS_SOURCE_DIR) +
                                 "/conformance/runtime/worker_stream_shape.ss",
                             dir + "/p.ss",
                             std::filesystem::copy_options::overwrite_existing);
  for (const char* devices : {"cpu", "cpu[0 1]"}) {
    INFO(devices);
    auto r = ss::testing::run_ss_process(
        std::string("run --devices '") + devices + "' p.ss", dir);
    CHECK(r.rc == 2);
    CHECK_THAT(
        r.err,
        Catch::Contains("ShapeError: item 0 of items.safetensors, "
                        "field `label`: expected dtype i64, found f32") &&
            Catch::Contains("   = help: convert the array to i64"));
  }
}

TEST_CASE("pad= values pad the workers' shares, joined as on one device",
          "[data][process]") {
  // Issue 10 item 8 through ss run's worker processes: each worker pads
  // its share to the whole batch's longest item with the field's pad value
  // (the padded arrays below are written by hand from the items).
  std::string dir = tmp("worker_pad");
  std::filesystem::create_directories(dir);
  write_file(dir + "/p.ss", R"(dim N = 4
dim L = 3

data Seq:
    tokens: [n] i64 pad=-1
    v: [n] f32 pad=0.5

model Raw:
    tokens: [N L] i64 = zeros()
    tokens_lengths: [N] i64 = zeros()
    v: [N L] = zeros()
    v_lengths: [N] i64 = zeros()

fn fill(mut r: Raw):
    r.tokens = reshape(tensor([1, 2, 0, 3, 0, 0, 4, 5, 6, 7, 0, 0]), [N, L])
    r.tokens_lengths = reshape(tensor([2, 1, 3, 1]), [N])
    r.v = reshape(tensor([0.5, 1.0, 9.0, 2.0, 9.0, 9.0, 1.5, -1.0, 3.0, -2.0, 9.0, 9.0]), [N, L])
    r.v_lengths = reshape(tensor([2, 1, 3, 1]), [N])

fn show(batch: [b] Seq) -> Logs:
    return logs(tokens=batch.tokens, v=batch.v, mask=batch.mask_n)

fn main():
    let raw = Raw.init(seed=0)
    fill(raw)
    save("seq.safetensors", raw)
    let out = jsonl("out.jsonl")
    for batch in dataset(Seq, "seq.safetensors").batches(4):
        out.write(show(batch))
)");
  const std::string want =
      "{\"step\": 0, \"tokens\": [[1, 2, -1], [3, -1, -1], [4, 5, 6], "
      "[7, -1, -1]], \"v\": [[0.5, 1.0, 0.5], [2.0, 0.5, 0.5], "
      "[1.5, -1.0, 3.0], [-2.0, 0.5, 0.5]], \"mask\": [[true, true, false], "
      "[true, false, false], [true, true, true], [true, false, false]]}\n";
  for (const char* devices : {"cpu", "cpu[0 1 2]"}) {
    INFO(devices);
    auto r = ss::testing::run_ss_process(
        std::string("run --devices '") + devices + "' p.ss", dir);
    INFO(r.err);
    CHECK(r.rc == 0);
    std::ifstream f(dir + "/out.jsonl");
    std::string got((std::istreambuf_iterator<char>(f)), {});
    CHECK(got == want);
  }
}
