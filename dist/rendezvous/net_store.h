#pragma once
// The rendezvous store of a job across hosts (issue 26; Note [The
// controller's store] in net_store.cpp): the controller serves it, each
// worker reaches it over one authenticated TCP connection.

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dist/net/acceptor.h"
#include "dist/net/frames.h"
#include "dist/rendezvous/store.h"

namespace ss::dist::rendezvous {

/// Caps on what a peer may store: Gloo's values are addresses and tokens,
/// a few hundred bytes.
inline constexpr size_t kMaxKeyBytes = 1024;
inline constexpr size_t kMaxValueBytes = 1 << 20;
inline constexpr size_t kMaxStoreBytes = size_t{256} << 20;

/// The controller's side: listens on [host] (port 0: any), authenticates
/// each connection with [key], and answers set, get and check until it is
/// destroyed.
class StoreServer {
 public:
  StoreServer(const net::JobKey& key, const std::string& host);
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;

  /// "tcp:HOST:PORT", the address workers open (open_store).
  std::string address() const;
  /// The port it listens on (a worker may reach this host by another of
  /// its addresses than HOST).
  uint16_t port() const { return acceptor_.endpoint().port; }
  /// Connections refused so far (the acceptor's).
  int refused() const { return acceptor_.refused(); }

 private:
  struct Peer {
    net::Fd fd;
    net::FrameReader reader;
  };
  void serve();
  /// The reply to [f], or an error text that ends the connection.
  net::Frame answer(const net::Frame& f, std::string& error);

  net::Acceptor acceptor_;
  std::string host_;
  net::WakePipe wake_;  // ends serve's poll
  std::atomic<bool> stop_{false};
  std::map<std::string, std::vector<char>> values_;
  size_t bytes_ = 0;
  std::thread thread_;
};

/// A worker's side: one authenticated connection to the controller's
/// store. Safe to use from several threads (one request at a time).
class NetStore : public Store {
 public:
  NetStore(const net::Endpoint& at,
           const net::JobKey& key,
           std::chrono::milliseconds connect_timeout =
               std::chrono::milliseconds(10000));
  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;
  bool check(const std::vector<std::string>& keys) override;

 private:
  net::Frame request(net::Frame f);

  std::string where_;
  std::mutex mu_;
  net::Fd fd_;
  net::FrameReader reader_;
};

}  // namespace ss::dist::rendezvous
