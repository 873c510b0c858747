// open_store: a directory's FileStore or the controller's store (store.h).
#include "dist/rendezvous/store.h"

#include <gloo/rendezvous/file_store.h>

#include <thread>

#include "dist/net/auth.h"
#include "dist/rendezvous/net_store.h"

namespace ss::dist::rendezvous {

namespace {

// Gloo's FileStore, whose check is protected there.
class DirStore : public Store {
 public:
  explicit DirStore(const std::string& dir) : files_(dir) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    files_.set(key, data);
  }
  std::vector<char> get(const std::string& key) override {
    return files_.get(key);
  }
  void wait(const std::vector<std::string>& keys) override {
    files_.wait(keys);
  }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override {
    files_.wait(keys, timeout);
  }
  bool check(const std::vector<std::string>& keys) override {
    return files_.check(keys);
  }

 private:
  struct Files : gloo::rendezvous::FileStore {
    using gloo::rendezvous::FileStore::check;
    using gloo::rendezvous::FileStore::FileStore;
  } files_;
};

}  // namespace

bool wait_for_keys(Store& store,
                   const std::vector<std::string>& keys,
                   std::chrono::milliseconds timeout,
                   std::chrono::milliseconds poll,
                   const std::function<void()>& each) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (each) each();
    if (store.check(keys)) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(poll);
  }
}

std::unique_ptr<Store> open_store(const std::string& address) {
  const std::string tcp = kTcpStorePrefix;
  if (address.rfind(tcp, 0) == 0)
    return std::make_unique<NetStore>(
        net::parse_endpoint(address.substr(tcp.size())),
        net::process_job_key());
  return std::make_unique<DirStore>(address);
}

}  // namespace ss::dist::rendezvous
