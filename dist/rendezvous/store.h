#pragma once
// Where a job's ranks meet to connect Gloo's meshes: Gloo's rendezvous
// store with check() (whether keys are set, without waiting), which the
// join's attempts need (Note [A stranger's connection] in
// dist/comm/gloo_join.cpp). Two kinds, named by an address: a private
// directory on one host (Gloo's FileStore; job_dir.h makes it), and
// "tcp:HOST:PORT", the controller's store served over authenticated
// connections to workers on any host (net_store.h; issue 26).

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ss::dist::rendezvous {

class Store : public gloo::rendezvous::Store {
 public:
  /// Whether every key in [keys] is set now.
  virtual bool check(const std::vector<std::string>& keys) = 0;
};

/// Polls [store] every [poll] until every key in [keys] is set (true) or
/// [timeout] passed (false), calling [each] before each look (a join's
/// check that a member left, which throws). One wait for every join of the
/// group's meshes and of its shared-memory exchange.
bool wait_for_keys(Store& store,
                   const std::vector<std::string>& keys,
                   std::chrono::milliseconds timeout,
                   std::chrono::milliseconds poll,
                   const std::function<void()>& each = {});

/// The prefix of a network store's address: "tcp:HOST:PORT".
inline constexpr const char* kTcpStorePrefix = "tcp:";

/// Opens the store at [address]: a directory path, or "tcp:HOST:PORT",
/// authenticated with this process's job key (net::set_process_job_key).
/// Throws std::runtime_error saying why it cannot.
std::unique_ptr<Store> open_store(const std::string& address);

}  // namespace ss::dist::rendezvous
