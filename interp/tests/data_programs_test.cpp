// The data pipeline: progress output and `.ss` programs run through the
// interpreter.
#include <catch2/catch.hpp>

#include "interp/tests/data_test_util.h"

namespace fs = std::filesystem;
using namespace ss;
using namespace ss::eval;
using namespace data_test;

// ------------------------------------------------------------ progress, logs

TEST_CASE("progress: a summary line off a terminal, a bar on one", "[data]") {
  auto s = small_store(10);
  NullInterp ni;
  for (int tty : {0, 1}) {
    std::ostringstream err;
    Value p = make_progress(
        Value::object(Value::Kind::Batches, batches_of(s, 3)), tty, &err);
    auto* it = dynamic_cast<IterableObject*>(p.obj.get());
    REQUIRE(it);
    CHECK(it->length() == 4);
    auto cur = it->cursor(ni.in);
    Value v;
    int n = 0;
    while (cur->next(v)) {
      auto logs = std::make_shared<LogsValue>();
      logs->fields.push_back({"loss", Value::floating(0.5 / (n + 1))});
      last_written().logs = logs;
      ++last_written().writes;
      ++n;
    }
    cur.reset();
    CHECK(n == 4);
    std::string text = err.str();
    INFO(text);
    if (tty) {
      CHECK(text.find("\r4/4 [") != std::string::npos);
      CHECK(text.find("loss 0.1250") != std::string::npos);
    } else {
      CHECK(text.rfind("4 it in ", 0) == 0);
      CHECK(text.find("it/s), loss 0.1250\n") != std::string::npos);
    }
  }
  // A list, left early: the summary still comes once.
  std::ostringstream err;
  Value p = make_progress(
      Value::list({Value::integer(1), Value::integer(2)}), 0, &err);
  auto cur = dynamic_cast<IterableObject*>(p.obj.get())->cursor(ni.in);
  Value v;
  REQUIRE(cur->next(v));
  CHECK(v.i == 1);
  cur.reset();
  CHECK(err.str().rfind("1 it in ", 0) == 0);
}

// ------------------------------------------------------------ programs

TEST_CASE(".ss: split, batches and len through the interpreter", "[data]") {
  RunResult r = run_ss("data_split.ss", R"(
dim D = 784
data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..10

fn main():
    let train, test = synthetic_digits(Digit, 1000, seed=0).split(0.9)
    let total = 0
    for batch in train.batches(64, shuffle=1):
        total += len(batch.label)
    print(total, len(train), len(test), len(train.batches(64)))
    for b in progress(test.batches(30, drop_last=true)):
        total += len(b.label)
    print(total)
)");
  INFO(r.message << r.rendered);
  CHECK(r.kind == "");
  CHECK(r.out == "900 900 100 15\n990\n");
}

TEST_CASE(".ss: ds.take(n) cycles", "[data]") {
  RunResult r = run_ss("data_take.ss", R"(
dim D = 784
data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..10

fn main():
    let ds = synthetic_digits(Digit, 100, seed=3)
    let total = 0
    for b in ds.take(250).batches(100, drop_last=true):
        total += len(b.label)
    print(total, len(ds.take(7)))
)");
  INFO(r.message << r.rendered);
  CHECK(r.kind == "");
  CHECK(r.out == "200 7\n");
}

TEST_CASE(".ss: a CSV label outside its domain is a DomainError at the line",
          "[data]") {
  write_file(tmp("labels.csv"), "label,x_0,x_1\n3,0.5,0.5\n12,0.1,0.2\n");
  RunResult r = run_ss("data_domain.ss",
                       std::string(R"(
data Row:
    x: [2] f32
    label: i64 in 0..10

fn main():
    let ds = dataset(Row, ")") +
                           tmp("labels.csv") + R"(")
    print(len(ds))
)");
  INFO(r.message << r.rendered);
  CHECK(r.kind == "DomainError");
  CHECK(r.message.find("item 1") != std::string::npos);
  CHECK(r.message.find("`label`") != std::string::npos);
  CHECK(r.message.find("0..10") != std::string::npos);
  CHECK(r.message.find("12") != std::string::npos);
  CHECK(r.rendered.find(":7:") != std::string::npos);
}

TEST_CASE(".ss: mean_logs weights by example count", "[data]") {
  std::vector<float> x = {1, 2, 3, 4, 5};
  std::vector<int64_t> y = {0, 0, 0, 0, 0};
  write_file(tmp("ml/x.npy"), npy("<f4", {5}, bytes_of(x)));
  write_file(tmp("ml/label.npy"), npy("<i8", {5}, bytes_of(y)));
  RunResult r = run_ss("data_mean_logs.ss", std::string(R"(
data Row:
    x: f32
    label: i64

model M:
    w: [1] = zeros()

fn f(m: M, batch: [b] Row) -> Logs:
    return logs(s=sum(batch.x) / len(batch.label), n=2.0)

fn main():
    let m = M.init(seed=0)
    let ds = dataset(Row, ")") + tmp("ml") + R"(")
    let r = mean_logs(f, m, ds.batches(2))
    print(f"{r.s:.3f} {r.n:.3f}")
)");
  INFO(r.message << r.rendered);
  CHECK(r.kind == "");
  CHECK(r.out == "3.000 2.000\n");
}

TEST_CASE(".ss: an f64 array for an f32 field is a ShapeError with a help line",
          "[data]") {
  // Issue 10 item 7: it was converted silently (precision lost).
  std::vector<double> x = {0.1, 0.2, 0.3, 0.4};
  std::vector<int64_t> y = {1, 0};
  write_file(tmp("f64_for_f32/x.npy"), npy("<f8", {2, 2}, bytes_of(x)));
  write_file(tmp("f64_for_f32/y.npy"), npy("<i8", {2}, bytes_of(y)));
  RunResult r = run_ss("data_f64.ss",
                       std::string(R"(
data Row:
    x: [2]
    y: i64 in 0..2

fn main():
    let ds = dataset(Row, ")") +
                           tmp("f64_for_f32/") + R"(")
    print(len(ds))
)");
  INFO(r.rendered);
  CHECK(r.kind == "ShapeError");
  CHECK(r.out.empty());
  CHECK(r.rendered.find("data_f64.ss:7:14: ShapeError: item 0 of ") !=
        std::string::npos);
  CHECK(r.rendered.find("field `x`: expected dtype f32, found f64") !=
        std::string::npos);
  CHECK(r.rendered.find("  = help: convert the array to f32 before saving it "
                        "(numpy: `x.astype(np.float32)`; torch: `x.float()`), "
                        "or declare the field as f64 (`x: [2] f64`)") !=
        std::string::npos);
}
