#include "admin/auth/sso_config.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "cronwheel/net/http_address.hpp"
#include "cronwheel/net/ip_address.hpp"

namespace cronwheel::admin {
namespace {

// Reads one table's keys, remembering which were read, so that a key nobody reads (a typo) is an error.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string where, std::string file)
      : table_(table), where_(std::move(where)), file_(std::move(file)) {}

  [[nodiscard]] std::string Key(std::string_view key) const {
    return where_.empty() ? std::string(key) : fmt::format("{}.{}", where_, key);
  }
  [[nodiscard]] Error Bad(std::string_view key, std::string_view what) const {
    return Error::Invalid(fmt::format("SSO file {}: {} {}", file_, Key(key), what));
  }

  Result<void> String(std::string_view key, std::string& out) {
    read_.insert(std::string(key));
    const auto* node = table_.get(key);
    if (node == nullptr) return {};
    const auto s = node->value<std::string>();
    if (!node->is_string() || !s) return Bad(key, "must be a string");
    out = *s;
    return {};
  }
  Result<void> Bool(std::string_view key, bool& out) {
    read_.insert(std::string(key));
    const auto* node = table_.get(key);
    if (node == nullptr) return {};
    if (!node->is_boolean()) return Bad(key, "must be true or false");
    out = *node->value<bool>();
    return {};
  }
  Result<void> Seconds(std::string_view key, std::chrono::seconds& out, int min, int max) {
    read_.insert(std::string(key));
    const auto* node = table_.get(key);
    if (node == nullptr) return {};
    const auto n = node->value<std::int64_t>();
    if (!node->is_integer() || !n || *n < min || *n > max)
      return Bad(key, fmt::format("must be a whole number of seconds from {} to {}", min, max));
    out = std::chrono::seconds(*n);
    return {};
  }
  Result<void> Strings(std::string_view key, std::vector<std::string>& out) {
    read_.insert(std::string(key));
    const auto* node = table_.get(key);
    if (node == nullptr) return {};
    const auto* arr = node->as_array();
    if (arr == nullptr) return Bad(key, "must be an array of strings");
    out.clear();
    for (const auto& el : *arr) {
      const auto s = el.value<std::string>();
      if (!el.is_string() || !s) return Bad(key, "must be an array of strings");
      out.push_back(*s);
    }
    return {};
  }
  // `key` or `key_file` (the secret in a file, its trailing newline dropped); not both.
  Result<void> Secret(std::string_view key, std::string& out) {
    std::string file;
    if (auto r = String(key, out); !r) return r;
    const auto file_key = fmt::format("{}_file", key);
    if (auto r = String(file_key, file); !r) return r;
    if (file.empty()) return {};
    if (!out.empty()) return Bad(key, fmt::format("and {} are both set: give one", Key(file_key)));
    std::ifstream in(file);
    if (!in) return Bad(file_key, fmt::format("= '{}': the file cannot be read", file));
    std::stringstream text;
    text << in.rdbuf();
    out = text.str();
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r'))
      out.pop_back();
    if (out.empty()) return Bad(file_key, fmt::format("= '{}': the file is empty", file));
    return {};
  }
  // Table arrays like [[oidc.roles]] are read by the caller; it marks them.
  void Mark(std::string_view key) { read_.insert(std::string(key)); }

  [[nodiscard]] Result<void> NoOtherKeys() const {
    for (const auto& [k, node] : table_) {
      if (!read_.contains(std::string(k.str())))
        return Bad(k.str(), "is not a known key (docs/operations.md, \"Single sign-on\", lists them)");
    }
    return {};
  }

 private:
  const toml::table& table_;
  std::string where_;
  std::string file_;
  std::set<std::string> read_;
};

Result<std::vector<RoleRule>> ReadRoles(TableReader& parent, const toml::table& table,
                                        const std::string& where, const std::string& file) {
  parent.Mark("roles");
  std::vector<RoleRule> rules;
  const auto* node = table.get("roles");
  if (node == nullptr) return rules;
  const auto* arr = node->as_array();
  if (arr == nullptr || !arr->is_array_of_tables())
    return parent.Bad("roles", "must be an array of tables ([[...roles]])");
  rules.reserve(arr->size());
  for (std::size_t i = 0; i < arr->size(); ++i) {
    TableReader r(*arr->get(i)->as_table(), fmt::format("{}.roles[{}]", where, i + 1), file);
    RoleRule rule;
    std::string role;
    for (const auto& res : {r.String("value", rule.value), r.Bool("admin", rule.admin),
                            r.String("group", rule.group), r.String("role", role), r.NoOtherKeys()}) {
      if (!res) return res.error();
    }
    if (rule.value.empty()) return r.Bad("value", "is required: the group value at the source, or \"*\"");
    if (rule.admin) {
      if (!rule.group.empty() || !role.empty())
        return r.Bad("admin", "= true makes a global ADMIN: give no group or role with it");
    } else {
      if (rule.group.empty())
        return r.Bad("group", "is required (an executor group's app_name) unless admin = true");
      const auto parsed = ParseGroupRole(role);
      if (!parsed)
        return r.Bad("role", fmt::format("= '{}' is not one of {}", role, ValidValues(GroupRole{})));
      rule.role = *parsed;
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Whether the admin reaches `host` without crossing a network: the name localhost, or an address of
// 127.0.0.0/8 or ::1 (an IPv4-mapped ::ffff:127.x.y.z too, which is the IPv4 address), in any form a resolver
// reads (issue 44, N7: the host is compared, never a prefix of the URL's text).
bool LoopbackHost(std::string_view host) {
  std::string lower(host);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "localhost") return true;
  const auto ip = net::ParseNumericHost(host);
  if (!ip) return false;
  const net::IpBytes loopback6{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return ip->address == loopback6 || (net::IsIpv4(ip->address) && ip->address[12] == 127);
}

// An issuer or redirect_url: a URL net::ParseHttpAddress accepts (no user info, query or fragment), https://,
// or http:// on a loopback host or in dev mode.
Result<void> CheckUrl(TableReader& r, std::string_view key, const std::string& url, bool allow_plain_http) {
  if (url.empty()) return r.Bad(key, "is required");
  const auto parsed = net::ParseHttpAddress(url);
  if (!parsed.ok()) return r.Bad(key, fmt::format("= '{}': {}", url, std::string(parsed.status().message())));
  if (StartsWith(url, "https://")) return {};
  // Plain HTTP on loopback never crosses a network (a provider on the same host, tests).
  if (allow_plain_http || LoopbackHost(parsed->host)) return {};
  return r.Bad(key, fmt::format("= '{}' must be https:// (http:// only on loopback: 127.0.0.0/8, [::1] or "
                                "localhost; or in dev mode)",
                                url));
}

Result<OidcProviderConfig> ReadProvider(const toml::table& table, std::size_t index, const std::string& file,
                                        bool allow_plain_http) {
  TableReader r(table, fmt::format("oidc[{}]", index + 1), file);
  OidcProviderConfig p;
  for (const auto& res : {r.String("name", p.name), r.String("title", p.title), r.String("issuer", p.issuer),
                          r.String("client_id", p.client_id), r.Secret("client_secret", p.client_secret),
                          r.String("redirect_url", p.redirect_url), r.Strings("scopes", p.scopes),
                          r.String("username_claim", p.username_claim),
                          r.String("groups_claim", p.groups_claim), r.String("ca_file", p.ca_file)}) {
    if (!res) return res.error();
  }
  auto roles = ReadRoles(r, table, fmt::format("oidc[{}]", index + 1), file);
  if (!roles) return roles.error();
  p.roles = *std::move(roles);
  if (auto res = r.NoOtherKeys(); !res) return res.error();

  static const std::regex kName("[a-z0-9_-]{1,32}");
  if (!std::regex_match(p.name, kName))
    return r.Bad("name", fmt::format("= '{}' must be 1 to 32 of a-z, 0-9, _ and -", p.name));
  if (p.title.empty()) p.title = p.name;
  while (!p.issuer.empty() && p.issuer.back() == '/')
    p.issuer.pop_back();
  if (auto res = CheckUrl(r, "issuer", p.issuer, allow_plain_http); !res) return res.error();
  if (auto res = CheckUrl(r, "redirect_url", p.redirect_url, allow_plain_http); !res) return res.error();
  if (p.client_id.empty()) return r.Bad("client_id", "is required");
  if (p.client_secret.empty())
    return r.Bad("client_secret", "is required (or client_secret_file): cronwheel is a confidential client");
  if (std::find(p.scopes.begin(), p.scopes.end(), "openid") == p.scopes.end())
    p.scopes.insert(p.scopes.begin(), "openid");
  if (p.username_claim.empty()) return r.Bad("username_claim", "must name a claim");
  if (p.roles.empty())
    return r.Bad("roles", "has no rule: nobody could sign in; add [[oidc.roles]] (docs/operations.md)");
  return p;
}

Result<LdapConfig> ReadLdap(const toml::table& table, const std::string& file) {
  TableReader r(table, "ldap", file);
  LdapConfig l;
  for (const auto& res :
       {r.String("url", l.url), r.Bool("start_tls", l.start_tls), r.String("ca_file", l.ca_file),
        r.String("user_dn", l.user_dn), r.String("bind_dn", l.bind_dn),
        r.Secret("bind_password", l.bind_password), r.String("user_base", l.user_base),
        r.String("user_filter", l.user_filter), r.String("group_base", l.group_base),
        r.String("group_filter", l.group_filter), r.String("group_attribute", l.group_attribute),
        r.String("subject_attribute", l.subject_attribute), r.Seconds("timeout_s", l.timeout, 1, 60)}) {
    if (!res) return res.error();
  }
  auto roles = ReadRoles(r, table, "ldap", file);
  if (!roles) return roles.error();
  l.roles = *std::move(roles);
  if (auto res = r.NoOtherKeys(); !res) return res.error();

  if (StartsWith(l.url, "ldaps://")) {
    if (l.start_tls) return r.Bad("start_tls", "= true with an ldaps:// url: the connection is TLS already");
  } else if (StartsWith(l.url, "ldap://")) {
    if (!l.start_tls) {
      return r.Bad("url",
                   fmt::format("= '{}' is plain LDAP: use ldaps://, or set start_tls = true (passwords "
                               "must not cross the network in clear)",
                               l.url));
    }
  } else {
    return r.Bad("url", fmt::format("= '{}' must start with ldaps:// or ldap://", l.url));
  }
  if (l.user_dn.empty()) {
    if (l.user_base.empty())
      return r.Bad("user_base", "is required when user_dn is not set (search then bind)");
    if (l.user_filter.find("{username}") == std::string::npos)
      return r.Bad("user_filter", fmt::format("= '{}' must contain {{username}}", l.user_filter));
  } else if (l.user_dn.find("{username}") == std::string::npos) {
    return r.Bad("user_dn", fmt::format("= '{}' must contain {{username}}", l.user_dn));
  }
  if (!l.bind_dn.empty() && l.bind_password.empty())
    return r.Bad("bind_password", "is required with bind_dn (or bind_password_file)");
  if (!l.group_base.empty() && l.group_attribute.empty())
    return r.Bad("group_attribute", "must name an attribute");
  if (l.subject_attribute.empty())
    return r.Bad("subject_attribute", "must name an attribute (entryUUID, objectGUID, ...) or be \"dn\"");
  if (l.roles.empty()) return r.Bad("roles", "has no rule: nobody could sign in; add [[ldap.roles]]");
  return l;
}

}  // namespace

MappedRoles MapRoles(const std::vector<RoleRule>& rules, const std::vector<std::string>& values) {
  MappedRoles out;
  std::map<std::string, GroupRole> best;
  for (const auto& rule : rules) {
    const bool match =
        rule.value == "*" || std::find(values.begin(), values.end(), rule.value) != values.end();
    if (!match) continue;
    if (rule.admin) {
      out.admin = true;
      continue;
    }
    auto [it, added] = best.emplace(rule.group, rule.role);
    if (!added && rule.role > it->second) it->second = rule.role;
  }
  out.groups.assign(best.begin(), best.end());
  return out;
}

const OidcProviderConfig* SsoConfig::Provider(std::string_view name) const {
  for (const auto& p : oidc) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

Result<SsoConfig> LoadSsoConfig(const std::string& path, bool allow_plain_http) {
  toml::table file;
  try {
    file = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    return Error::Invalid(fmt::format("SSO file {}: {} (line {}, column {})", path, e.description(),
                                      e.source().begin.line, e.source().begin.column));
  }
  SsoConfig config;
  TableReader top(file, "", path);
  top.Mark("oidc");
  top.Mark("ldap");
  if (auto res = top.NoOtherKeys(); !res) return res.error();
  if (const auto* node = file.get("oidc"); node != nullptr) {
    const auto* arr = node->as_array();
    if (arr == nullptr || !arr->is_array_of_tables())
      return top.Bad("oidc", "must be an array of tables ([[oidc]])");
    for (std::size_t i = 0; i < arr->size(); ++i) {
      auto p = ReadProvider(*arr->get(i)->as_table(), i, path, allow_plain_http);
      if (!p) return p.error();
      if (config.Provider(p->name) != nullptr)
        return top.Bad(fmt::format("oidc[{}].name", i + 1), fmt::format("= '{}' is used twice", p->name));
      config.oidc.push_back(*std::move(p));
    }
  }
  if (const auto* node = file.get("ldap"); node != nullptr) {
    const auto* table = node->as_table();
    if (table == nullptr) return top.Bad("ldap", "must be a table ([ldap])");
    auto l = ReadLdap(*table, path);
    if (!l) return l.error();
    config.ldap = *std::move(l);
  }
  return config;
}

}  // namespace cronwheel::admin
