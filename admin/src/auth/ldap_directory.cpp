#include "admin/auth/ldap_directory.hpp"

#include <fmt/format.h>
#include <ldap.h>

#include <algorithm>
#include <memory>

namespace cronwheel::admin {
namespace {

struct LdapFree {
  void operator()(LDAP* ld) const { ldap_unbind_ext_s(ld, nullptr, nullptr); }
};
struct MessageFree {
  void operator()(LDAPMessage* m) const { ldap_msgfree(m); }
};
using Connection = std::unique_ptr<LDAP, LdapFree>;
using Message = std::unique_ptr<LDAPMessage, MessageFree>;

Error Unavailable(const LdapConfig& c, const std::string& step, int rc) {
  return Error{ErrorKind::kUnavailable,
               fmt::format("the LDAP directory {} failed at {}: {}", c.url, step, ldap_err2string(rc))};
}

std::string Fill(std::string text, std::string_view name, const std::string& value) {
  const std::string key = fmt::format("{{{}}}", name);
  for (auto pos = text.find(key); pos != std::string::npos; pos = text.find(key, pos + value.size())) {
    text.replace(pos, key.size(), value);
  }
  return text;
}

int SimpleBind(LDAP* ld, const std::string& dn, const std::string& password) {
  berval cred{.bv_len = password.size(), .bv_val = const_cast<char*>(password.c_str())};  // NOLINT
  return ldap_sasl_bind_s(ld, dn.c_str(), LDAP_SASL_SIMPLE, &cred, nullptr, nullptr, nullptr);
}

Result<Connection> Connect(const LdapConfig& c) {
  LDAP* raw = nullptr;
  if (const int rc = ldap_initialize(&raw, c.url.c_str()); rc != LDAP_SUCCESS)
    return Unavailable(c, "connect", rc);
  Connection ld(raw);
  const int version = LDAP_VERSION3;
  ldap_set_option(ld.get(), LDAP_OPT_PROTOCOL_VERSION, &version);
  ldap_set_option(ld.get(), LDAP_OPT_REFERRALS, LDAP_OPT_OFF);
  timeval timeout{.tv_sec = static_cast<time_t>(c.timeout.count()), .tv_usec = 0};
  ldap_set_option(ld.get(), LDAP_OPT_NETWORK_TIMEOUT, &timeout);
  ldap_set_option(ld.get(), LDAP_OPT_TIMEOUT, &timeout);
  const int demand = LDAP_OPT_X_TLS_DEMAND;
  ldap_set_option(ld.get(), LDAP_OPT_X_TLS_REQUIRE_CERT, &demand);
  if (!c.ca_file.empty()) ldap_set_option(ld.get(), LDAP_OPT_X_TLS_CACERTFILE, c.ca_file.c_str());
  const int server = 0;
  ldap_set_option(ld.get(), LDAP_OPT_X_TLS_NEWCTX, &server);  // this connection's TLS settings take effect
  if (c.start_tls) {
    if (const int rc = ldap_start_tls_s(ld.get(), nullptr, nullptr); rc != LDAP_SUCCESS)
      return Unavailable(c, "StartTLS", rc);
  }
  return ld;
}

// The entries of `filter` under `base` (subtree), with `attribute` ("1.1" = none); limited to `limit`.
Result<Message> Search(LDAP* ld, const LdapConfig& c, const std::string& base, const std::string& filter,
                       const char* attribute, int limit) {
  char* attrs[] = {const_cast<char*>(attribute), nullptr};  // NOLINT
  timeval timeout{.tv_sec = static_cast<time_t>(c.timeout.count()), .tv_usec = 0};
  LDAPMessage* raw = nullptr;
  const int rc = ldap_search_ext_s(ld, base.c_str(), LDAP_SCOPE_SUBTREE, filter.c_str(), attrs, 0, nullptr,
                                   nullptr, &timeout, limit, &raw);
  Message result(raw);
  if (rc != LDAP_SUCCESS && rc != LDAP_SIZELIMIT_EXCEEDED) return Unavailable(c, "a search", rc);
  return result;
}

// The one value of `subject_attribute` of the entry `dn` (read as whoever is bound).
Result<std::string> ReadSubject(LDAP* ld, const LdapConfig& c, const std::string& dn) {
  char* attrs[] = {const_cast<char*>(c.subject_attribute.c_str()), nullptr};  // NOLINT
  timeval timeout{.tv_sec = static_cast<time_t>(c.timeout.count()), .tv_usec = 0};
  LDAPMessage* raw = nullptr;
  const int rc = ldap_search_ext_s(ld, dn.c_str(), LDAP_SCOPE_BASE, "(objectClass=*)", attrs, 0, nullptr,
                                   nullptr, &timeout, 1, &raw);
  Message found(raw);
  if (rc != LDAP_SUCCESS) return Unavailable(c, "reading the user's subject_attribute", rc);
  LDAPMessage* entry = ldap_first_entry(ld, found.get());
  berval** values = entry == nullptr ? nullptr : ldap_get_values_len(ld, entry, c.subject_attribute.c_str());
  const int count = values == nullptr ? 0 : ldap_count_values_len(values);
  std::string subject = count == 1 ? SubjectText(std::string_view(values[0]->bv_val, values[0]->bv_len)) : "";
  if (values != nullptr) ldap_value_free_len(values);
  if (count != 1) {
    return Error{ErrorKind::kUnavailable,
                 fmt::format("the LDAP directory {} gives the entry '{}' {} values of subject_attribute '{}' "
                             "that its user may read (one is needed: set subject_attribute in the SSO file, "
                             "docs/operations.md, \"Single sign-on\")",
                             c.url, dn, count, c.subject_attribute)};
  }
  return subject;
}

}  // namespace

std::string SubjectText(std::string_view value) {
  const bool text = !value.empty() &&
                    std::all_of(value.begin(), value.end(), [](char ch) { return ch >= 0x20 && ch < 0x7f; });
  if (text) return std::string(value);
  std::string out;
  out.reserve(value.size() * 2);
  for (const char ch : value)
    out += fmt::format("{:02x}", static_cast<unsigned char>(ch));
  return out;
}

std::string EscapeFilterValue(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (const char ch : value) {
    if (ch == '*' || ch == '(' || ch == ')' || ch == '\\' || ch == '\0') {
      out += fmt::format("\\{:02x}", static_cast<unsigned char>(ch));
    } else {
      out += ch;
    }
  }
  return out;
}

std::string EscapeDnValue(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (std::size_t i = 0; i < value.size(); ++i) {
    const char ch = value[i];
    const bool special = ch == ',' || ch == '+' || ch == '"' || ch == '\\' || ch == '<' || ch == '>' ||
                         ch == ';' || ch == '=' || (i == 0 && (ch == ' ' || ch == '#')) ||
                         (i + 1 == value.size() && ch == ' ');
    if (ch == '\0') {
      out += "\\00";
    } else {
      if (special) out += '\\';
      out += ch;
    }
  }
  return out;
}

Result<DirectoryUser> LdapDirectory::Authenticate(const std::string& username,
                                                  const std::string& password) const {
  const auto wrong = Error::Unauthenticated("wrong username or password");
  if (password.empty() || username.empty()) return wrong;
  auto ld = Connect(config_);
  if (!ld) return ld.error();

  DirectoryUser user;
  if (!config_.user_dn.empty()) {
    user.dn = Fill(config_.user_dn, "username", EscapeDnValue(username));
  } else {
    if (!config_.bind_dn.empty()) {
      if (const int rc = SimpleBind(ld->get(), config_.bind_dn, config_.bind_password); rc != LDAP_SUCCESS)
        return Unavailable(config_, fmt::format("the bind of bind_dn '{}'", config_.bind_dn), rc);
    }
    auto found = Search(ld->get(), config_, config_.user_base,
                        Fill(config_.user_filter, "username", EscapeFilterValue(username)), LDAP_NO_ATTRS, 2);
    if (!found) return found.error();
    if (ldap_count_entries(ld->get(), found->get()) != 1) return wrong;
    char* dn = ldap_get_dn(ld->get(), ldap_first_entry(ld->get(), found->get()));
    if (dn == nullptr) return wrong;
    user.dn = dn;
    ldap_memfree(dn);
  }
  if (const int rc = SimpleBind(ld->get(), user.dn, password); rc != LDAP_SUCCESS) {
    if (rc == LDAP_INVALID_CREDENTIALS || rc == LDAP_INVALID_DN_SYNTAX || rc == LDAP_NO_SUCH_OBJECT)
      return wrong;
    return Unavailable(config_, "the user's bind", rc);
  }
  if (config_.subject_attribute == "dn") {
    user.subject = user.dn;
  } else {
    auto subject = ReadSubject(ld->get(), config_, user.dn);
    if (!subject) return subject.error();
    user.subject = *std::move(subject);
  }
  if (config_.group_base.empty()) return user;
  const auto filter = Fill(Fill(config_.group_filter, "dn", EscapeFilterValue(user.dn)), "username",
                           EscapeFilterValue(username));
  auto groups = Search(ld->get(), config_, config_.group_base, filter, config_.group_attribute.c_str(), 1000);
  if (!groups) return groups.error();
  for (LDAPMessage* e = ldap_first_entry(ld->get(), groups->get()); e != nullptr;
       e = ldap_next_entry(ld->get(), e)) {
    berval** values = ldap_get_values_len(ld->get(), e, config_.group_attribute.c_str());
    if (values == nullptr) continue;
    for (berval** v = values; *v != nullptr; ++v)
      user.groups.emplace_back((*v)->bv_val, (*v)->bv_len);
    ldap_value_free_len(values);
  }
  return user;
}

}  // namespace cronwheel::admin
