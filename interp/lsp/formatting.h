#pragma once
// The answers to textDocument/formatting and /rangeFormatting
// (formatting.cpp).

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

namespace ss::lsp {

/// The TextEdits that give [text] `ss fmt`'s layout: all of it, or with
/// [lines] (0-based first and last, inclusive) the top-level declarations
/// they touch. Empty when it is laid out already or does not parse.
nlohmann::json formatting(
    const std::string& text,
    std::optional<std::pair<uint32_t, uint32_t>> lines = std::nullopt);

}  // namespace ss::lsp
