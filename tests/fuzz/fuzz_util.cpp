// The fuzz targets' shared helpers (fuzz_util.h).
#include "tests/fuzz/fuzz_util.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <numeric>
#include <typeinfo>

#include "interp/check/checker.h"
#include "interp/data/safetensors.h"

namespace ss::fuzz {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz finding in %s: %s\n", what, detail.c_str());
  std::abort();
}

// The scratch directory: mkdtemp'd once, removed at normal exit (libFuzzer
// and the replay exit through exit(); a crash leaves it in the temp dir,
// named after the pid, for the input's post-mortem).
struct Scratch {
  std::string dir;
  Scratch() {
    std::string t = (fs::temp_directory_path() / "ss_fuzz.XXXXXX").string();
    if (!::mkdtemp(t.data())) finding("scratch", std::strerror(errno));
    dir = t;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

Scratch& scratch() {
  static Scratch s;
  return s;
}

// Every record a loader target reads into, and the dims they use.
const char* kRecords = R"(
dim F = 4
dim P = 4
dim D = 784
data Vec:
    x: [F] f32
    y: i64 in 0..10
data Seq:
    tokens: [n] i64 pad=-1
    y: i64
data Col:
    x: [F] f32
data Toks:
    tokens: [n] i64
data Img:
    img: [P] in 0.0..=1.0
    label: i64 in 0..10
data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..10
data Mixed:
    a: f16
    b: bool
    c: i32 in -5..5
    d: [2] f64
fn main():
    print(1)
)";

struct Records {
  diag::SourceMap sm;
  diag::Diagnostics diags;
  std::unique_ptr<check::Program> prog;
};

const Records& records() {
  static const std::unique_ptr<Records> r = [] {
    auto r = std::make_unique<Records>();
    r->prog =
        check::check_source("fuzz_records.ss", kRecords, r->sm, r->diags, {});
    if (!r->prog)
      finding("fuzz_records.ss", diag::render_terminal(r->diags, r->sm));
    return r;
  }();
  return *r;
}

// On a stack as large as `ss` gives every command (Note [A deep stack] in
// interp/cli/main.cpp: 1 GiB, reserved, not touched): the checker's depth
// limits are set for that stack, so the main thread's 8 MiB would report
// nesting that `ss` accepts as a stack overflow. One thread serves every
// input: ASan clears the shadow of a thread's whole stack (128 MiB for
// 1 GiB) when it ends, which made a thread per input 90% of the time.
constexpr size_t kStackBytes = size_t{1} << 30;

// The deep-stack thread and the one body it is given at a time.
struct DeepStack {
  std::mutex mu;
  std::condition_variable cv;
  const std::function<void()>* body = nullptr;

  DeepStack() {
    pthread_attr_t attr;
    pthread_t t;
    if (pthread_attr_init(&attr) != 0 ||
        pthread_attr_setstacksize(&attr, kStackBytes) != 0 ||
        pthread_create(&t, &attr, &DeepStack::serve, this) != 0)
      finding("deep stack", "no thread with a 1 GiB stack");
    pthread_attr_destroy(&attr);
    pthread_detach(t);  // it serves until the process exits
  }

  static void* serve(void* p) {
    auto* self = static_cast<DeepStack*>(p);
    std::unique_lock<std::mutex> lock(self->mu);
    for (;;) {
      self->cv.wait(lock, [&] { return self->body != nullptr; });
      (*self->body)();
      self->body = nullptr;
      self->cv.notify_all();
    }
  }

  void run(const std::function<void()>& f) {
    std::unique_lock<std::mutex> lock(mu);
    body = &f;
    cv.notify_all();
    cv.wait(lock, [&] { return body == nullptr; });
  }
};

}  // namespace

void on_deep_stack(const std::function<void()>& f) {
  static DeepStack* stack = new DeepStack;  // never ends: never destroyed
  stack->run(f);
}

void expect_user_errors(const char* what, const std::function<void()>& f) {
  try {
    f();
  } catch (const data::DataError&) {
  } catch (const data::SafetensorsError&) {
  } catch (const std::exception& e) {
    finding(what,
            std::string("uncaught ") + typeid(e).name() + ": " + e.what());
  } catch (...) {
    finding(what, "an exception that is not a std::exception");
  }
}

std::shared_ptr<const std::string> bytes_of(const uint8_t* data, size_t size) {
  return std::make_shared<const std::string>(
      reinterpret_cast<const char*>(data), size);
}

std::string scratch_path(const std::string& name) {
  return scratch().dir + "/" + name;
}

std::string write_scratch(const std::string& name,
                          const uint8_t* data,
                          size_t size) {
  std::string path = scratch_path(name);
  if (size_t slash = name.find('/'); slash != name.npos)
    ::mkdir(scratch_path(name.substr(0, slash)).c_str(), 0700);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) finding("scratch", path + ": " + std::strerror(errno));
  for (size_t at = 0; at < size;) {
    ssize_t w = ::write(fd, data + at, size - at);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) finding("scratch", path + ": " + std::strerror(errno));
    at += static_cast<size_t>(w);
  }
  ::close(fd);
  return path;
}

const types::RecordInfo& record(const std::string& name) {
  const types::RecordInfo* r = records().prog->record(name);
  if (!r) finding("fuzz_records.ss", "no record " + name);
  return *r;
}

const std::map<std::string, int64_t>& record_dims() {
  return records().prog->dims();
}

void load_every_item(const data::TensorStore& s) {
  for (int64_t at = 0; at < s.n; at += 64) {
    std::vector<int64_t> rows(std::min<int64_t>(64, s.n - at));
    std::iota(rows.begin(), rows.end(), at);
    (void)data::load_rows(s, rows);
  }
}

void load_dataset_as(const char* what,
                     std::initializer_list<const char*> records,
                     const std::string& path,
                     bool stream) {
  for (const char* r : records) {
    const types::RecordInfo& rec = record(r);
    expect_user_errors(
        what, [&] { (void)data::load_dataset(rec, record_dims(), path, {}); });
    if (stream)
      expect_user_errors(what, [&] {
        load_every_item(*data::stream_dataset(rec, record_dims(), path, {}));
      });
  }
}

}  // namespace ss::fuzz
