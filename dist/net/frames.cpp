// Framed messages over TCP (frames.h).
#include "dist/net/frames.h"

#include <cstring>

namespace ss::dist::net {

// Note [Control frames over TCP]
// A frame is a 24-byte header, {u32 kind, u32 flags, u64 id, u64 size}
// little-endian, then [size] payload bytes: the shared-memory queues'
// message (dist/control/README.md) without the 32 KiB limit or the
// shared-memory blocks, since a byte stream carries any length. A
// payload is read into one buffer of its size, so the size is checked
// against the reader's cap before anything is allocated: a peer can only
// ever send frames after the handshake (Note [Authenticated connections]),
// and even then a corrupt header is an error, not an allocation of 2^64
// bytes. The reader never blocks: a poll loop hands it the socket when it
// is readable, and it keeps a half-read frame until the rest arrives, so
// one slow peer does not hold up the others.

namespace {

constexpr size_t kOneWriteBytes = 16 * 1024;

void put_u32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
void put_u64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
uint32_t get_u32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(p[i]);
  return v;
}
uint64_t get_u64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(p[i]);
  return v;
}

}  // namespace

void send_frame(int fd, const Frame& f, Deadline deadline) {
  send_frame(fd, f.kind, f.flags, f.id, f.payload, deadline);
}

void send_frame(int fd,
                uint32_t kind,
                uint32_t flags,
                uint64_t id,
                std::string_view payload,
                Deadline deadline,
                std::atomic<uint32_t>* midway) {
  char h[kFrameHeaderBytes];
  put_u32(h, kind);
  put_u32(h + 4, flags);
  put_u64(h + 8, id);
  put_u64(h + 16, payload.size());
  // A small frame goes in one write: a writer killed mid-send then never
  // leaves half of one on the connection (Note [A remote worker's
  // supervisor] in dist/control/worker_tcp_link.cpp).
  if (payload.size() <= kOneWriteBytes) {
    char buf[kFrameHeaderBytes + kOneWriteBytes];
    std::memcpy(buf, h, sizeof h);
    std::memcpy(buf + sizeof h, payload.data(), payload.size());
    write_all(fd,
              buf,
              sizeof h + payload.size(),
              deadline,
              "sending a frame",
              midway);
  } else {
    write_all(fd, h, sizeof h, deadline, "sending a frame", midway);
    if (midway) midway->store(1);  // the header is out, the payload not
    write_all(fd,
              payload.data(),
              payload.size(),
              deadline,
              "sending a frame",
              midway);
  }
  if (midway) midway->store(0);
}

FrameReader::FrameReader(std::string peer, uint64_t max_payload)
    : peer_(std::move(peer)), max_(max_payload) {}

uint64_t FrameReader::take_bytes_read() {
  uint64_t n = bytes_read_;
  bytes_read_ = 0;
  return n;
}

std::optional<Frame> FrameReader::read(int fd) {
  for (;;) {
    if (!in_payload_) {
      long n = read_some(
          fd, header_ + header_have_, kFrameHeaderBytes - header_have_);
      if (n < 0) return std::nullopt;
      if (n == 0) {
        eof_ = header_have_ == 0;
        throw NetError(peer_ + " closed the connection" +
                       (eof_ ? "" : " inside a frame"));
      }
      bytes_read_ += static_cast<uint64_t>(n);
      header_have_ += static_cast<size_t>(n);
      if (header_have_ < kFrameHeaderBytes) continue;
      const uint64_t size = get_u64(header_ + 16);
      if (size > max_)
        throw NetError(peer_ + " sent a frame of " + std::to_string(size) +
                       " bytes, over the cap of " + std::to_string(max_));
      frame_ = Frame{get_u32(header_),
                     get_u32(header_ + 4),
                     get_u64(header_ + 8),
                     std::string(size, '\0')};
      payload_have_ = 0;
      in_payload_ = true;
    }
    if (payload_have_ < frame_.payload.size()) {
      long n = read_some(fd,
                         frame_.payload.data() + payload_have_,
                         frame_.payload.size() - payload_have_);
      if (n < 0) return std::nullopt;
      if (n == 0) {
        eof_ = false;
        throw NetError(peer_ + " closed the connection inside a frame");
      }
      bytes_read_ += static_cast<uint64_t>(n);
      payload_have_ += static_cast<size_t>(n);
      if (payload_have_ < frame_.payload.size()) continue;
    }
    in_payload_ = false;
    header_have_ = 0;
    return std::move(frame_);
  }
}

Frame FrameReader::read_blocking(int fd, Deadline deadline) {
  for (;;) {
    if (auto f = read(fd)) return std::move(*f);
    if (!wait_readable(fd, deadline))
      throw NetError("waiting for a frame from " + peer_ + ": timed out");
  }
}

}  // namespace ss::dist::net
