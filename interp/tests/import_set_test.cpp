// Checks that take their imports from an earlier check's (Note [Shared
// import sets] in interp/check/import_set.h) report what a check reading
// every file reports, written out here by hand.
#include "interp/check/import_set.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "interp/check/checker.h"

namespace {

namespace fs = std::filesystem;
using ss::check::ImportSets;

struct Folder {
  fs::path dir;
  Folder() {
    dir = fs::temp_directory_path() /
          ("ss_import_set_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Folder() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
};

struct Result {
  ss::diag::SourceMap sm;
  ss::diag::Diagnostics diags;
  std::unique_ptr<ss::check::Program> prog;
  /// "file.ss:E0201@LINE:COL" per diagnostic, in order.
  std::vector<std::string> said() const {
    std::vector<std::string> v;
    for (const auto& d : diags.list()) {
      auto lc = sm.line_col(d.span.file, d.span.begin);
      v.push_back(fs::path(sm.file(d.span.file).path).filename().string() +
                  ":" + std::string(ss::diag::code_name(d.code)) + "@" +
                  std::to_string(lc.line) + ":" + std::to_string(lc.column));
    }
    return v;
  }
  /// The module of file [name], or null.
  const ss::ast::Module* module(const std::string& name) const {
    for (const ss::ast::Module& m : prog->modules())
      if (fs::path(sm.file(m.file).path).filename() == name) return &m;
    return nullptr;
  }
};

std::unique_ptr<Result> check(const std::string& path,
                              std::shared_ptr<ImportSets> sets) {
  auto r = std::make_unique<Result>();
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  ss::check::Options o;
  o.keep_on_error = true;
  o.import_sets = std::move(sets);
  r->prog = ss::check::check_source(path, text, r->sm, r->diags, o);
  return r;
}

}  // namespace

TEST_CASE(
    "two documents importing one hub share its imports and each "
    "reports its own errors",
    "[check]") {
  Folder f;
  f.write("l.ss", "fn l(x: f32) -> f32 = y\n");
  f.write("hub.ss", "import \"l.ss\"\n\nfn hub(x: f32) -> f32 = l(x)\n");
  const std::string a =
      f.write("a.ss", "import \"hub.ss\"\n\nfn a(x: f32) -> f32 = hub(x)\n");
  const std::string b = f.write("b.ss",
                                "import \"hub.ss\"\n\n"
                                "fn b(x: f32) -> f32 = hub(x) + z\n");
  const std::vector<std::string> a_says{"l.ss:E0201@1:23"};
  const std::vector<std::string> b_says{"b.ss:E0201@3:32", "l.ss:E0201@1:23"};
  auto sets = std::make_shared<ImportSets>();
  auto a1 = check(a, sets);
  auto b1 = check(b, sets);
  CHECK(a1->said() == a_says);
  CHECK(b1->said() == b_says);
  // The same without sets: what `ss check` says.
  CHECK(check(a, nullptr)->said() == a_says);
  CHECK(check(b, nullptr)->said() == b_says);
  // b took a's parsed imports.
  REQUIRE(a1->module("hub.ss"));
  CHECK(a1->module("hub.ss") == b1->module("hub.ss"));
  CHECK(a1->module("a.ss") != nullptr);
  CHECK(b1->module("a.ss") == nullptr);

  // l fixed on the disk: the next check reads it again.
  f.write("l.ss", "fn l(x: f32) -> f32 = x\n");
  auto a2 = check(a, sets);
  CHECK(a2->said().empty());
  CHECK(a2->module("hub.ss") != a1->module("hub.ss"));
  CHECK(check(b, sets)->said() == std::vector<std::string>{"b.ss:E0201@3:32"});
}

TEST_CASE("a document among its own imports takes no other's set", "[check]") {
  Folder f;
  // A ring: a imports b, b imports a; c imports b (and so a).
  const std::string a =
      f.write("a.ss", "import \"b.ss\"\n\nfn fa(x: f32) -> f32 = fb(x)\n");
  const std::string b =
      f.write("b.ss", "import \"a.ss\"\n\nfn fb(x: f32) -> f32 = q\n");
  const std::string c =
      f.write("c.ss", "import \"b.ss\"\n\nfn fc(x: f32) -> f32 = fa(x)\n");
  auto sets = std::make_shared<ImportSets>();
  const std::vector<std::string> b_error{"b.ss:E0201@3:24"};
  CHECK(check(c, sets)->said() == b_error);  // its set has a and b
  CHECK(check(a, sets)->said() == b_error);  // a is among them
  CHECK(check(a, sets)->said() == b_error);
  CHECK(check(c, sets)->said() == b_error);
  CHECK(check(a, nullptr)->said() == b_error);
}

TEST_CASE("an import that cannot be read is said in each importer's file",
          "[check]") {
  Folder f;
  const std::string a =
      f.write("a.ss", "import \"gone.ss\"\n\nfn fa(x: f32) -> f32 = x\n");
  const std::string b =
      f.write("b.ss", "\n\nimport \"gone.ss\"\n\nfn fb(x: f32) -> f32 = x\n");
  auto sets = std::make_shared<ImportSets>();
  CHECK(check(a, sets)->said() == std::vector<std::string>{"a.ss:E0204@1:1"});
  CHECK(check(b, sets)->said() == std::vector<std::string>{"b.ss:E0204@3:1"});
  f.write("gone.ss", "fn g() -> int = 1\n");
  CHECK(check(b, sets)->said().empty());
}

TEST_CASE(
    "a set whose programs failed to parse is taken by the next "
    "document",
    "[check]") {
  Folder f;
  f.write("hub.ss", "fn hub(x: f32) -> f32 = x * * 2.0\n");
  const std::string a =
      f.write("a.ss", "import \"hub.ss\"\n\nfn a(x: f32) -> f32 = hub(x)\n");
  const std::string b =
      f.write("b.ss", "import \"hub.ss\"\n\nfn b(x: f32) -> f32 = hub(x)\n");
  auto sets = std::make_shared<ImportSets>();
  auto a1 = check(a, sets);
  auto b1 = check(b, sets);
  const std::vector<std::string> says{"hub.ss:E0101@1:29"};
  CHECK(a1->said() == says);
  CHECK(b1->said() == says);
  CHECK(check(b, nullptr)->said() == says);
  CHECK(a1->prog == nullptr);
  REQUIRE(a1->sm.size() == 3);
  CHECK(a1->sm.shared(2) == b1->sm.shared(2));
}

TEST_CASE("an import with a byte order mark is taken from the set", "[check]") {
  Folder f;
  f.write("l.ss",
          "\xEF\xBB\xBF"
          "fn l(x: f32) -> f32 = x\n");
  const std::string a =
      f.write("a.ss", "import \"l.ss\"\n\nfn a(x: f32) -> f32 = l(x)\n");
  const std::string b =
      f.write("b.ss", "import \"l.ss\"\n\nfn b(x: f32) -> f32 = l(x)\n");
  auto sets = std::make_shared<ImportSets>();
  auto a1 = check(a, sets);
  auto b1 = check(b, sets);
  CHECK(a1->said().empty());
  CHECK(b1->said().empty());
  REQUIRE(a1->module("l.ss"));
  CHECK(a1->module("l.ss") == b1->module("l.ss"));
  f.write("l.ss",
          "\xEF\xBB\xBF"
          "fn l(x: f32) -> f32 = y\n");
  CHECK(check(b, sets)->said() == std::vector<std::string>{"l.ss:E0201@1:23"});
}
