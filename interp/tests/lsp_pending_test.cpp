// The language server's pending checks and its record of what each check
// read (interp/lsp/pending.h, Note [Checks when the input is quiet]).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "interp/lsp/pending.h"

using ss::lsp::content_hash;
using ss::lsp::ImportGraph;
using ss::lsp::PendingChecks;

TEST_CASE("pending checks come once each, oldest first", "[lsp]") {
  PendingChecks p;
  p.add("a");
  p.add("b");
  p.add("a");  // already pending: keeps its place
  CHECK(p.remove("b"));
  CHECK_FALSE(p.remove("b"));
  p.add("c");
  p.add("b");  // again, after c
  std::vector<std::string> order;
  while (auto u = p.pop()) order.push_back(*u);
  CHECK(order == std::vector<std::string>{"a", "c", "b"});
  CHECK(p.empty());
}

TEST_CASE("content hashes tell read from unread and empty", "[lsp]") {
  CHECK(content_hash(std::nullopt) != content_hash(std::string()));
  CHECK(content_hash(std::string("fn f()")) ==
        content_hash(std::string("fn f()")));
  CHECK(content_hash(std::string("fn f()")) !=
        content_hash(std::string("fn g()")));
}

TEST_CASE("importers are those that read other content", "[lsp]") {
  ImportGraph g;
  const auto v1 = content_hash(std::string("v1"));
  const auto v2 = content_hash(std::string("v2"));
  g.record("main", {{"/p/lib.ss", v1}, {"/p/mid.ss", v1}});
  g.record("other", {{"/p/lib.ss", v2}});
  CHECK(g.stale_importers("/p/lib.ss", v1) ==
        std::vector<std::string>{"other"});
  CHECK(g.stale_importers("/p/lib.ss", content_hash(std::nullopt)) ==
        std::vector<std::string>{"main", "other"});
  CHECK(g.stale_importers("/p/none.ss", v1).empty());
  // A new check replaces what the last one read.
  g.record("main", {{"/p/mid.ss", v1}});
  CHECK(g.stale_importers("/p/lib.ss", v1) ==
        std::vector<std::string>{"other"});
  g.forget("other");
  CHECK(g.stale_importers("/p/lib.ss", v1).empty());
}
