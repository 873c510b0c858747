#include "dist/comm/group_store.h"

#include <stdexcept>

namespace ss::dist::detail {

std::string left_key(const std::string& prefix) {
  return prefix + ".left";
}

void leave_unjoined(const std::string& store_dir, const std::string& prefix) {
  // Every member that failed says so: the first one's key is the one.
  std::unique_ptr<rendezvous::Store> store = rendezvous::open_store(store_dir);
  try {
    if (!store->check({left_key(prefix)})) store->set(left_key(prefix), {'x'});
  } catch (const std::exception&) {
    // set by another member meanwhile
  }
}

std::vector<char> value_of_rank0(rendezvous::Store& store,
                                 int rank,
                                 const std::string& prefix,
                                 const std::string& key,
                                 const std::function<std::vector<char>()>& make,
                                 std::chrono::milliseconds timeout,
                                 std::chrono::milliseconds poll) {
  if (rank == 0) {
    std::vector<char> v = make();
    store.set(key, v);
    return v;
  }
  const std::string left = left_key(prefix);
  if (!rendezvous::wait_for_keys(store, {key}, timeout, poll, [&] {
        if (store.check({left}))
          throw std::runtime_error(
              "a member of this group failed before it joined it (its "
              "error is the call's)");
      }))
    throw std::runtime_error("Wait timeout for the other ranks (" +
                             std::to_string(timeout.count()) + " ms)");
  return store.get(key);
}

}  // namespace ss::dist::detail
