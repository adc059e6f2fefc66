// API token scopes and group roles (admin/model/accounts.hpp).
#include "admin/model/accounts.hpp"

#include <array>
#include <string>
#include <utility>

namespace cronwheel::admin {
namespace {
constexpr std::array<std::pair<TokenScope, std::string_view>, 4> kScopes = {{
    {TokenScope::kRead, "read"},
    {TokenScope::kOperate, "operate"},
    {TokenScope::kWrite, "write"},
    {TokenScope::kAdmin, "admin"},
}};
constexpr std::array<std::pair<GroupRole, std::string_view>, 4> kRoles = {{
    {GroupRole::kViewer, "VIEWER"},
    {GroupRole::kOperator, "OPERATOR"},
    {GroupRole::kDeveloper, "DEVELOPER"},
    {GroupRole::kAdmin, "ADMIN"},
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

std::string_view ToString(GroupRole role) {
  for (const auto& [r, name] : kRoles) {
    if (r == role) return name;
  }
  return "VIEWER";
}

std::optional<GroupRole> ParseGroupRole(std::string_view text) {
  for (const auto& [r, name] : kRoles) {
    if (name == text) return r;
  }
  return std::nullopt;
}

std::string ValidValues(GroupRole) {
  std::string out;
  for (const auto& [r, name] : kRoles) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace cronwheel::admin
