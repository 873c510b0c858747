// `ss fmt` as users run it: the binary, on files, folders and stdin
// (interp/cli/cmd_fmt.cpp). The layouts themselves are fmt_test.cpp's.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "interp/tests/process_util.h"

namespace {

namespace fs = std::filesystem;
using ss::testing::run_ss_process;

const char* kMessy = "dim D=4\nfn f(x: [b D]) -> [b D]:\n    return x*2.0\n";
const char* kLaidOut =
    "dim D = 4\n\nfn f(x: [b D]) -> [b D]:\n    return x * 2.0\n";

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

struct Folder {
  fs::path path;
  Folder() {
    path = fs::temp_directory_path() /
           ("ss_fmt_cli_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path / "sub");
  }
  ~Folder() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("ss fmt rewrites files in place and keeps their mode", "[fmt]") {
  Folder d;
  write(d.path / "a.ss", kMessy);
  write(d.path / "b.ss", kLaidOut);
  ::chmod((d.path / "a.ss").c_str(), 0640);
  struct stat before {};
  ::stat((d.path / "b.ss").c_str(), &before);
  auto r = run_ss_process("fmt a.ss b.ss", d.path.string());
  CHECK(r.rc == 0);
  CHECK(r.out.empty());
  CHECK(read(d.path / "a.ss") == kLaidOut);
  CHECK(read(d.path / "b.ss") == kLaidOut);
  struct stat after {};
  ::stat((d.path / "a.ss").c_str(), &after);
  CHECK((after.st_mode & 07777) == 0640);
  // A file already laid out is not written again (same inode, same time).
  struct stat b_after {};
  ::stat((d.path / "b.ss").c_str(), &b_after);
  CHECK(b_after.st_ino == before.st_ino);
  CHECK(b_after.st_mtime == before.st_mtime);
  // Nothing is left beside them.
  int files = 0;
  for (const auto& e : fs::directory_iterator(d.path))
    files += e.is_regular_file() && e.path().extension() == ".ss";
  CHECK(files == 2);
}

TEST_CASE("ss fmt --check lists what would change and changes nothing",
          "[fmt]") {
  Folder d;
  write(d.path / "a.ss", kMessy);
  write(d.path / "sub" / "c.ss", kMessy);
  write(d.path / "sub" / "ok.ss", kLaidOut);
  write(d.path / "sub" / "notes.txt", "not a program");
  auto r = run_ss_process("fmt --check .", d.path.string());
  CHECK(r.rc == 1);
  CHECK(r.out == "./a.ss\n./sub/c.ss\n");
  CHECK(read(d.path / "a.ss") == kMessy);
  // A folder is walked for .ss files; formatted, --check passes.
  CHECK(run_ss_process("fmt .", d.path.string()).rc == 0);
  CHECK(read(d.path / "sub" / "c.ss") == kLaidOut);
  CHECK(read(d.path / "sub" / "notes.txt") == "not a program");
  auto again = run_ss_process("fmt --check .", d.path.string());
  CHECK(again.rc == 0);
  CHECK(again.out.empty());
}

TEST_CASE("ss fmt - reads stdin and writes the layout to stdout", "[fmt]") {
  Folder d;
  write(d.path / "in.ss", kMessy);
  auto r = run_ss_process("fmt - < in.ss", d.path.string());
  CHECK(r.rc == 0);
  CHECK(r.out == kLaidOut);
  auto wide = run_ss_process("fmt --width 30 - < in.ss", d.path.string());
  CHECK(wide.rc == 0);
}

TEST_CASE("ss fmt leaves a file that does not parse and says why", "[fmt]") {
  Folder d;
  const std::string bad = "dim D=4\nfn f(x: [b D] -> [b D]:\n    return x\n";
  write(d.path / "bad.ss", bad);
  write(d.path / "a.ss", kMessy);
  auto r = run_ss_process("fmt bad.ss a.ss", d.path.string());
  CHECK(r.rc == 1);
  CHECK(r.err.find("bad.ss:2:") != std::string::npos);
  CHECK(r.err.find("error[E01") != std::string::npos);
  CHECK(read(d.path / "bad.ss") == bad);
  CHECK(read(d.path / "a.ss") == kLaidOut);  // the others still formatted
}

TEST_CASE("ss fmt's refusals: unreadable files and bad options", "[fmt]") {
  Folder d;
  auto missing = run_ss_process("fmt nowhere.ss", d.path.string());
  CHECK(missing.rc == 2);
  CHECK(missing.err.find("nowhere.ss") != std::string::npos);
  auto none = run_ss_process("fmt", d.path.string());
  CHECK(none.rc == 64);
  CHECK(none.err.find("usage: ss fmt") != std::string::npos);
  auto width = run_ss_process("fmt --width 3 x.ss", d.path.string());
  CHECK(width.rc == 64);
  CHECK(width.err.find("--width") != std::string::npos);
  auto unknown = run_ss_process("fmt --diff x.ss", d.path.string());
  CHECK(unknown.rc == 64);
  CHECK(unknown.err.find("unknown option '--diff'") != std::string::npos);
}
