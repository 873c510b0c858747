// The fuzz targets' shared helpers (fuzz_util.h).
#include "tests/fuzz/fuzz_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
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

}  // namespace

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
