#pragma once
// An LDAP directory as a password check (auth/sso_config.hpp, LdapConfig; docs/operations.md, "Single
// sign-on"), through Debian's OpenLDAP client library (libldap). A login:
//   1. connects to `url`: ldaps://, or ldap:// upgraded by StartTLS (RFC 4513 §3) before anything is sent;
//      the server's certificate is always verified (against `ca_file`, else the system's trust store);
//   2. finds the user's DN: `user_dn` with {username} filled in (RFC 4514-escaped), or a search under
//      `user_base` for `user_filter` (RFC 4515-escaped), as `bind_dn` when given, which must find exactly one
//      entry;
//   3. binds as that DN with the password (a simple bind; an empty password is refused before, since LDAP
//      would take it as an anonymous bind, RFC 4513 §5.1.2);
//   4. reads the user's subject, the `subject_attribute` of its entry (as the user; "dn" = the DN);
//   5. reads the user's groups: the `group_attribute` of each entry under `group_base` matching
//      `group_filter` ({dn}, {username}), searched as the user.
// Every operation is bounded by `timeout`.
//
// Thread-safety: each Authenticate opens its own connection; calls may run at once.

#include <string>
#include <vector>

#include "admin/auth/sso_config.hpp"
#include "admin/model/result.hpp"

namespace cronwheel::admin {

struct DirectoryUser {
  std::string dn;
  std::string subject;  // the subject_attribute's value (hex when it is not printable text), or the DN
  std::vector<std::string> groups;  // the group_attribute values
};

class LdapDirectory {
 public:
  // `config` must outlive this.
  explicit LdapDirectory(const LdapConfig& config) : config_(config) {}

  // kUnauthenticated "wrong username or password" for an unknown user, a wrong password or several entries
  // found; kUnavailable naming the URL and the library's message when the directory cannot be reached, TLS
  // fails, or the service account's bind or a search fails, and naming the attribute when the user's entry
  // has no (or several) subject_attribute values the user may read.
  Result<DirectoryUser> Authenticate(const std::string& username, const std::string& password) const;

 private:
  const LdapConfig& config_;
};

// `value` as a subject: itself when it is printable ASCII, else its bytes in lower-case hex (AD's binary
// objectGUID).
std::string SubjectText(std::string_view value);

// RFC 4515 §3: `value` with *, (, ), \ and NUL escaped for a search filter.
std::string EscapeFilterValue(const std::string& value);
// RFC 4514 §2.4: `value` escaped for an attribute value of a DN.
std::string EscapeDnValue(const std::string& value);

}  // namespace cronwheel::admin
