// Every way the controller of `ss run --devices 'cpu[...]'` changes state
// the workers hold (issue 10, item D), run through the real controller and
// `ss worker` processes on cpu, cpu[0 1] and cpu[0 1 2]: set_lr in the
// controller and in a worker fn, load_into, copy(m), a re-initialised
// model, and what reading opt.lr/opt.step and save see after the workers'
// updates; with them a batch-axis value in logs(...) (devices.md item 6),
// a batch whose last worker gets no rows (with padded fields), and bf16,
// f16 and f64 params.
//
// The oracle is hand computation. The model is Lin (w: [K] = zeros()) and
// the loss mean(y) * sum(w), so d loss / d w_k = mean(y) of the batch, and
// plain SGD gives w_k = -sum over steps of lr_t * mean(y_t). The data are
// 12 points with y = 0..11 in batches of 4 (means 1.5, 5.5, 9.5; 2/1/1 rows
// on three devices). Every number is a small dyadic fraction, exact in f32
// and in bf16, and every sum of shares is exact, so the checks are exact
// (the tolerance 1e-12 is only there for the decimal text).
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "interp/tests/data_test_util.h"
#include "interp/tests/process_util.h"

namespace {

using Run = ss::testing::ProcessRun;

const char* kDevices[] = {"cpu", "cpu[0 1]", "cpu[0 1 2]"};

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Every number in [s] (ints too; a jsonl bool as 1 or 0), in order.
std::vector<double> numbers(const std::string& s) {
  std::vector<double> v;
  std::regex num(R"(-?\d+(\.\d+)?(e-?\d+)?|\btrue\b|\bfalse\b)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), num);
       it != std::sregex_iterator();
       ++it) {
    const std::string t = it->str();
    v.push_back(t == "true" ? 1.0 : t == "false" ? 0.0 : std::stod(t));
  }
  return v;
}

// A scratch folder holding p.ss and the 12 points (pts.csv, y = x = 0..11).
std::string folder(const std::string& name, const std::string& program) {
  std::string d = "/tmp/ss_ctlstate_" + name + "_" + std::to_string(::getpid());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  std::ofstream(d + "/p.ss") << program;
  std::ofstream csv(d + "/pts.csv");
  csv << "x,y\n";
  for (int i = 0; i < 12; ++i) csv << i << "," << i << "\n";
  return d;
}

Run run_on(const std::string& dir, const std::string& devices) {
  return ss::testing::run_ss_process("run --devices '" + devices + "' p.ss",
                                     dir,
                                     "SHAPESCRIPT_COLLECTIVE_TIMEOUT=20");
}

void check_numbers(const std::string& what,
                   const std::string& text,
                   const std::vector<double>& want) {
  INFO(what << ":\n" << text);
  std::vector<double> got = numbers(text);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("number " << i);
    CHECK(got[i] == Approx(want[i]).margin(1e-12));
  }
}

// Runs [program] on each device list; what it prints, and [file] if
// given, must be [want] / [want_file].
void expect_everywhere(const std::string& name,
                       const std::string& program,
                       const std::vector<double>& want,
                       const std::string& file = "",
                       const std::vector<double>& want_file = {}) {
  std::string d = folder(name, program);
  for (const char* devices : kDevices) {
    INFO("--devices " << devices);
    Run r = run_on(d, devices);
    INFO(r.err);
    REQUIRE(r.rc == 0);
    check_numbers("printed", r.out, want);
    if (!file.empty()) check_numbers(file, slurp(d + "/" + file), want_file);
  }
}

const std::string kLin = R"(dim K = 2

data Pt:
    x: f32
    y: f32

model Lin:
    w: [K] = zeros()

fn loss(m: Lin, batch: [b] Pt) -> f32:
    return mean(batch.y) * sum(m.w)

fn step(mut m: Lin, mut opt: SGD[Lin], batch: [b] Pt) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l, y=batch.y)
)";

}  // namespace

TEST_CASE(
    "set_lr in the controller reaches the workers, and logs(y=batch.y) "
    "is the whole batch",
    "[dist][process][controller_state]") {
  // lr 0, 0.25, 0.5: w_k = -(0.25 * 5.5 + 0.5 * 9.5) = -6.125, so
  // sum(w) = -12.25 (before the fix: 0, the workers kept lr 0). Each
  // step's loss is mean(y) * sum(w) before its update: 0, 0, 9.5 * -2.75.
  // The jsonl rows are the step, the loss and the batch's four y values
  // (before the fix: rank 0's share only).
  std::string main = R"(
fn main():
    let m = Lin.init(seed=0)
    let opt = sgd(m, lr=0.0)
    let out = jsonl("log.jsonl")
    let i = 0
    for batch in dataset(Pt, "pts.csv").batches(4):
        set_lr(opt, 0.25 * i)
        out.write(step(m, opt, batch))
        i = i + 1
    set_lr(opt, 0.125)
    print(opt.lr, opt.step, float(sum(m.w)))
    save("ck.safetensors", m, opt)
    let m2, o2 = load("ck.safetensors", Lin, sgd)
    print(o2.lr, o2.step)
)";
  // Then set_lr right after the last step, with no call after it: reading
  // opt.lr fetches the workers' newer state, which must keep the
  // controller's newer lr, and save must write it (0.125 3, twice).
  expect_everywhere("setlr",
                    kLin + main,
                    {0.125, 3, -12.25, 0.125, 3},
                    "log.jsonl",
                    {0,
                     0,
                     0,
                     1,
                     2,
                     3,  //
                     1,
                     0,
                     4,
                     5,
                     6,
                     7,  //
                     2,
                     -26.125,
                     8,
                     9,
                     10,
                     11});
}

TEST_CASE(
    "set_lr in a worker fn: opt.lr, save and load in the controller see it",
    "[dist][process][controller_state]") {
  // The same schedule set inside the worker fn: the controller's opt.lr
  // must follow it (before the fix: the lr it was made with, 1), and so
  // must the checkpoint's metadata, read back by load.
  std::string main = R"(
fn warm(mut m: Lin, mut opt: SGD[Lin], batch: [b] Pt, lr: float) -> Logs:
    set_lr(opt, lr)
    return step(m, opt, batch)

fn main():
    let m = Lin.init(seed=0)
    let opt = sgd(m, lr=1.0)
    let i = 0
    for batch in dataset(Pt, "pts.csv").batches(4):
        warm(m, opt, batch, 0.25 * i)
        print(opt.lr)
        i = i + 1
    save("ck.safetensors", m, opt)
    let m2, o2 = load("ck.safetensors", Lin, sgd)
    print(o2.lr, o2.step, float(sum(m2.w)))
)";
  expect_everywhere("workerlr", kLin + main, {0, 0.25, 0.5, 0.5, 3, -12.25});
}

TEST_CASE("load_into and copy(m) in the controller replace the workers' copy",
          "[dist][process][controller_state]") {
  // lr 0.25 over one epoch: w_k = -0.25 * 16.5 = -4.125 (sum -8.25).
  // load_into puts the zeros back; a second epoch gives -8.25 again (the
  // workers' stale copy would give -16.5). copy(m) is then trained alone
  // with lr 0.5: -8.25 - 2 * 0.5 * 16.5 = -24.75, and m does not move
  // until it is trained itself (-16.5).
  std::string main = R"(
fn main():
    let data = dataset(Pt, "pts.csv")
    let m = Lin.init(seed=0)
    let opt = sgd(m, lr=0.25)
    save("zeros.safetensors", m)
    for batch in data.batches(4):
        step(m, opt, batch)
    print(float(sum(m.w)))
    load_into(m, "zeros.safetensors")
    print(float(sum(m.w)))
    for batch in data.batches(4):
        step(m, opt, batch)
    print(float(sum(m.w)), opt.step)
    let t = copy(m)
    let topt = sgd(t, lr=0.5)
    for batch in data.batches(4):
        step(t, topt, batch)
    print(float(sum(t.w)), float(sum(m.w)))
    for batch in data.batches(4):
        step(m, opt, batch)
    print(float(sum(t.w)), float(sum(m.w)), opt.step, topt.step)
    m = Lin.init(seed=3)
    opt = sgd(m, lr=0.25)
    for batch in data.batches(4):
        step(m, opt, batch)
    print(float(sum(m.w)), opt.step)
)";
  expect_everywhere(
      "loadcopy",
      kLin + main,
      {-8.25, 0, -8.25, 6, -24.75, -8.25, -24.75, -16.5, 9, 3, -8.25, 3});
}

TEST_CASE(
    "zeros_like(m) in the controller, gradients accumulated over calls and "
    "scaled there",
    "[dist][process][controller_state]") {
  // After one epoch with lr 0.25 (w_k = -4.125), zeros_like(m) is zero,
  // the gradients of the three batches add up to 1.5 + 5.5 + 9.5 = 16.5
  // per k, and applying half of them with lr 0.25 moves w_k by -2.0625:
  // sum(w) = 2 * (-4.125 - 2.0625) = -12.375.
  std::string main = R"(
fn grads_of(m: Lin, batch: [b] Pt) -> Grads[Lin]:
    let l, g = value_and_grad(loss, m, batch)
    return g

fn add_grads(acc: Grads[Lin], g: Grads[Lin]) -> Grads[Lin]:
    return acc + g

fn apply(mut m: Lin, mut opt: SGD[Lin], g: Grads[Lin]):
    update(m, opt, g)

fn main():
    let data = dataset(Pt, "pts.csv")
    let m = Lin.init(seed=0)
    let opt = sgd(m, lr=0.25)
    for batch in data.batches(4):
        step(m, opt, batch)
    let acc = zeros_like(m)
    print(float(sum(acc.w)))
    for batch in data.batches(4):
        acc = add_grads(acc, grads_of(m, batch))
    print(float(sum(acc.w)))
    apply(m, opt, acc * 0.5)
    print(float(sum(m.w)), opt.step)
)";
  expect_everywhere("zeros_like", kLin + main, {0, 33, -12.375, 4});
}

TEST_CASE(
    "a batch whose last worker gets no rows, with padded i64 and f32 fields",
    "[dist][process][controller_state]") {
  // 4 items in batches of 2: on three devices the shares are 1/1/0 (before
  // the fix the empty share had no padded field and the others waited in
  // the first all-reduce). tokens and v share the size variable n; per
  // item, sum over n of tokens + v·mask is 4.5, 5, 18.5, 5, so the batch
  // means are 4.75 and 11.75 and SGD with lr 0.5 ends at w_k = -8.25.
  // The second step's loss is 11.75 * 2 * -2.375. The logged tokens and
  // mask are the whole padded batch, in order.
  std::string program = R"(dim K = 2

data Seq:
    tokens: [n] i64 in 0..8
    v: [n] f32

model Lin:
    w: [K] = zeros()

fn loss(m: Lin, batch: [b] Seq) -> f32:
    let keep = to(batch.mask_n, f32)
    let per = sum(to(batch.tokens, f32) + batch.v * keep, over=n)
    return mean(per) * sum(m.w)

fn step(mut m: Lin, mut opt: SGD[Lin], batch: [b] Seq) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l, tokens=batch.tokens, mask=batch.mask_n)

fn main():
    let m = Lin.init(seed=0)
    let opt = sgd(m, lr=0.5)
    let out = jsonl("log.jsonl")
    for batch in dataset(Seq, "seq/").batches(2):
        out.write(step(m, opt, batch))
    print(opt.step, float(sum(m.w)))
)";
  std::string d = folder("empty", program);
  std::filesystem::create_directories(d + "/seq");
  using data_test::bytes_of;
  using data_test::npy;
  std::vector<int64_t> tok{1, 2, 0, 3, 0, 0, 4, 5, 6, 7, 0, 0};
  std::vector<float> v{0.5f, 1, 0, 2, 0, 0, 1.5f, -1, 3, -2, 0, 0};
  std::vector<int64_t> lens{2, 1, 3, 1};
  data_test::write_file(d + "/seq/tokens.npy",
                        npy("<i8", {4, 3}, bytes_of(tok)));
  data_test::write_file(d + "/seq/tokens_lengths.npy",
                        npy("<i8", {4}, bytes_of(lens)));
  data_test::write_file(d + "/seq/v.npy", npy("<f4", {4, 3}, bytes_of(v)));
  data_test::write_file(d + "/seq/v_lengths.npy",
                        npy("<i8", {4}, bytes_of(lens)));
  for (const char* devices : kDevices) {
    INFO("--devices " << devices);
    Run r = run_on(d, devices);
    INFO(r.err);
    REQUIRE(r.rc == 0);
    check_numbers("printed", r.out, {2, -16.5});
    check_numbers("log.jsonl",
                  slurp(d + "/log.jsonl"),
                  {0, 0,        1, 2, 3, 0, 1, 1, 1, 0,  //
                   1, -55.8125, 4, 5, 6, 7, 0, 0, 1, 1, 1, 1, 0, 0});
  }
}

TEST_CASE("bf16, f16 and f64 params train as on one device",
          "[dist][process][controller_state]") {
  // The set_lr program with w in each dtype: every value of the run
  // (1.5, 5.5, 9.5, their shares' thirds summed and rounded once, -1.375,
  // -6.125) is exact in bf16 and f16, so w_k = -6.125 exactly (before the
  // fix: a WorkerError at the gradient all-reduce).
  for (const char* dt : {"bf16", "f16", "f64"}) {
    INFO(dt);
    std::string lin =
        std::regex_replace(kLin,
                           std::regex(R"(w: \[K\] = zeros\(\))"),
                           std::string("w: [K] ") + dt + " = zeros()");
    lin = std::regex_replace(lin,
                             std::regex(R"(mean\(batch\.y\) \* sum\(m\.w\))"),
                             "mean(batch.y) * sum(to(m.w, f32))");
    std::string main = R"(
fn main():
    let m = Lin.init(seed=0)
    let opt = sgd(m, lr=0.0)
    let i = 0
    for batch in dataset(Pt, "pts.csv").batches(4):
        set_lr(opt, 0.25 * i)
        step(m, opt, batch)
        i = i + 1
    let w = to(m.w, f32)
    print(float(w[0]), float(w[1]), float(sum(w)))
)";
    expect_everywhere(
        std::string("dtype_") + dt, lin + main, {-6.125, -6.125, -12.25});
  }
}

namespace {

// The relative tolerance of a conformance case (`# tolerance: x`), else
// the suite's default.
double case_tolerance(const std::string& text) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex(R"(# tolerance: *([0-9.eE+-]+))")))
    return std::stod(m[1]);
  return 1e-5;
}

}  // namespace

TEST_CASE(
    "the controller-state conformance cases through ss run's processes "
    "equal one device",
    "[dist][process][controller_state]") {
  // Until ss conformance runs several devices through the controller and
  // `ss worker` processes (it runs ranks as threads, main on each), this
  // runs the cases of this work through them. The oracle is the same
  // program on one device, as the suite's; each number must be within the
  // case's own tolerance, relative to the larger magnitude (an absolute
  // floor of tol * 1e-3 keeps values printed as 0 comparable).
  const char* cases[] = {"controller_set_lr",
                         "controller_set_lr_in_worker",
                         "controller_load_into",
                         "controller_copy",
                         "controller_reinit",
                         "controller_grads",
                         "controller_batch_norm",
                         "controller_dropout",
                         "logs_batch_axis",
                         "empty_shares_padded",
                         "param_dtypes_bf16",
                         "param_dtypes_f16",
                         "param_dtypes_f64"};
  for (const char* name : cases) {
    INFO(name);
    std::string path =
        std::string(SS_SOURCE_DIR) + "/conformance/dist/" + name + ".ss";
    std::string text = slurp(path);
    REQUIRE(!text.empty());
    double tol = case_tolerance(text);
    std::string d = folder(std::string("case_") + name, text);
    std::vector<double> one;
    for (const char* devices : kDevices) {
      INFO("--devices " << devices);
      Run r = run_on(d, devices);
      INFO(r.err);
      REQUIRE(r.rc == 0);
      std::vector<double> got = numbers(r.out);
      if (one.empty()) {
        one = got;
        REQUIRE(!one.empty());
        continue;
      }
      REQUIRE(got.size() == one.size());
      for (size_t i = 0; i < one.size(); ++i) {
        INFO("number " << i << ": " << got[i] << ", one device " << one[i]);
        double scale = std::max(std::abs(one[i]), std::abs(got[i]));
        CHECK(std::abs(got[i] - one[i]) <= tol * std::max(scale, 1e-3));
      }
    }
  }
}

TEST_CASE("an error raised on one worker alone is the program's error, at once",
          "[dist][process][controller_state]") {
  // ids = y + 4 over 12 rows: rows 8..11 index past the 12-row table, so
  // only the last worker fails (shares 6/6 and 4/4/4). One device raises
  // the ValueError at the embedding line; several must raise the same,
  // not wait in the next all-reduce until the collective timeout (20 s
  // here; before the fix, a WorkerError after it).
  std::string program = R"(dim K = 2
dim V = 12

data Pt:
    x: f32
    y: f32

model Lin:
    table: [V K] = zeros()

fn loss(m: Lin, batch: [b] Pt) -> f32:
    let ids = to(batch.y, i64) + 4
    return mean(sum(embedding(m.table, ids), over=K))

fn step(mut m: Lin, mut opt: SGD[Lin], batch: [b] Pt) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)

fn main():
    let m = Lin.init(seed=0)
    let opt = sgd(m, lr=0.1)
    for batch in dataset(Pt, "pts.csv").batches(12):
        print(step(m, opt, batch))
)";
  std::string d = folder("one_fails", program);
  for (const char* devices : kDevices) {
    INFO("--devices " << devices);
    auto t0 = std::chrono::steady_clock::now();
    Run r = run_on(d, devices);
    double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    INFO(r.err);
    CHECK(r.rc == 2);  // a runtime error, as on one device
    CHECK(r.err.find("p.ss:13:21: ValueError: embedding: index 12 is "
                     "out of range") != std::string::npos);
    CHECK(r.err.find("WorkerError") == std::string::npos);
    CHECK(secs < 10);
  }
}

TEST_CASE("a bf16 mean across the shares is one device's, bit for bit",
          "[dist][process][controller_state]") {
  // 2999 labels + 1 (sum 16578): one device rounds the sum to bf16
  // (16640) and divides, 5.5625, as torch does (checked with torch 1.13:
  // torch.full(...).to(torch.bfloat16).mean()). The shares' sums and
  // counts are added in f32 and rounded the same way (Note
  // [Half-precision means]); before, each share's sum and its count (1500
  // is not a bf16 integer) were rounded to bf16 first: 5.53125.
  std::string program = R"(dim D = 784
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

fn stat(batch: [b] Digit) -> bf16:
    return mean(to(to(batch.label, f32) + 1.0, bf16))

fn main():
    for batch in synthetic_digits(Digit, 2999, seed=5).batches(2999):
        print(float(to(stat(batch), f32)))
        print(float(sum(to(batch.label, f32) + 1.0)))
)";
  std::string d = folder("bf16_mean", program);
  for (const char* devices : kDevices) {
    INFO("--devices " << devices);
    Run r = run_on(d, devices);
    INFO(r.err);
    REQUIRE(r.rc == 0);
    check_numbers("printed", r.out, {5.5625, 16578});
  }
}
