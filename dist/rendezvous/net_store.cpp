// The controller's rendezvous store and a worker's connection to it
// (net_store.h).
#include "dist/rendezvous/net_store.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

namespace ss::dist::rendezvous {

// Note [The controller's store]
// On one host the ranks meet in a private directory (Gloo's FileStore).
// Across hosts there is no shared directory, and Debian's Gloo has no
// TCPStore (its RedisStore sends no AUTH: deps.md §12), so the controller
// serves the store itself: each worker opens one TCP connection to it,
// proves it holds the job's key (Note [Authenticated connections] in
// dist/net/auth.cpp), and then asks set, get and check, one frame each
// way. The workers poll check() for their waits, as the FileStore polls
// the directory, so the server never blocks on a request and one thread
// serves every worker. Keys and values are capped (Gloo's are addresses
// and tokens), and so is the store's whole size: an authenticated worker
// gone wrong cannot exhaust the controller. What lives here is what the
// FileStore's files held: the meshes' addresses and the join's token
// secret, now private to the job's key holders on every host.

namespace {

enum Kind : uint32_t { kSet = 1, kGet = 2, kCheck = 3, kReply = 0x100 };
constexpr uint32_t kFound = 1;
constexpr std::chrono::milliseconds kReplyTime{5000};

void put_u32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
}

// Reads a u32 at [at] of [s], advancing; false when [s] is too short.
bool get_u32(const std::string& s, size_t& at, uint32_t& v) {
  if (at > s.size() || s.size() - at < 4) return false;
  v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(s[at + i]);
  at += 4;
  return true;
}

std::string with_length(const std::string& key) {
  std::string s;
  put_u32(s, static_cast<uint32_t>(key.size()));
  return s + key;
}

}  // namespace

StoreServer::StoreServer(const net::JobKey& key, const std::string& host)
    : acceptor_(net::listen_tcp(host, 0), key, net::Role::Controller),
      host_(host) {
  thread_ = std::thread([this] { serve(); });
}

StoreServer::~StoreServer() {
  stop_ = true;
  wake_.wake();
  thread_.join();
}

std::string StoreServer::address() const {
  return kTcpStorePrefix +
         net::Endpoint{host_, acceptor_.endpoint().port}.str();
}

net::Frame StoreServer::answer(const net::Frame& f, std::string& error) {
  net::Frame r{kReply, 0, f.id, {}};
  size_t at = 0;
  uint32_t n = 0;
  switch (f.kind) {
    case kSet: {
      if (!get_u32(f.payload, at, n) || n > kMaxKeyBytes ||
          f.payload.size() - at < n) {
        error = "a set without a key";
        return r;
      }
      std::string key = f.payload.substr(at, n);
      std::vector<char> value(f.payload.begin() + at + n, f.payload.end());
      if (value.size() > kMaxValueBytes) {
        error = "a value over " + std::to_string(kMaxValueBytes) + " bytes";
        return r;
      }
      auto old = values_.find(key);
      size_t after =
          bytes_ + key.size() + value.size() -
          (old == values_.end() ? 0 : key.size() + old->second.size());
      if (after > kMaxStoreBytes) {
        error = "the store is full";
        return r;
      }
      bytes_ = after;
      values_[key] = std::move(value);
      return r;
    }
    case kGet: {
      if (f.payload.size() > kMaxKeyBytes) {
        error = "a key over " + std::to_string(kMaxKeyBytes) + " bytes";
        return r;
      }
      auto it = values_.find(f.payload);
      if (it != values_.end()) {
        r.flags = kFound;
        r.payload.assign(it->second.begin(), it->second.end());
      }
      return r;
    }
    case kCheck: {
      bool all = get_u32(f.payload, at, n);
      for (uint32_t i = 0; all && i < n; ++i) {
        uint32_t len = 0;
        if (!get_u32(f.payload, at, len) || len > kMaxKeyBytes ||
            f.payload.size() - at < len) {
          error = "a check with a bad key list";
          return r;
        }
        if (!values_.count(f.payload.substr(at, len))) r.payload = "0";
        at += len;
      }
      if (!all) error = "a check with a bad key list";
      if (r.payload.empty()) r.payload = "1";
      return r;
    }
    default:
      error = "a request of unknown kind " + std::to_string(f.kind);
      return r;
  }
}

void StoreServer::serve() {
  std::vector<Peer> peers;
  while (!stop_) {
    for (net::Fd c = acceptor_.take(net::Clock::now()); c.valid();
         c = acceptor_.take(net::Clock::now())) {
      const std::string who =
          "a worker at " + net::peer_endpoint(c.get()).str();
      peers.push_back(
          Peer{std::move(c),
               net::FrameReader(who, kMaxKeyBytes + kMaxValueBytes + 64)});
    }
    std::vector<pollfd> pf{{wake_.read_fd(), POLLIN, 0}};
    for (const Peer& p : peers) pf.push_back({p.fd.get(), POLLIN, 0});
    // New connections are taken every 10 ms; requests wake the poll.
    if (::poll(pf.data(), pf.size(), 10) < 0) continue;
    if (pf[0].revents) return;
    for (size_t i = 0; i < peers.size();) {
      Peer& p = peers[i];
      bool drop = false;
      try {
        while (auto f = p.reader.read(p.fd.get())) {
          std::string error;
          net::Frame reply = answer(*f, error);
          if (!error.empty()) {
            drop = true;  // a worker gone wrong: its store calls fail
            break;
          }
          net::send_frame(p.fd.get(), reply, net::deadline_in(kReplyTime));
        }
      } catch (const net::NetError&) {
        drop = true;  // closed, or a frame over the cap
      }
      if (drop)
        peers.erase(peers.begin() + static_cast<long>(i));
      else
        ++i;
    }
  }
}

NetStore::NetStore(const net::Endpoint& at,
                   const net::JobKey& key,
                   std::chrono::milliseconds connect_timeout)
    : where_("the rendezvous store at " + at.str()),
      reader_(where_, kMaxValueBytes + 64) {
  const net::Deadline d = net::deadline_in(connect_timeout);
  fd_ = net::connect_tcp(at, d);
  net::handshake(fd_.get(), key, net::Role::Worker, d);
}

net::Frame NetStore::request(net::Frame f) {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    net::send_frame(fd_.get(), f, net::deadline_in(kReplyTime));
    return reader_.read_blocking(fd_.get(), net::deadline_in(kReplyTime));
  } catch (const net::NetError& e) {
    throw std::runtime_error(where_ + " did not answer: " + e.what());
  }
}

void NetStore::set(const std::string& key, const std::vector<char>& data) {
  std::string p = with_length(key);
  p.append(data.begin(), data.end());
  request({kSet, 0, 0, std::move(p)});
}

std::vector<char> NetStore::get(const std::string& key) {
  wait({key});
  net::Frame r = request({kGet, 0, 0, key});
  if (!(r.flags & kFound))
    throw std::runtime_error(where_ + " has no key " + key);
  return std::vector<char>(r.payload.begin(), r.payload.end());
}

bool NetStore::check(const std::vector<std::string>& keys) {
  std::string p;
  put_u32(p, static_cast<uint32_t>(keys.size()));
  for (const std::string& k : keys) p += with_length(k);
  return request({kCheck, 0, 0, std::move(p)}).payload == "1";
}

void NetStore::wait(const std::vector<std::string>& keys) {
  wait(keys, kDefaultTimeout);
}

void NetStore::wait(const std::vector<std::string>& keys,
                    const std::chrono::milliseconds& timeout) {
  const auto deadline = net::Clock::now() + timeout;
  while (!check(keys)) {
    if (net::Clock::now() > deadline)
      throw std::runtime_error("Wait timeout for the other ranks (" +
                               std::to_string(timeout.count()) + " ms)");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace ss::dist::rendezvous
