// Mutation fuzzing of the whole front end through check_source, the library
// entry `ss check` uses: thousands of random edits of the examples must
// never crash, hang or throw past the diagnostic layer. Deterministic
// (fixed seed); run under ASan/UBSan by scripts/test.sh.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <random>

#include "interp/tests/check_test_util.h"

namespace {

// Fragments that steer mutations towards interesting programs: the
// language's own tokens, types and patterns.
const char* const kFragments[] = {
    "(",
    ")",
    "[",
    "]",
    ":",
    ",",
    "->",
    " @ ",
    " + ",
    " * ",
    "**",
    "=",
    "\n",
    "    ",
    "\t",
    "\"",
    "f\"{x}\"",
    "let ",
    "fn ",
    "mut ",
    "return ",
    "over=",
    "[b D]",
    "(H Dh)",
    "b n -> n b",
    "D",
    "b",
    "0",
    "-1",
    "1e-3",
    "inf",
    "model ",
    "data ",
    "dim ",
    "if ",
    "for ",
    " in ",
    "..",
    "..=",
    "split(",
    "einsum(",
    "rearrange(",
    "value_and_grad(",
    "Grads[",
    "AdamW[",
    "/x",
    "spmd ",
    "mesh x=2",
    "devices cpu[0 1]",
    "import \"x.ss\"",
    "#",
    "{",
    "}",
};

std::string mutate(const std::string& src, std::mt19937_64& rng) {
  std::string s = src;
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int k = 0; k < edits && !s.empty(); ++k) {
    size_t at = rng() % s.size();
    switch (rng() % 6) {
      case 0:  // delete a run of bytes
        s.erase(at, 1 + rng() % 8);
        break;
      case 1:  // insert a fragment
        s.insert(at, kFragments[rng() % std::size(kFragments)]);
        break;
      case 2: {  // duplicate a line
        size_t b = s.rfind('\n', at);
        b = b == std::string::npos ? 0 : b + 1;
        size_t e = s.find('\n', at);
        if (e == std::string::npos) e = s.size();
        s.insert(b, s.substr(b, e - b) + "\n");
        break;
      }
      case 3:  // swap two bytes
        std::swap(s[at], s[rng() % s.size()]);
        break;
      case 4:  // a random byte, sometimes not ASCII
        s[at] = static_cast<char>(rng() % 256);
        break;
      default: {  // replace a word with a fragment
        size_t e = at;
        while (e < s.size() && std::isalnum(static_cast<unsigned char>(s[e])))
          ++e;
        s.replace(at, e - at, kFragments[rng() % std::size(kFragments)]);
      }
    }
  }
  return s;
}

}  // namespace

TEST_CASE("mutated programs never crash, hang or throw the checker", "[fuzz]") {
  namespace fs = std::filesystem;
  std::vector<std::string> corpus;
  for (const char* dir : {"examples", "conformance"}) {
    fs::path root = fs::path(SS_SOURCE_DIR) / dir;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec);
         it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (!ec && it->path().extension() == ".ss")
        corpus.push_back(ss::testing::read_source_file(
            fs::relative(it->path(), SS_SOURCE_DIR).string()));
  }
  REQUIRE(corpus.size() >= 4);
  std::mt19937_64 rng(20261129);
  const int kRuns = 3000;
  int with_errors = 0;
  for (int i = 0; i < kRuns; ++i) {
    std::string src = mutate(corpus[rng() % corpus.size()], rng);
    auto t0 = std::chrono::steady_clock::now();
    std::unique_ptr<ss::testing::Checked> c;
    try {
      c = ss::testing::check_text(src);
    } catch (const std::exception& e) {
      FAIL("run " << i << " threw: " << e.what() << "\n--- input:\n" << src);
    } catch (...) {
      FAIL("run " << i << " threw a non-std exception\n--- input:\n" << src);
    }
    double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    // Generous: a debug+ASan build checks these in milliseconds.
    if (secs > 5.0) FAIL("run " << i << " took " << secs << " s:\n" << src);
    // Every error has a code and a location inside some file.
    for (const auto& d : c->diags.list()) {
      REQUIRE(d.span.file < c->sm.size());
      REQUIRE(d.span.begin <= c->sm.file(d.span.file).text.size());
      REQUIRE(!d.message.empty());
    }
    with_errors += !c->diags.empty();
  }
  // The mutations must actually exercise the error paths.
  CHECK(with_errors > kRuns / 2);
}
