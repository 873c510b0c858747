// `ss repl` driven through a pseudo-terminal, as a user at a terminal would:
// the prompt, line editing and history (libedit), errors that keep the
// session, Ctrl-C stopping a running statement.
#include "interp/cli/repl.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "interp/tests/pty_repl.h"

using ss::testing::PtyRepl;

TEST_CASE("the repl at a terminal: values, errors, history, Ctrl-C", "[repl]") {
  PtyRepl r;
  REQUIRE(r.expect("ss> "));
  r.send("let n = 40 + 2\r");
  REQUIRE(r.expect("ss> "));
  r.send("n\r");
  CHECK(r.expect("42  : int"));
  // An error prints and the session keeps n.
  r.send("n + undefined_name\r");
  CHECK(r.expect("error[E0201]"));
  r.send("n * 2\r");
  CHECK(r.expect("84  : int"));
  // Up-arrow recalls the last line from history; edit it with Backspace.
  // (Wait for the prompt: before readline switches the terminal to raw
  // mode, the line discipline would eat the Backspace itself.)
  REQUIRE(r.expect("ss> "));
  r.send("\x1b[A");
  REQUIRE(r.expect("n * 2"));
  r.send(
      "\x7f"
      "3\r");  // n * 2 -> n * 3
  CHECK(r.expect("126  : int"));
  // A block over several lines, ended by an empty line.
  r.send("for i in range(2):\r");
  CHECK(r.expect("... "));
  r.send("    print(i + 100)\r\r");
  CHECK(r.expect("101"));
  // Ctrl-C stops a long statement; the session goes on. (It is pressed
  // once the loop says it runs, in words its echo does not hold: before,
  // readline would take it.)
  r.send(
      "let k = 0\rwhile true:\r    k = k + 1\r    if k == 3:\r"
      "        print(\"spin\" + \"ning\")\r\r");
  CHECK(r.expect("spinning"));
  r.send("\x03");
  CHECK(r.expect("KeyboardInterrupt"));
  r.send("n\r");
  CHECK(r.expect("42  : int"));
  r.send(":type n / 2\r");
  CHECK(r.expect("n / 2 : float"));
  r.send(":quit\r");
  CHECK(r.wait_exit() == 0);
}

TEST_CASE("repl input grouping: blocks and open brackets continue", "[repl]") {
  using ss::cli::Repl;
  CHECK(Repl::needs_more("for i in range(3):\n"));
  CHECK(Repl::needs_more("for i in range(3):\n    print(i)\n"));
  CHECK_FALSE(Repl::needs_more("for i in range(3):\n    print(i)\n\n"));
  CHECK(Repl::needs_more("print(1,\n"));
  CHECK_FALSE(Repl::needs_more("print(1)\n"));
  CHECK_FALSE(Repl::needs_more("print(\"(\")\n"));
}

TEST_CASE("repl commands: :load, :explain, :devices, :reset, :help", "[repl]") {
  std::ostringstream out, err;
  ss::cli::Repl r(out, err);
  std::string path = "/tmp/ss_repl_test_" + std::to_string(getpid()) + ".ss";
  {
    std::ofstream f(path);
    f << "dim D = 4\nfn double(x: [b D]) -> [b D] = x * 2.0\n";
  }
  r.handle(":load " + path);
  r.handle("let y = double(ones([3, D]))");
  r.handle("float(sum(y))");
  CHECK_THAT(out.str(), Catch::Contains("24.0  : float"));
  r.handle(":explain double");
  CHECK_THAT(out.str(), Catch::Contains("fn double(x: [b D]) -> [b D]"));
  r.handle(":devices");
  CHECK_THAT(out.str(), Catch::Contains("devices cpu"));
  r.handle(":help");
  CHECK_THAT(out.str(), Catch::Contains(":type EXPR"));
  // A declaration that does not check is refused; the session keeps the
  // earlier ones.
  r.handle("fn broken(x: [b D]) -> [b D] = x @ x");
  CHECK_THAT(err.str(), Catch::Contains("error[E0302]"));
  r.handle("float(sum(double(y)))");
  CHECK_THAT(out.str(), Catch::Contains("48.0  : float"));
  r.handle(":reset");
  r.handle("y");
  CHECK_THAT(err.str(), Catch::Contains("unknown name `y`"));
  CHECK_FALSE(r.handle(":quit"));
  std::remove(path.c_str());
}

TEST_CASE("repl :load refuses what is not a regular file, at once", "[repl]") {
  // Issue 32 item 8: a FIFO blocked the session (open waits for a
  // writer) and /dev/zero read forever. Through the terminal, as a user
  // types it: each refusal is said and the prompt comes back.
  std::string fifo = "/tmp/ss_repl_fifo_" + std::to_string(getpid());
  std::remove(fifo.c_str());
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  PtyRepl r;
  REQUIRE(r.expect("ss> "));
  r.send(":load " + fifo + "\r");
  CHECK(r.expect("IOError: cannot read '" + fifo + "': not a regular file"));
  REQUIRE(r.expect("ss> "));
  r.send(":load /dev/zero\r");
  CHECK(r.expect("cannot read '/dev/zero': not a regular file"));
  REQUIRE(r.expect("ss> "));
  r.send(":load /nonexistent/x.ss\r");
  CHECK(r.expect("'/nonexistent/x.ss': no such file"));
  // The session goes on.
  r.send("40 + 2\r");
  CHECK(r.expect("42  : int"));
  r.send(":quit\r");
  CHECK(r.wait_exit() == 0);
  std::remove(fifo.c_str());
}
