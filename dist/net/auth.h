#pragma once
// The job key and the handshake that authenticates every connection of a
// job spanning hosts (issue 26; Note [Authenticated connections] in
// auth.cpp). HMAC-SHA256 and the random bytes are libcrypto's.

#include <array>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "dist/net/socket.h"

namespace ss::dist::net {

/// A peer did not prove it holds the job's key, or a key could not be
/// read. what() says which, never the key.
struct AuthError : NetError {
  using NetError::NetError;
};

constexpr size_t kKeyBytes = 32;

/// The per-job secret: 32 random bytes, made by the controller and handed
/// to each worker over ssh's stdin or a token file (never argv or the
/// environment, which `ps` shows).
struct JobKey {
  std::array<uint8_t, kKeyBytes> bytes{};

  static JobKey generate();
  /// 64 lowercase hex digits, the token file's text.
  std::string hex() const;
  /// Parses 64 hex digits (surrounding whitespace allowed).
  static JobKey from_hex(std::string_view text);
  /// A key for one purpose ("gloo pair token", ...), so that no secret is
  /// used for two things: HMAC(key, purpose).
  JobKey derive(std::string_view purpose) const;
};

/// This process's job key, for what opens connections of its job later (a
/// worker's rendezvous store: dist/rendezvous/store.h). Set once, when the
/// worker has read its key.
void set_process_job_key(const JobKey& key);
/// The key set_process_job_key set; AuthError when none was.
const JobKey& process_job_key();
/// Whether set_process_job_key was called (a remote worker's process).
bool has_process_job_key();

/// HMAC-SHA256 of [data] under [key].
std::array<uint8_t, 32> hmac_sha256(const JobKey& key, std::string_view data);

/// Reads a token file: one key in hex, in a regular file owned by this user
/// that no one else can read or write (mode 0600 or stricter); AuthError
/// saying what is wrong otherwise (with the chmod that fixes it).
JobKey read_token_file(const std::string& path);
/// Writes [key] to a new file at [path], mode 0600 (AuthError if it exists).
void write_token_file(const std::string& path, const JobKey& key);
/// Reads one key in hex and a newline from [fd] (a worker's stdin over
/// ssh) before [deadline].
JobKey read_key_line(int fd, Deadline deadline);

/// Which end of a control connection: each proves itself as its own role,
/// so a proof reflected back to its sender is refused.
enum class Role : uint8_t { Controller = 1, Worker = 2 };

/// The handshake on connected socket [fd], as [me]: both ends prove they
/// hold [key] (HMAC over both fresh nonces and the roles), each way.
/// Before it completes nothing but two fixed-size frames is read, and all
/// of it within [deadline]. Throws AuthError (a wrong key, a replayed or
/// reflected proof, garbage) or NetError (timeout, close).
void handshake(int fd, const JobKey& key, Role me, Deadline deadline);

}  // namespace ss::dist::net
