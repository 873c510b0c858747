#pragma once
// What every transport's join of a group keeps in the job's rendezvous
// store, whatever then connects the group (Gloo's meshes, an NCCL
// communicator): the key a member that will never come sets, and a value
// rank 0 makes that the others wait for. Private to dist/comm/.

#include <chrono>
#include <string>
#include <vector>

#include "dist/rendezvous/store.h"

namespace ss::dist::detail {

/// The group [prefix]'s `.left` key (Note [A peer that left before
/// joining] in gloo_join.cpp).
std::string left_key(const std::string& prefix);

/// Tells the members joining the group [prefix] that this rank will not
/// come: their joins end at once (Note [A peer that left before joining]).
void leave_unjoined(const std::string& store_dir, const std::string& prefix);

/// Rank 0 sets [key] to [value] (made by [make], called on rank 0 only);
/// every other rank waits for it, every [poll], and reads it. Throws
/// std::runtime_error: "Wait timeout ..." when it did not come within
/// [timeout], "a member of this group failed before it joined it ..."
/// when the group's `.left` key ([prefix]) was set meanwhile.
std::vector<char> value_of_rank0(rendezvous::Store& store,
                                 int rank,
                                 const std::string& prefix,
                                 const std::string& key,
                                 const std::function<std::vector<char>()>& make,
                                 std::chrono::milliseconds timeout,
                                 std::chrono::milliseconds poll);

}  // namespace ss::dist::detail
