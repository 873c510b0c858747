#pragma once
// JSON-RPC's base protocol as the LSP frames it on stdio: a header block of
// `Name: value` lines, each ended by \r\n, then an empty line, then
// Content-Length bytes of JSON. Note [Reading frames] in framing.cpp says
// what happens to input that breaks the rules.

#include <cstddef>
#include <string>

namespace ss::lsp {

/// Reads frames from a file descriptor, however the bytes arrive: a header
/// split over reads, several messages in one read.
class FrameReader {
 public:
  explicit FrameReader(int fd) : fd_(fd) {}

  enum class Status { Message, BadHeader, End };
  /// The next frame's body in [body] (Message), or a header that could not
  /// be read (BadHeader: [body] says why, and the reader has skipped to the
  /// next header it can find), or the end of the input (End, also when it
  /// ends inside a frame).
  Status next(std::string& body);
  /// Whether next() has something to read without waiting longer than
  /// [wait_ms]: bytes buffered (a frame, or the start of one), bytes on
  /// the descriptor, or its end. The server checks documents only while
  /// nothing waits (Note [Checks when the input is quiet] in pending.h).
  bool input_waiting(int wait_ms);

 private:
  /// Appends what one read(2) returns; false at the end or on an error.
  bool fill();

  int fd_;
  std::string buf_;
  bool ended_ = false;
};

/// Writes [body] framed with its Content-Length, whole (retrying short
/// writes). False when the peer is gone.
bool write_frame(int fd, const std::string& body);

/// The most a frame's body may hold: a larger Content-Length is refused as
/// a bad header rather than buffered.
inline constexpr size_t kMaxFrameBytes = size_t{64} << 20;

}  // namespace ss::lsp
