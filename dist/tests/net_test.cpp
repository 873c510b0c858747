// dist/net: the job key and token files, the handshake (Note
// [Authenticated connections]) against wrong keys, garbage, silence,
// replayed and reflected frames, framed messages over loopback TCP, and
// the acceptor with a stranger in the queue. Run: ss_tests "[net]".
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "dist/net/acceptor.h"
#include "dist/net/auth.h"
#include "dist/net/frames.h"
#include "dist/net/socket.h"

using namespace ss::dist::net;
using Catch::Matchers::Contains;
using std::chrono::milliseconds;

namespace {

// Two connected stream sockets, non-blocking as the TCP ones are.
std::pair<Fd, Fd> socket_pair() {
  int sv[2];
  REQUIRE(::socketpair(
              AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
  return {Fd(sv[0]), Fd(sv[1])};
}

// Runs the handshake on both ends at once: each end's error, "" if none.
std::pair<std::string, std::string> both_ends(const JobKey& a,
                                              Role ra,
                                              const JobKey& b,
                                              Role rb) {
  auto [x, y] = socket_pair();
  auto run = [](int fd, JobKey k, Role r) -> std::string {
    try {
      handshake(fd, k, r, deadline_in(milliseconds(2000)));
      return "";
    } catch (const NetError& e) {
      return e.what();
    }
  };
  auto fa = std::async(std::launch::async, run, x.get(), a, ra);
  std::string eb = run(y.get(), b, rb);
  return {fa.get(), eb};
}

std::filesystem::path scratch(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() /
           ("ss_net_test." + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  auto p = d / name;
  std::filesystem::remove(p);
  return p;
}

// Copies bytes both ways between [a] and [b] until either closes,
// recording what went from a to b.
void pump(int a, int b, std::string* a_to_b, Deadline until) {
  char buf[4096];
  while (Clock::now() < until) {
    bool moved = false;
    for (auto [from, to, rec] :
         {std::tuple{a, b, a_to_b}, std::tuple{b, a, (std::string*)nullptr}}) {
      long n = read_some(from, buf, sizeof buf);
      if (n == 0) return;
      if (n > 0) {
        if (rec) rec->append(buf, static_cast<size_t>(n));
        write_all(to, buf, static_cast<size_t>(n), until, "pump");
        moved = true;
      }
    }
    if (!moved) std::this_thread::sleep_for(milliseconds(1));
  }
}

}  // namespace

TEST_CASE("net: a job key in hex, derived keys, HMAC-SHA256", "[net]") {
  JobKey k = JobKey::generate();
  CHECK(k.hex().size() == 64);
  CHECK(JobKey::from_hex("  " + k.hex() + "\n").bytes == k.bytes);
  CHECK(JobKey::generate().bytes != k.bytes);
  CHECK_THROWS_WITH(JobKey::from_hex("abc"), Contains("64 hex digits"));
  CHECK_THROWS_WITH(JobKey::from_hex(std::string(64, 'g')),
                    Contains("hex digits only"));
  CHECK(k.derive("gloo pair token").bytes != k.bytes);
  CHECK(k.derive("a").bytes != k.derive("b").bytes);
  // RFC 4231 test case 2 needs a 4-byte key; with a 32-byte key, Python's
  // hmac.new(bytes(range(32)), b"what do ya want for nothing?",
  // hashlib.sha256).hexdigest() is the oracle.
  JobKey seq;
  for (size_t i = 0; i < seq.bytes.size(); ++i)
    seq.bytes[i] = static_cast<uint8_t>(i);
  auto mac = hmac_sha256(seq, "what do ya want for nothing?");
  JobKey as_key;
  as_key.bytes = mac;
  CHECK(as_key.hex() ==
        "099805f4ac310786968565c098db515cc50862b420ae31e20238312344bed36a");
}

TEST_CASE("net: token files are 0600 and this user's", "[net]") {
  JobKey k = JobKey::generate();
  auto p = scratch("token");
  write_token_file(p.string(), k);
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(read_token_file(p.string()).bytes == k.bytes);
  // Never over an existing file.
  CHECK_THROWS_AS(write_token_file(p.string(), k), AuthError);
  ::chmod(p.c_str(), 0644);
  CHECK_THROWS_WITH(read_token_file(p.string()),
                    Contains("mode 0644") && Contains("chmod 600"));
  ::chmod(p.c_str(), 0600);
  { std::ofstream(p) << "not a key\n"; }
  CHECK_THROWS_WITH(read_token_file(p.string()), Contains("64 hex digits"));
  CHECK_THROWS_WITH(read_token_file((p.parent_path() / "missing").string()),
                    Contains("cannot read token file"));
  auto link = scratch("link");
  std::filesystem::create_symlink(p, link);
  CHECK_THROWS_WITH(read_token_file(link.string()),
                    Contains("cannot read token file"));
  std::filesystem::remove_all(p.parent_path());
}

TEST_CASE("net: a key line on a pipe, as over ssh's stdin", "[net]") {
  auto [a, b] = socket_pair();
  JobKey k = JobKey::generate();
  const std::string line = k.hex() + "\n";
  write_all(a.get(),
            line.data(),
            line.size(),
            deadline_in(milliseconds(100)),
            "test");
  CHECK(read_key_line(b.get(), deadline_in(milliseconds(1000))).bytes ==
        k.bytes);
  const std::string long_line(200, 'a');
  write_all(a.get(),
            long_line.data(),
            long_line.size(),
            deadline_in(milliseconds(100)),
            "test");
  CHECK_THROWS_AS(read_key_line(b.get(), deadline_in(milliseconds(1000))),
                  AuthError);
}

TEST_CASE("net: the handshake proves the key each way", "[net]") {
  JobKey k = JobKey::generate();
  SECTION("the same key: both ends pass") {
    auto [c, w] = both_ends(k, Role::Controller, k, Role::Worker);
    CHECK(c.empty());
    CHECK(w.empty());
  }
  SECTION("another key: both ends refuse") {
    auto [c, w] =
        both_ends(k, Role::Controller, JobKey::generate(), Role::Worker);
    CHECK_THAT(c, Contains("worker did not prove"));
    CHECK_THAT(w, Contains("controller did not prove"));
  }
  SECTION("two ends of one role: a reflected proof is refused") {
    auto [a, b] = both_ends(k, Role::Controller, k, Role::Controller);
    CHECK_THAT(a, Contains("did not say it is a worker"));
    CHECK_THAT(b, Contains("did not say it is a worker"));
  }
}

TEST_CASE("net: garbage, silence and a replay are refused in time", "[net]") {
  JobKey k = JobKey::generate();
  SECTION("garbage") {
    auto [s, c] = socket_pair();
    const std::string junk =
        "GET / HTTP/1.1\r\nHost: x\r\n\r\n" + std::string(100, '\x7f');
    write_all(c.get(),
              junk.data(),
              junk.size(),
              deadline_in(milliseconds(100)),
              "test");
    CHECK_THROWS_WITH(
        handshake(
            s.get(), k, Role::Controller, deadline_in(milliseconds(2000))),
        Contains("did not open with a ShapeScript handshake"));
  }
  SECTION("silence ends at the deadline") {
    auto [s, c] = socket_pair();
    auto t0 = Clock::now();
    CHECK_THROWS_WITH(
        handshake(s.get(), k, Role::Controller, deadline_in(milliseconds(300))),
        Contains("timed out"));
    auto took = Clock::now() - t0;
    CHECK(took >= milliseconds(290));
    CHECK(took < milliseconds(1500));
  }
  SECTION("a recorded handshake replayed to a new connection") {
    // A good handshake through a tap that records what the worker sent.
    auto [w, tap_w] = socket_pair();
    auto [tap_c, c] = socket_pair();
    std::string sent;
    std::thread tap([&, a = tap_w.get(), b = tap_c.get()] {
      pump(a, b, &sent, deadline_in(milliseconds(2000)));
    });
    auto ctl = std::async(std::launch::async, [&, fd = c.get()] {
      handshake(fd, k, Role::Controller, deadline_in(milliseconds(2000)));
    });
    handshake(w.get(), k, Role::Worker, deadline_in(milliseconds(2000)));
    ctl.get();
    w = Fd();  // the tap sees EOF
    tap.join();
    REQUIRE(sent.size() == 48 + 32);  // hello and proof
    // The same bytes to a controller with a fresh nonce.
    auto [s, replay] = socket_pair();
    write_all(replay.get(),
              sent.data(),
              sent.size(),
              deadline_in(milliseconds(100)),
              "test");
    CHECK_THROWS_WITH(
        handshake(
            s.get(), k, Role::Controller, deadline_in(milliseconds(2000))),
        Contains("worker did not prove"));
  }
}

TEST_CASE("net: frames over loopback TCP, with a cap", "[net]") {
  Fd listener = listen_tcp("127.0.0.1", 0);
  Endpoint at = local_endpoint(listener.get());
  CHECK(at.port != 0);
  Fd client = connect_tcp(at, deadline_in(milliseconds(2000)));
  Fd server = accept_tcp(listener.get(), deadline_in(milliseconds(2000)));
  REQUIRE(server.valid());
  std::string big(20u << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<char>((i * 131) & 0xff);
  // The writer runs beside the reader: 20 MiB do not fit in the socket's
  // buffers.
  auto writer = std::async(std::launch::async, [&] {
    send_frame(
        client.get(), {7, 1, 42, "hello"}, deadline_in(milliseconds(5000)));
    send_frame(client.get(), {8, 0, 43, ""}, deadline_in(milliseconds(5000)));
    send_frame(client.get(), {9, 2, 44, big}, deadline_in(milliseconds(5000)));
  });
  FrameReader r("the client", 64u << 20);
  Frame a = r.read_blocking(server.get(), deadline_in(milliseconds(5000)));
  CHECK(a.kind == 7);
  CHECK(a.flags == 1);
  CHECK(a.id == 42);
  CHECK(a.payload == "hello");
  Frame b = r.read_blocking(server.get(), deadline_in(milliseconds(5000)));
  CHECK(b.id == 43);
  CHECK(b.payload.empty());
  Frame c = r.read_blocking(server.get(), deadline_in(milliseconds(5000)));
  writer.get();
  CHECK(c.id == 44);
  CHECK(c.payload == big);
  CHECK(r.take_bytes_read() == 3 * kFrameHeaderBytes + 5 + big.size());
  SECTION("a frame over the cap is refused before it is read") {
    FrameReader small("the client", 1024);
    send_frame(client.get(),
               {1, 0, 1, std::string(2048, 'x')},
               deadline_in(milliseconds(1000)));
    CHECK_THROWS_WITH(
        small.read_blocking(server.get(), deadline_in(milliseconds(1000))),
        Contains("2048 bytes, over the cap of 1024"));
  }
  SECTION("a close inside a frame, and between frames") {
    const char half[10] = {};
    write_all(client.get(),
              half,
              sizeof half,
              deadline_in(milliseconds(100)),
              "test");
    client = Fd();
    CHECK_THROWS_WITH(
        r.read_blocking(server.get(), deadline_in(milliseconds(1000))),
        Contains("closed the connection inside a frame"));
    CHECK_FALSE(r.eof());
  }
  SECTION("a close between frames is eof()") {
    client = Fd();
    CHECK_THROWS_AS(
        r.read_blocking(server.get(), deadline_in(milliseconds(1000))),
        NetError);
    CHECK(r.eof());
  }
}

TEST_CASE("net: the acceptor takes workers past a silent stranger", "[net]") {
  JobKey k = JobKey::generate();
  Acceptor acc(
      listen_tcp("127.0.0.1", 0), k, Role::Controller, milliseconds(1500));
  const Endpoint at = acc.endpoint();
  // A stranger connects first and says nothing; another sends a wrong key.
  Fd silent = connect_tcp(at, deadline_in(milliseconds(1000)));
  auto wrong = std::async(std::launch::async, [&] {
    Fd s = connect_tcp(at, deadline_in(milliseconds(1000)));
    try {
      handshake(s.get(),
                JobKey::generate(),
                Role::Worker,
                deadline_in(milliseconds(1500)));
    } catch (const NetError&) {
    }
  });
  // The worker is taken at once, not after the stranger's deadline.
  auto t0 = Clock::now();
  auto worker = std::async(std::launch::async, [&] {
    Fd s = connect_tcp(at, deadline_in(milliseconds(1000)));
    handshake(s.get(), k, Role::Worker, deadline_in(milliseconds(1500)));
    send_frame(s.get(), {1, 0, 5, "rank 0"}, deadline_in(milliseconds(1000)));
    return s;
  });
  Fd got = acc.take(deadline_in(milliseconds(1400)));
  REQUIRE(got.valid());
  CHECK(Clock::now() - t0 < milliseconds(1000));
  Fd worker_end = worker.get();
  FrameReader r("worker");
  CHECK(r.read_blocking(got.get(), deadline_in(milliseconds(1000))).payload ==
        "rank 0");
  wrong.get();
  // Nothing else authenticates; both strangers are refused by the deadline.
  CHECK_FALSE(acc.take(deadline_in(milliseconds(1700))).valid());
  CHECK(acc.refused() == 2);
  CHECK_THAT(acc.last_refusal(), Contains("127.0.0.1"));
}

TEST_CASE("net: endpoints parse as ADDR:PORT", "[net]") {
  CHECK(parse_endpoint("10.0.0.2:29500").host == "10.0.0.2");
  CHECK(parse_endpoint("10.0.0.2:29500").port == 29500);
  CHECK(parse_endpoint("[::1]:80").host == "::1");
  CHECK(parse_endpoint("[::1]:80").str() == "[::1]:80");
  CHECK(parse_endpoint("h1:0").port == 0);
  CHECK_THROWS_WITH(parse_endpoint("h1"), Contains("ADDR:PORT"));
  CHECK_THROWS_WITH(parse_endpoint("h1:65536"), Contains("0 to 65535"));
  CHECK_THROWS_WITH(parse_endpoint("h1:x"), Contains("0 to 65535"));
  CHECK_THROWS_AS(connect_tcp({"127.0.0.1", 1}, deadline_in(milliseconds(200))),
                  NetError);
}
