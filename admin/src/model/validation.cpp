#include "admin/model/validation.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "cronwheel/net/http_address.hpp"
#include "cronwheel/text.hpp"
#include "ringwheel/schedule.hpp"

namespace cronwheel::admin {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool NameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A webhook URL's path as a server routes on it: percent-decoded once, or why that is ambiguous
// (validation.hpp, ParseWebhookUrl). `raw` is ParseHttpAddress's base_path.
Result<std::string> WebhookPath(std::string_view raw) {
  std::string path;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c < 0x21 || c > 0x7e) {
      return Error::Invalid("must be printable ASCII without spaces (percent-encode other characters)");
    }
    if (c == ';') {
      return Error::Invalid(
          "must not hold ';' (a path parameter, which a server may cut before it routes: /a/..;/b is /a/../b "
          "to Tomcat)");
    }
    if (c != '%') {
      path += c;
      continue;
    }
    const bool two_more = i + 2 < raw.size();
    const int high = two_more ? HexDigit(raw[i + 1]) : -1;
    const int low = two_more ? HexDigit(raw[i + 2]) : -1;
    if (high < 0 || low < 0) return Error::Invalid("has a '%' that does not start a %XX encoding");
    const auto decoded = static_cast<char>(high * 16 + low);
    if (decoded < 0x21 || decoded > 0x7e ||
        std::string_view("./\\%;?#").find(decoded) != std::string_view::npos) {
      return Error::Invalid(fmt::format(
          "must not hold %{}{} (an encoded '.', '/', '\\', '%', ';', '?' or '#', or a byte outside printable "
          "ASCII: servers and proxies decode them before or after they route, once or twice)",
          raw[i + 1], raw[i + 2]));
    }
    path += decoded;
    i += 2;
  }
  for (std::size_t start = 0; start < path.size();) {
    const auto end = std::min(path.find('/', start + 1), path.size());
    const auto segment = std::string_view(path).substr(start + 1, end - start - 1);
    if (!segment.empty() && segment.find_first_not_of('.') == std::string_view::npos) {
      return Error::Invalid("must not hold '.' or '..' segments");
    }
    start = end;
  }
  return path;
}

}  // namespace

bool ValidEmailList(std::string_view list) {
  if (list.empty()) return true;
  while (true) {
    const auto comma = list.find(',');
    auto part = list.substr(0, comma);  // spaces around it are allowed; CR, LF and tabs are not
    while (!part.empty() && part.front() == ' ')
      part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ')
      part.remove_suffix(1);
    const auto at = part.find('@');
    if (at == std::string_view::npos || at == 0 || at + 1 >= part.size() ||
        part.find_first_of(" <>\"\r\n") != std::string_view::npos) {
      return false;
    }
    if (comma == std::string_view::npos) return true;
    list.remove_prefix(comma + 1);
  }
}

bool ValidAppName(std::string_view name) {
  return name.size() >= 4 && name.size() <= 64 && std::isalnum(static_cast<unsigned char>(name[0])) &&
         std::all_of(name.begin(), name.end(), NameChar);
}

bool ValidUsername(std::string_view name) {
  return name.size() >= 3 && name.size() <= 100 &&
         std::all_of(name.begin(), name.end(), [](char c) { return NameChar(c) || c == '@' || c == '+'; });
}

Result<void> CheckPasswordPolicy(std::string_view password) {
  if (password.size() < kMinPasswordLength) {
    return Error::Invalid(
        fmt::format("must be at least {} characters, got {}", kMinPasswordLength, password.size()));
  }
  if (password.size() > kMaxPasswordLength) {
    return Error::Invalid(
        fmt::format("must be at most {} characters, got {}", kMaxPasswordLength, password.size()));
  }
  return {};
}

std::optional<std::string> NormalTag(std::string_view given) {
  std::string tag = Lower(given);
  const auto tag_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == ':' ||
           c == '/';
  };
  const bool valid = !tag.empty() && tag.size() <= kMaxTagLength &&
                     std::isalnum(static_cast<unsigned char>(tag[0])) &&
                     std::all_of(tag.begin(), tag.end(), tag_char);
  return valid ? std::optional<std::string>(std::move(tag)) : std::nullopt;
}

void CheckJobTags(std::vector<std::string>& tags, FieldErrors& errors) {
  std::vector<std::string> kept;
  for (const auto& tag : tags) {
    auto lower = NormalTag(tag);
    if (!lower) {
      errors.push_back(
          {"tags",
           fmt::format("tag '{}' is not valid: 1 to {} letters, digits, '-', '_', '.', ':' or '/', "
                       "starting with a letter or digit",
                       Utf8Prefix(tag, 60), kMaxTagLength),
           "format",
           {{"what", "tag"}, {"tag", std::string(Utf8Prefix(tag, 60))}}});
      return;
    }
    if (std::find(kept.begin(), kept.end(), *lower) == kept.end()) kept.push_back(std::move(*lower));
  }
  if (kept.size() > kMaxJobTags) {
    errors.push_back({"tags",
                      fmt::format("at most {} tags, got {}", kMaxJobTags, kept.size()),
                      "length",
                      {{"max", kMaxJobTags}, {"actual", kept.size()}}});
    return;
  }
  tags = std::move(kept);
}

void CheckJobFields(Job& job, FieldErrors& errors) {
  CheckJobTags(job.tags, errors);
  const auto schedule = ringwheel::Schedule::Parse(job.schedule_type, job.schedule_conf, job.time_zone);
  if (!schedule.ok()) {
    errors.push_back(
        {cronwheel::ErrorField(schedule.status()), std::string(schedule.status().message()), "schedule"});
  }
  if (job.time_zone.empty()) job.time_zone = "UTC";
  if (job.start_ms > 0 && job.end_ms > 0 && job.end_ms < job.start_ms) {
    errors.push_back(
        {"end_ms",
         fmt::format("the window ends ({}) before it starts (start_ms {}); use a later end_ms, or 0 "
                     "for no end",
                     job.end_ms, job.start_ms),
         "range",
         {{"min", job.start_ms}, {"actual", job.end_ms}}});
  }
  if (job.concurrency_policy == ConcurrencyPolicy::kForbid && job.max_concurrent > 1) {
    errors.push_back({"max_concurrent",
                      fmt::format("is {}, but concurrency_policy FORBID runs one fire at a time; use 0 or 1, "
                                  "or concurrency_policy ALLOW with a maximum",
                                  job.max_concurrent),
                      "range",
                      {{"min", 0}, {"max", 1}, {"actual", job.max_concurrent}}});
  }
  if (job.glue_type == GlueType::kBean && job.handler.empty()) {
    errors.push_back({"handler",
                      "is required for a BEAN job (the name of a handler registered in the executor)",
                      "required"});
  }
  if (job.glue_type == GlueType::kShell) std::erase(job.glue_source, '\r');
  if (job.enabled && job.schedule_type == "NONE") {
    errors.push_back(
        {"enabled", "a job with schedule_type NONE cannot be enabled: it runs only when triggered"});
  }
  if (!ValidEmailList(job.alarm_email)) {
    errors.push_back({"alarm_email",
                      fmt::format("'{}' is not a comma-separated list of e-mail addresses", job.alarm_email),
                      "format",
                      {{"what", "email"}}});
  }
  if (!job.alarm_webhook.empty()) {
    if (const auto url = net::ParseHttpAddress(job.alarm_webhook); !url.ok()) {
      errors.push_back({"alarm_webhook", std::string(url.status().message()), "format", {{"what", "url"}}});
    }
  }
}

Result<WebhookUrl> ParseWebhookUrl(std::string_view url) {
  const auto a = net::ParseHttpAddress(url);
  if (!a.ok()) return Error::Invalid(std::string(a.status().message()));
  auto path = WebhookPath(a->base_path);
  if (!path) {
    return Error::Invalid(
        fmt::format("URL '{}' is not valid: its path {}", url.substr(0, 200), path.error().message));
  }
  WebhookUrl u;
  u.https = a->origin.starts_with("https://");
  u.host = Lower(a->host);
  u.port = a->port;
  u.path = *std::move(path);
  return u;
}

bool WebhookAllowed(std::string_view url, const std::vector<std::string>& allow) {
  const auto u = ParseWebhookUrl(url);
  if (!u.ok()) return false;
  return std::any_of(allow.begin(), allow.end(), [&](const std::string& entry) {
    const auto p = ParseWebhookUrl(Trim(entry));
    if (!p.ok() || p->https != u->https || p->host != u->host || p->port != u->port) return false;
    // The path at or below the prefix's, at a '/' boundary: "/hooks" covers "/hooks" and "/hooks/x", not
    // "/hooksX".
    return p->path.empty() || u->path == p->path || u->path.starts_with(p->path + "/");
  });
}

Result<void> CheckWebhookAllow(const std::vector<std::string>& allow) {
  for (const auto& entry : allow) {
    if (Trim(entry).empty()) continue;
    if (const auto url = ParseWebhookUrl(Trim(entry)); !url.ok()) {
      return Error::Invalid(
          fmt::format("alarm_webhook_allow: {} (each entry is a URL prefix such as "
                      "https://hooks.example.com/alerts)",
                      url.error().message));
    }
  }
  return {};
}

void CheckWebhook(const Job& job, const Job* before, const std::vector<std::string>& allow,
                  FieldErrors& errors) {
  if (job.alarm_webhook.empty() || (before != nullptr && before->alarm_webhook == job.alarm_webhook)) return;
  if (WebhookAllowed(job.alarm_webhook, allow)) return;
  errors.push_back({"alarm_webhook",
                    allow.empty()
                        ? fmt::format("'{}' is not allowed: webhooks are off until the operator allows URL "
                                      "prefixes (setting alarm_webhook_allow)",
                                      job.alarm_webhook)
                        : fmt::format("'{}' is not allowed: it must be under one of {} (the same scheme, "
                                      "host and port, and a path at or below the prefix's; setting "
                                      "alarm_webhook_allow)",
                                      job.alarm_webhook, fmt::join(allow, ", "))});
}

}  // namespace cronwheel::admin
