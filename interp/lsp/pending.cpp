// Pending checks and what checks read (pending.h).
#include "interp/lsp/pending.h"

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

void ImportGraph::record(const std::string& uri,
                         std::map<std::string, ContentHash> inputs) {
  forget(uri);
  for (const auto& entry : inputs) readers_[entry.first].insert(uri);
  read_[uri] = std::move(inputs);
}

void ImportGraph::forget(const std::string& uri) {
  auto it = read_.find(uri);
  if (it == read_.end()) return;
  for (const auto& entry : it->second) {
    auto r = readers_.find(entry.first);
    r->second.erase(uri);
    if (r->second.empty()) readers_.erase(r);
  }
  read_.erase(it);
}

std::vector<std::string> ImportGraph::stale_importers(const std::string& path,
                                                      ContentHash now) const {
  std::vector<std::string> out;
  auto r = readers_.find(path);
  if (r == readers_.end()) return out;
  for (const std::string& uri : r->second)
    if (read_.at(uri).at(path) != now) out.push_back(uri);
  return out;
}

}  // namespace ss::lsp
