#pragma once
// The rules a job, a group or a user must meet that need no database: what the REST API checks before it
// stores anything, and what the repositories check again inside their transactions. Every problem is a
// FieldError naming the field, the value and what would be valid (model/result.hpp).
//
// Thread-safety: pure functions.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/model.hpp"
#include "admin/model/result.hpp"

namespace cronwheel::admin {

inline constexpr std::size_t kMinPasswordLength = 10;
inline constexpr std::size_t kMaxPasswordLength = 1024;

// An executor's AppName (a group's app_name, a registration's registryKey): 4 to 64 ASCII letters, digits,
// '.', '_' or '-', starting with a letter or digit (XXL-JOB: 4 to 64 characters, docs/xxl-job-protocol.md
// §12).
bool ValidAppName(std::string_view name);
// "a@x, b@y": every comma-separated part is one address (local@domain, no spaces inside, no <>"); "" is an
// empty list.
bool ValidEmailList(std::string_view list);
// A username: 3 to 100 ASCII letters, digits, '.', '_', '-', '@' or '+' (an e-mail address is one: single
// sign-on providers name users so, sql/021_single_sign_on.sql).
bool ValidUsername(std::string_view name);
// The password policy: 10 to 1024 characters. kInvalid (no fields) saying what is wrong.
Result<void> CheckPasswordPolicy(std::string_view password);

// Tags on a job (docs/operations.md, "Tags"): at most kMaxJobTags, each 1 to kMaxTagLength characters of
// ASCII letters, digits and '-', '_', '.', ':', '/', starting with a letter or digit ("team:payments",
// "env/prod"). Tags are case-insensitive: CheckJobTags lower-cases them and drops repeats, keeping the first
// place of each. Appends one `tags` FieldError naming the first tag that is not valid.
inline constexpr std::size_t kMaxJobTags = 20;
inline constexpr std::size_t kMaxTagLength = 40;
// `tag` lower-cased when that is a valid tag, else nullopt.
std::optional<std::string> NormalTag(std::string_view tag);
void CheckJobTags(std::vector<std::string>& tags, FieldErrors& errors);

// The checks of a job that need no database: the schedule parses in its time zone (an empty zone becomes
// UTC), a BEAN job names a handler, a NONE schedule is not enabled, alarm e-mails and webhook are valid, the
// tags are valid (CheckJobTags), the window's end (end_ms) is not before its start, max_concurrent is 0 or 1
// under concurrency_policy FORBID.
// Strips '\r' from a shell script (XXL-JOB does, §10). Appends one FieldError per problem.
void CheckJobFields(Job& job, FieldErrors& errors);

// A URL as the webhook allow-list compares it (issue 21: a string prefix let
// "https://hooks.example.com.attacker.test" and "https://hooks.example.com:8443" past
// "https://hooks.example.com").
struct WebhookUrl {
  bool https = false;
  std::string host;  // lower case, without brackets
  int port = 0;      // explicit or the scheme's default (80, 443)
  std::string path;  // "" or "/a/b" (never ends in '/'), percent-decoded: the path a server routes on
};
// Error::Invalid naming the URL and what is wrong for anything net::ParseHttpAddress refuses (no http(s)
// scheme, user info, query, fragment, "//" or ".." in the path, a bad port) and for a path a server could
// route differently from how it reads here (issue 21; issue 44, F7: "/hooks/..;/x" is "/hooks/../x" to
// Tomcat, and "%252e%252e" is ".." to a server that decodes twice). The path is read as a server reads it,
// percent-decoded once, and refused when that is ambiguous rather than guessed at:
//  - a character outside printable ASCII (0x21..0x7e), or a ';' (a path parameter, which Tomcat and other
//    servlet containers cut from a segment before they route);
//  - a '%' not followed by two hexadecimal digits;
//  - an encoding of a character outside printable ASCII, or of '.', '/', '\', '%', ';', '?' or '#' (%2e,
//    %2f, %5c, %25, %3b, %3f, %23), which servers and proxies decode before or after they route, once or
//    twice, differently: "%252e" is "%2e" after one decoding and "." after two;
//  - a segment of dots only ("." "..", "...").
// E.g. "URL 'https://h/hooks/..;/x' is not valid: its path must not hold ';' (a path parameter, which a
// server may cut before it routes: /a/..;/b is /a/../b to Tomcat)". O(URL length).
Result<WebhookUrl> ParseWebhookUrl(std::string_view url);
// Whether the admin may POST to `url`: it parses, and one of the operator's `allow` entries (setting
// alarm_webhook_allow) parses and has its scheme, host (case-insensitive) and port (the scheme's default
// when not given), and a path equal to the URL's or a prefix of it ending at a '/' ("/hooks" allows
// "/hooks/x", not "/hooksX"), both paths percent-decoded as ParseWebhookUrl reads them ("/%68ooks/x" is
// "/hooks/x"). Entries that do not parse allow nothing. O(entries x URL length).
bool WebhookAllowed(std::string_view url, const std::vector<std::string>& allow);
// kInvalid naming the first entry of alarm_webhook_allow that does not parse (checked at start).
Result<void> CheckWebhookAllow(const std::vector<std::string>& allow);
// A job's alarm_webhook that is new or changed (before == nullptr: a new job) must be allowed: appends an
// alarm_webhook error when it is not. Checked when a job is saved and again when an alarm is sent, since
// the operator may change the list.
void CheckWebhook(const Job& job, const Job* before, const std::vector<std::string>& allow,
                  FieldErrors& errors);

}  // namespace cronwheel::admin
