// The controller's rendezvous store (Note [The controller's store] in
// dist/rendezvous/net_store.cpp): set, get, check and waits over
// authenticated connections, a wrong key and an oversized value refused,
// and Gloo's meshes joined through it (a GlooComm per thread rank, the
// join's token check included) computing an all-reduce. Run: ss_tests
// "[net]".
#include "dist/rendezvous/net_store.h"

#include <catch2/catch.hpp>
#include <future>

#include "dist/net/auth.h"
#include "dist/tests/comm_test_util.h"

namespace net = ss::dist::net;
namespace rdv = ss::dist::rendezvous;
using Catch::Matchers::Contains;

namespace {

net::Endpoint endpoint_of(const std::string& address) {
  return net::parse_endpoint(address.substr(std::string("tcp:").size()));
}

}  // namespace

TEST_CASE("net store: set, get, check and wait across connections", "[net]") {
  net::JobKey key = net::JobKey::generate();
  rdv::StoreServer server(key, "127.0.0.1");
  REQUIRE(server.address().rfind("tcp:127.0.0.1:", 0) == 0);
  rdv::NetStore a(endpoint_of(server.address()), key);
  rdv::NetStore b(endpoint_of(server.address()), key);
  CHECK_FALSE(a.check({"x"}));
  a.set("x", {'1', '2'});
  CHECK(b.check({"x"}));
  CHECK_FALSE(b.check({"x", "y"}));
  CHECK(b.get("x") == std::vector<char>{'1', '2'});
  a.set("x", {});  // set again, empty: as the FileStore, the last wins
  CHECK(b.get("x").empty());
  // A get waits for a key another worker sets later.
  auto later = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(milliseconds(100));
    a.set("y", {'z'});
  });
  CHECK(b.get("y") == std::vector<char>{'z'});
  later.get();
  CHECK_THROWS_WITH(b.wait({"never"}, milliseconds(100)),
                    Contains("Wait timeout"));
}

TEST_CASE("net store: a wrong key and an oversized value are refused",
          "[net]") {
  net::JobKey key = net::JobKey::generate();
  rdv::StoreServer server(key, "127.0.0.1");
  CHECK_THROWS_AS(
      rdv::NetStore(endpoint_of(server.address()), net::JobKey::generate()),
      net::AuthError);
  rdv::NetStore ok(endpoint_of(server.address()), key);
  ok.set("k", {'v'});
  rdv::NetStore big(endpoint_of(server.address()), key);
  CHECK_THROWS_WITH(
      big.set("huge", std::vector<char>(rdv::kMaxValueBytes + 1, 'x')),
      Contains("did not answer"));
  // The store goes on for the others.
  CHECK(ok.get("k") == std::vector<char>{'v'});
  CHECK(server.refused() == 1);
}

TEST_CASE("net store: Gloo's meshes joined through the controller's store",
          "[net]") {
  net::JobKey key = net::JobKey::generate();
  rdv::StoreServer server(key, "127.0.0.1");
  net::set_process_job_key(key);
  const std::string address = server.address();
  require_ok(run_ranks(3, [&](int rank) {
    GlooComm c(rank, 3, address, "ss", milliseconds(10000));
    Tensor t = Tensor::full({4}, rank + 1.0, DType::F32);
    Options o;
    o.timeout = milliseconds(10000);
    c.all_reduce(t, ReduceOp::Sum, o);
    EXPECT_VALUES(t, std::vector<double>(4, 6.0));
  }));
}
