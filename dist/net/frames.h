#pragma once
// Framed messages on an authenticated connection (Note [Control frames
// over TCP] in frames.cpp): the control channel's {kind, flags, id,
// payload} over a byte stream, each frame's size capped.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dist/net/socket.h"

namespace ss::dist::net {

struct Frame {
  uint32_t kind = 0;
  uint32_t flags = 0;
  uint64_t id = 0;
  std::string payload;
};

constexpr size_t kFrameHeaderBytes = 24;
/// The default cap on one frame's payload: a whole model or batch travels
/// in one frame (a few GB at most on these machines).
constexpr uint64_t kDefaultMaxPayload = uint64_t{16} << 30;

/// Writes [f] whole before [deadline]. One writer at a time per socket.
void send_frame(int fd, const Frame& f, Deadline deadline);
/// The same, from a frame's parts (a payload sent to several peers is not
/// copied into a Frame for each). [midway], when given, is 1 while the
/// frame is partly written (a writer killed then leaves half a frame on
/// the connection) and 0 once it is whole; a frame of up to 16 KiB goes
/// in one write, so it is half written only when the socket's buffer was
/// full.
void send_frame(int fd,
                uint32_t kind,
                uint32_t flags,
                uint64_t id,
                std::string_view payload,
                Deadline deadline,
                std::atomic<uint32_t>* midway = nullptr);

/// Reads frames as their bytes arrive, for a poll loop: read() takes what
/// the socket holds without waiting and hands on each frame completed.
class FrameReader {
 public:
  /// [peer]: who sends, for messages ("worker 2 at 10.0.0.2:41000").
  FrameReader(std::string peer, uint64_t max_payload = kDefaultMaxPayload);
  /// Reads what is there; the next whole frame, if one is complete. Call
  /// again until it returns nullopt with nothing read. Throws NetError at
  /// EOF (eof() then says so) or on a frame over the cap.
  std::optional<Frame> read(int fd);
  /// The peer closed the connection between frames.
  bool eof() const { return eof_; }
  /// Bytes taken since the last call of this (liveness: a peer sending a
  /// long frame is alive).
  uint64_t take_bytes_read();
  /// Waits for one whole frame until [deadline] (NetError at it).
  Frame read_blocking(int fd, Deadline deadline);

 private:
  std::string peer_;
  uint64_t max_;
  char header_[kFrameHeaderBytes];
  size_t header_have_ = 0;
  Frame frame_;
  size_t payload_have_ = 0;
  bool in_payload_ = false;
  bool eof_ = false;
  uint64_t bytes_read_ = 0;
};

}  // namespace ss::dist::net
