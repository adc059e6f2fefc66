// API token scopes (admin/model/accounts.hpp).
#include "admin/model/accounts.hpp"

#include <array>
#include <utility>

namespace cronwheel::admin {
namespace {
constexpr std::array<std::pair<TokenScope, std::string_view>, 4> kScopes = {{
    {TokenScope::kRead, "read"},
    {TokenScope::kOperate, "operate"},
    {TokenScope::kWrite, "write"},
    {TokenScope::kAdmin, "admin"},
}};
}  // namespace

std::string_view ToString(TokenScope scope) {
  for (const auto& [s, name] : kScopes) {
    if (s == scope) return name;
  }
  return "read";
}

std::optional<TokenScope> ParseTokenScope(std::string_view text) {
  for (const auto& [s, name] : kScopes) {
    if (name == text) return s;
  }
  return std::nullopt;
}

}  // namespace cronwheel::admin
