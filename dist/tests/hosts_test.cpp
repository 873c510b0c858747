// Hosts, rank placement and the launch command (dist/control/hosts.h).
// The expanded commands are run by a real /bin/sh, with a second shell
// parse where ssh would make one. Run: ss_tests "[hosts]".
#include "dist/control/hosts.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

using namespace ss::dist;
using Catch::Matchers::Contains;

namespace {

// What /bin/sh -c [cmd] prints.
std::string shell_output(const std::string& cmd) {
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[256];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ::pclose(p);
  return out;
}

}  // namespace

TEST_CASE("hosts: --hosts names hosts and their slots", "[hosts]") {
  auto h = parse_hosts("h1:2,h2:2");
  REQUIRE(h.size() == 2);
  CHECK(h[0].name == "h1");
  CHECK(h[0].slots == 2);
  CHECK(h[1].name == "h2");
  auto one = parse_hosts("10.0.0.2, user@node-3.lan:3");
  CHECK(one[0].name == "10.0.0.2");
  CHECK(one[0].slots == 1);
  CHECK(one[1].name == "user@node-3.lan");
  CHECK(one[1].slots == 3);
  CHECK_THROWS_WITH(parse_hosts("h1:2,,h2"), Contains("a host has no name"));
  CHECK_THROWS_WITH(parse_hosts("h1:0"), Contains("at least one slot"));
  CHECK_THROWS_WITH(parse_hosts("h1;rm -rf x:2"),
                    Contains("is not a host name"));
}

TEST_CASE("hosts: a hostfile's lines, slots= and addr=", "[hosts]") {
  auto h = parse_hostfile(
      "# the cluster\n"
      "node1 slots=2 addr=10.0.0.1\n"
      "\n"
      "node2   # one slot\n"
      "node3 slots=3\n",
      "hosts.txt");
  REQUIRE(h.size() == 3);
  CHECK(h[0].name == "node1");
  CHECK(h[0].slots == 2);
  CHECK(h[0].addr == "10.0.0.1");
  CHECK(h[1].slots == 1);
  CHECK(h[1].addr.empty());
  CHECK(h[2].slots == 3);
  CHECK_THROWS_WITH(parse_hostfile("node1 cores=2\n", "hosts.txt"),
                    Contains("hosts.txt:1") && Contains("'cores=2'"));
  CHECK_THROWS_WITH(parse_hostfile("a\nb slots=x\n", "hosts.txt"),
                    Contains("hosts.txt:2") && Contains("slots is a number"));
  CHECK_THROWS_WITH(parse_hostfile("# nothing\n\n", "hosts.txt"),
                    Contains("names no host"));
}

TEST_CASE("hosts: ranks fill the hosts in order", "[hosts]") {
  auto hosts = parse_hosts("h1:2,h2:1,h3:2");
  CHECK(place_ranks(hosts, 5) == std::vector<int>{0, 0, 1, 2, 2});
  CHECK_THROWS_WITH(place_ranks(hosts, 4),
                    Contains("5 slots") && Contains("4 devices"));
}

TEST_CASE("hosts: the launch template runs the worker's words", "[hosts]") {
  const std::vector<std::string> argv = {
      "/bin/echo", "worker", "--rank", "2", "--connect", "10.0.0.1:4000"};
  CHECK(expand_launch(kDefaultLaunch, "node1", argv) ==
        "ssh -o BatchMode=yes node1 /bin/echo worker --rank 2 --connect "
        "10.0.0.1:4000");
  // {cmd} alone: run here, one shell parse.
  CHECK(shell_output(expand_launch("{cmd}", "h", argv)) ==
        "worker --rank 2 --connect 10.0.0.1:4000\n");
  // ssh's second parse, by a second shell: the words arrive the same.
  CHECK(shell_output(expand_launch("sh -c '{cmd}' {host}", "h", argv)) ==
        "worker --rank 2 --connect 10.0.0.1:4000\n");
  // {host} is one word, whatever it holds.
  CHECK(expand_launch("ip netns exec {host} {cmd}", "it's", {"/bin/true"}) ==
        "ip netns exec 'it'\\''s' /bin/true");
  CHECK_THROWS_WITH(expand_launch("ssh {host}", "h", argv),
                    Contains("has no {cmd}"));
  CHECK_THROWS_WITH(expand_launch("srun -w {node} {cmd}", "h", argv),
                    Contains("'{node}'"));
  CHECK_THROWS_WITH(expand_launch("{cmd}", "h", {"/path with space/ss"}),
                    Contains("would not survive a remote shell"));
  CHECK(shell_quote("a b") == "'a b'");
  CHECK(shell_quote("plain/path-1.0") == "plain/path-1.0");
  CHECK(shell_output("printf %s " + shell_quote("x'y $HOME")) == "x'y $HOME");
}
