// Pending checks and what checks read (pending.h).
#include "interp/lsp/pending.h"

#include <algorithm>
#include <functional>
#include <string_view>

namespace ss::lsp {

ContentHash content_hash(const std::optional<std::string>& text) {
  // 0 is kept for "could not be read"; an empty text hashes to non-zero.
  if (!text) return 0;
  return (std::hash<std::string_view>{}(*text) * 31 + text->size()) | 1;
}

void PendingChecks::add(const std::string& uri) {
  if (serial_.emplace(uri, next_).second) order_.emplace_back(uri, next_++);
}

bool PendingChecks::remove(const std::string& uri) {
  return serial_.erase(uri) > 0;
}

std::optional<std::string> PendingChecks::pop() {
  while (!order_.empty()) {
    auto [uri, serial] = std::move(order_.front());
    order_.pop_front();
    auto it = serial_.find(uri);
    if (it != serial_.end() && it->second == serial) {
      serial_.erase(it);
      return uri;
    }
  }
  return std::nullopt;
}

ImportGraph::Id ImportGraph::id(const std::string& name) {
  auto [it, added] = ids_.emplace(name, static_cast<Id>(names_.size()));
  if (added) names_.push_back(name);
  return it->second;
}

void ImportGraph::record(const std::string& uri,
                         const std::map<std::string, ContentHash>& inputs) {
  forget(uri);
  std::vector<std::pair<Id, ContentHash>> read;
  read.reserve(inputs.size());
  const Id u = id(uri);
  for (const auto& [path, hash] : inputs) {
    const Id p = id(path);
    read.emplace_back(p, hash);
    readers_[p].insert(u);
  }
  std::sort(read.begin(), read.end());
  read_[u] = std::move(read);
}

void ImportGraph::forget(const std::string& uri) {
  auto u = ids_.find(uri);
  if (u == ids_.end()) return;
  auto it = read_.find(u->second);
  if (it == read_.end()) return;
  for (const auto& [p, hash] : it->second) {
    auto r = readers_.find(p);
    r->second.erase(u->second);
    if (r->second.empty()) readers_.erase(r);
  }
  read_.erase(it);
}

std::vector<std::string> ImportGraph::stale_importers(const std::string& path,
                                                      ContentHash now) const {
  std::vector<std::string> out;
  auto p = ids_.find(path);
  if (p == ids_.end()) return out;
  auto r = readers_.find(p->second);
  if (r == readers_.end()) return out;
  for (Id u : r->second) {
    const auto& read = read_.at(u);
    auto at = std::lower_bound(
        read.begin(), read.end(), std::make_pair(p->second, ContentHash{0}));
    if (at->second != now) out.push_back(names_[u]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ss::lsp
