// open_store: a directory's FileStore or the controller's store (store.h).
#include "dist/rendezvous/store.h"

#include <gloo/rendezvous/file_store.h>

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

std::unique_ptr<Store> open_store(const std::string& address) {
  const std::string tcp = kTcpStorePrefix;
  if (address.rfind(tcp, 0) == 0)
    return std::make_unique<NetStore>(
        net::parse_endpoint(address.substr(tcp.size())),
        net::process_job_key());
  return std::make_unique<DirStore>(address);
}

}  // namespace ss::dist::rendezvous
