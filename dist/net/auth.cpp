// The job key, token files and the handshake (auth.h).
#include "dist/net/auth.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>

namespace ss::dist::net {

// Note [Authenticated connections]
// A job that spans hosts listens on TCP ports any machine on the network
// can reach, so nothing a connection sends is trusted until it proves it
// holds the job's key, and it must not be able to make us hang, allocate
// or run anything before then. The handshake is a challenge-response each
// way, in two fixed-size frames a side:
//
//   hello: "SSAUTH01", the sender's role (controller or worker), 32 fresh
//          random bytes (its nonce)
//   proof: HMAC-SHA256(key, label, sender's role, sender's nonce,
//          receiver's nonce)
//
// Each side sends its hello, reads the peer's (exactly 48 bytes, the magic
// and the opposite role checked), sends its proof and checks the peer's
// in constant time (CRYPTO_memcmp). A proof covers the receiver's fresh
// nonce, so frames recorded from an earlier handshake prove nothing now
// (replay); it covers the sender's role, so our own proof sent back to us
// is not the peer's (reflection); without the key no one can make one.
// Everything is read with a deadline (a few seconds), so a silent or slow
// stranger costs one connection for that long. What follows the handshake
// is framed (frames.h) and not encrypted: the job's values cross the
// network in the clear, as Gloo's do (docs/several-hosts.md, the trust
// model).

namespace {

constexpr char kMagic[8] = {'S', 'S', 'A', 'U', 'T', 'H', '0', '1'};
constexpr size_t kNonceBytes = 32;
constexpr size_t kHelloBytes = 8 + 8 + kNonceBytes;  // magic, role + pad
constexpr std::string_view kLabel = "shapescript control handshake v1";

using Nonce = std::array<uint8_t, kNonceBytes>;

void random_bytes(uint8_t* out, size_t n) {
  if (RAND_bytes(out, static_cast<int>(n)) != 1)
    throw AuthError("libcrypto could not make random bytes");
}

std::string proof_input(Role sender,
                        const Nonce& sender_nonce,
                        const Nonce& receiver_nonce) {
  std::string s(kLabel);
  s.push_back(static_cast<char>(sender));
  s.append(reinterpret_cast<const char*>(sender_nonce.data()), kNonceBytes);
  s.append(reinterpret_cast<const char*>(receiver_nonce.data()), kNonceBytes);
  return s;
}

const char* role_name(Role r) {
  return r == Role::Controller ? "controller" : "worker";
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

JobKey JobKey::generate() {
  JobKey k;
  random_bytes(k.bytes.data(), k.bytes.size());
  return k;
}

std::string JobKey::hex() const {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) {
    s.push_back(digits[b >> 4]);
    s.push_back(digits[b & 15]);
  }
  return s;
}

JobKey JobKey::from_hex(std::string_view text) {
  while (!text.empty() &&
         std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  if (text.size() != 2 * kKeyBytes)
    throw AuthError("a job key is " + std::to_string(2 * kKeyBytes) +
                    " hex digits, not " + std::to_string(text.size()) +
                    " characters");
  JobKey k;
  for (size_t i = 0; i < kKeyBytes; ++i) {
    int hi = hex_digit(text[2 * i]), lo = hex_digit(text[2 * i + 1]);
    if (hi < 0 || lo < 0) throw AuthError("a job key is hex digits only");
    k.bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return k;
}

JobKey JobKey::derive(std::string_view purpose) const {
  JobKey k;
  k.bytes = hmac_sha256(*this, purpose);
  return k;
}

namespace {
std::mutex g_key_mu;
std::optional<JobKey> g_key;
}  // namespace

void set_process_job_key(const JobKey& key) {
  std::lock_guard<std::mutex> lock(g_key_mu);
  g_key = key;
}

bool has_process_job_key() {
  std::lock_guard<std::mutex> lock(g_key_mu);
  return g_key.has_value();
}

const JobKey& process_job_key() {
  std::lock_guard<std::mutex> lock(g_key_mu);
  if (!g_key)
    throw AuthError(
        "this process holds no job key (a worker reads it from its token "
        "file or stdin)");
  return *g_key;
}

std::array<uint8_t, 32> hmac_sha256(const JobKey& key, std::string_view data) {
  std::array<uint8_t, 32> out{};
  unsigned int n = 0;
  if (!HMAC(EVP_sha256(),
            key.bytes.data(),
            static_cast<int>(key.bytes.size()),
            reinterpret_cast<const unsigned char*>(data.data()),
            data.size(),
            out.data(),
            &n) ||
      n != out.size())
    throw AuthError("libcrypto's HMAC-SHA256 failed");
  return out;
}

JobKey read_token_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    throw AuthError("cannot read token file " + path + ": " +
                    std::strerror(errno));
  Fd owned(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    throw AuthError("token file " + path + " is not a regular file");
  if (st.st_uid != ::getuid())
    throw AuthError("token file " + path + " belongs to another user");
  if (st.st_mode & 077) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
    throw AuthError("token file " + path + " can be read or written by " +
                    "others (mode " + mode + "): chmod 600 " + path);
  }
  char buf[256];
  ssize_t n = ::read(fd, buf, sizeof buf);
  if (n < 0 || n == static_cast<ssize_t>(sizeof buf))
    throw AuthError("token file " + path + " does not hold one job key");
  return JobKey::from_hex(std::string_view(buf, static_cast<size_t>(n)));
}

void write_token_file(const std::string& path, const JobKey& key) {
  int fd = ::open(
      path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    throw AuthError("cannot make token file " + path + ": " +
                    std::strerror(errno));
  Fd owned(fd);
  const std::string text = key.hex() + "\n";
  if (::write(fd, text.data(), text.size()) !=
      static_cast<ssize_t>(text.size()))
    throw AuthError("cannot write token file " + path + ": " +
                    std::strerror(errno));
}

JobKey read_key_line(int fd, Deadline deadline) {
  std::string line;
  char c = 0;
  while (line.size() <= 2 * kKeyBytes + 1) {
    read_exact(fd, &c, 1, deadline, "reading the job key");
    if (c == '\n') return JobKey::from_hex(line);
    line.push_back(c);
  }
  throw AuthError("the job key line is longer than a key");
}

void handshake(int fd, const JobKey& key, Role me, Deadline deadline) {
  const Role peer = me == Role::Controller ? Role::Worker : Role::Controller;
  Nonce mine{};
  random_bytes(mine.data(), mine.size());
  char hello[kHelloBytes] = {};
  std::memcpy(hello, kMagic, sizeof kMagic);
  hello[8] = static_cast<char>(me);
  std::memcpy(hello + 16, mine.data(), kNonceBytes);
  write_all(fd, hello, sizeof hello, deadline, "the handshake");
  char theirs[kHelloBytes];
  read_exact(fd, theirs, sizeof theirs, deadline, "the handshake");
  if (std::memcmp(theirs, kMagic, sizeof kMagic) != 0)
    throw AuthError("the peer did not open with a ShapeScript handshake");
  if (static_cast<Role>(theirs[8]) != peer)
    throw AuthError(std::string("the peer did not say it is a ") +
                    role_name(peer));
  Nonce their_nonce{};
  std::memcpy(their_nonce.data(), theirs + 16, kNonceBytes);
  auto proof = hmac_sha256(key, proof_input(me, mine, their_nonce));
  write_all(fd, proof.data(), proof.size(), deadline, "the handshake");
  std::array<uint8_t, 32> got{};
  read_exact(fd, got.data(), got.size(), deadline, "the handshake");
  auto want = hmac_sha256(key, proof_input(peer, their_nonce, mine));
  if (CRYPTO_memcmp(got.data(), want.data(), want.size()) != 0)
    throw AuthError(std::string("the ") + role_name(peer) +
                    " did not prove it holds this job's key");
}

}  // namespace ss::dist::net
