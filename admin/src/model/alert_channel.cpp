#include "admin/model/alert_channel.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <utility>

#include "admin/model/validation.hpp"
#include "cronwheel/json.hpp"
#include "cronwheel/text.hpp"

namespace cronwheel::admin {
namespace {

constexpr std::array<std::pair<AlertKind, std::string_view>, 2> kKinds = {{
    {AlertKind::kEmail, "EMAIL"},
    {AlertKind::kWebhook, "WEBHOOK"},
}};
constexpr std::array<std::pair<AlertPreset, std::string_view>, 6> kPresets = {{
    {AlertPreset::kSlack, "SLACK"},
    {AlertPreset::kDingTalk, "DINGTALK"},
    {AlertPreset::kWeCom, "WECOM"},
    {AlertPreset::kFeishu, "FEISHU"},
    {AlertPreset::kJson, "JSON"},
    {AlertPreset::kCustom, "CUSTOM"},
}};

template <class E, std::size_t N>
std::string_view NameOf(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [v, name] : table) {
    if (v == e) return name;
  }
  return table[0].second;
}

template <class E, std::size_t N>
std::optional<E> Parse(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view s) {
  for (const auto& [v, name] : table) {
    if (name == s) return v;
  }
  return std::nullopt;
}

// Values that would break a body pasted raw: quotes, a backslash, line breaks, braces, a control character.
AlertValues HostileSample() {
  AlertValues values;
  for (const auto name : AlertFields()) {
    const bool number =
        name.ends_with("_id") || name.ends_with("_code") || name.ends_with("_ms") || name == "suppressed";
    values.push_back(
        {name, number ? std::string("123") : std::string("x\" \\ }{ \n\t\x01 {{y}} \xE2\x9C\x93")});
  }
  return values;
}

// "a=1&b=two%20x": printable ASCII without spaces or '#'.
bool ValidQuery(std::string_view q) {
  return std::all_of(q.begin(), q.end(), [](char c) { return c > ' ' && c < 0x7f && c != '#'; });
}

}  // namespace

std::string_view ToString(AlertKind k) {
  return NameOf(kKinds, k);
}
std::string_view ToString(AlertPreset p) {
  return NameOf(kPresets, p);
}
std::string ValidValues(AlertKind) {
  return "EMAIL, WEBHOOK";
}
std::string ValidValues(AlertPreset) {
  return "SLACK, DINGTALK, WECOM, FEISHU, JSON, CUSTOM";
}
std::optional<AlertKind> ParseAlertKind(std::string_view s) {
  return Parse(kKinds, s);
}
std::optional<AlertPreset> ParseAlertPreset(std::string_view s) {
  return Parse(kPresets, s);
}

const std::vector<std::string_view>& AlertFields() {
  static const std::vector<std::string_view> kFields = {
      "event",        "title",       "text",         "job_id",     "job_description",
      "app_name",     "log_id",      "trigger_type", "scheduled",  "scheduled_ms",
      "trigger_code", "trigger_msg", "handle_code",  "handle_msg", "suppressed"};
  return kFields;
}

std::optional<std::string_view> PresetTemplate(AlertPreset preset) {
  switch (preset) {
    case AlertPreset::kSlack:
      return R"({"text": "{{text}}"})";
    case AlertPreset::kDingTalk:
    case AlertPreset::kWeCom:
      return R"({"msgtype": "text", "text": {"content": "{{text}}"}})";
    case AlertPreset::kFeishu:
      return R"({"msg_type": "text", "content": {"text": "{{text}}"}})";
    case AlertPreset::kJson:
      return R"({"event": "{{event}}", "log_id": {{log_id}}, "job_id": {{job_id}}, )"
             R"("job_description": "{{job_description}}", "app_name": "{{app_name}}", )"
             R"("trigger_type": "{{trigger_type}}", "scheduled_ms": {{scheduled_ms}}, )"
             R"("trigger_code": {{trigger_code}}, "trigger_msg": "{{trigger_msg}}", )"
             R"("handle_code": {{handle_code}}, "handle_msg": "{{handle_msg}}", "text": "{{text}}"})";
    case AlertPreset::kCustom:
      return std::nullopt;
  }
  return std::nullopt;
}

Result<std::string> RenderAlertTemplate(std::string_view tmpl, const AlertValues& values, bool json) {
  std::string out;
  out.reserve(tmpl.size() + 256);
  std::size_t pos = 0;
  while (true) {
    const auto open = tmpl.find("{{", pos);
    if (open == std::string_view::npos) {
      out.append(tmpl.substr(pos));
      return out;
    }
    out.append(tmpl.substr(pos, open - pos));
    const auto close = tmpl.find("}}", open + 2);
    if (close == std::string_view::npos) {
      return Error::Invalid(fmt::format("'{{{{' at byte {} has no '}}}}' after it", open));
    }
    const auto name = Trim(tmpl.substr(open + 2, close - open - 2));
    const auto it = std::find_if(values.begin(), values.end(), [&](const auto& v) { return v.name == name; });
    if (it == values.end()) {
      return Error::Invalid(fmt::format("unknown field {{{{{}}}}}; the fields are: {}", Utf8Prefix(name, 40),
                                        fmt::join(AlertFields(), ", ")));
    }
    if (json) {
      const auto quoted = DumpLossy(nlohmann::json(it->value));
      out.append(quoted, 1, quoted.size() - 2);  // the inside of the JSON string
    } else {
      out.append(it->value);
    }
    pos = close + 2;
  }
}

UrlAndQuery SplitQuery(std::string_view url) {
  const auto q = url.find('?');
  if (q == std::string_view::npos) return {std::string(url), ""};
  return {std::string(url.substr(0, q)), std::string(url.substr(q + 1))};
}

void CheckAlertChannel(const AlertChannel& c, const std::vector<std::string>& webhook_allow,
                       FieldErrors& errors) {
  if (c.name.empty() || c.name.size() > 64 || IsBlank(c.name)) {
    errors.push_back({"name",
                      fmt::format("must be 1 to 64 characters, got {}", c.name.size()),
                      "length",
                      {{"min", 1}, {"max", 64}, {"actual", c.name.size()}}});
  }
  if (c.kind == AlertKind::kEmail) {
    if (c.target.empty() || !ValidEmailList(c.target)) {
      errors.push_back(
          {"target",
           fmt::format("'{}' is not a comma-separated list of e-mail addresses", Utf8Prefix(c.target, 200)),
           "format",
           {{"what", "email"}}});
    }
  } else {
    const auto [url, query] = SplitQuery(c.target);
    if (const auto parsed = ParseWebhookUrl(url); !parsed.ok()) {
      errors.push_back({"target", parsed.error().message, "format", {{"what", "url"}}});
    } else if (!ValidQuery(query)) {
      errors.push_back({"target",
                        "the URL's query must be printable ASCII without spaces or '#'",
                        "format",
                        {{"what", "url"}}});
    } else if (!WebhookAllowed(url, webhook_allow)) {
      errors.push_back(
          {"target",
           fmt::format("'{}' is not under an allowed webhook prefix (the operator's alarm_webhook_allow)",
                       Utf8Prefix(url, 200))});
    }
  }
  const bool custom = c.kind == AlertKind::kWebhook && c.preset == AlertPreset::kCustom;
  if (c.kind == AlertKind::kWebhook && !custom && !c.body_template.empty()) {
    errors.push_back({"body_template", fmt::format("only CUSTOM webhooks and e-mail take a template, not {}",
                                                   ToString(c.preset))});
  }
  if (custom && c.body_template.empty())
    errors.push_back({"body_template", "is required for CUSTOM", "required"});
  if (!c.body_template.empty()) {
    const auto rendered = RenderAlertTemplate(c.body_template, HostileSample(), custom);
    if (!rendered) {
      errors.push_back({"body_template", rendered.error().message});
    } else if (custom) {
      const auto body = nlohmann::json::parse(*rendered, nullptr, false);
      if (body.is_discarded() || !body.is_object()) {
        errors.push_back(
            {"body_template",
             "must render to a JSON object: write each {{field}} inside a JSON string (\"{{text}}\"), "
             "except the numbers (job_id, log_id, scheduled_ms, trigger_code, handle_code)"});
      }
    }
  }
  const bool signs = c.kind == AlertKind::kWebhook &&
                     (c.preset == AlertPreset::kDingTalk || c.preset == AlertPreset::kFeishu);
  if (!c.secret.empty() && !signs) {
    errors.push_back({"secret", "only DINGTALK and FEISHU webhooks are signed with a secret"});
  }
  for (std::size_t i = 0; i < c.events.size(); ++i) {
    const auto& e = c.events[i];
    const auto& known = AlertEvents();
    if (std::find(known.begin(), known.end(), e) == known.end() ||
        std::find(c.events.begin(), c.events.begin() + static_cast<std::ptrdiff_t>(i), e) !=
            c.events.begin() + static_cast<std::ptrdiff_t>(i)) {
      errors.push_back({"events",
                        fmt::format("'{}' is not valid or is listed twice; use each of {} at most once",
                                    Utf8Prefix(e, 40), fmt::join(known, ", ")),
                        "enum",
                        {{"allowed", fmt::format("{}", fmt::join(known, ", "))}}});
      break;
    }
  }
  if (c.threshold < 1 || c.threshold > kMaxAlertThreshold) {
    errors.push_back({"threshold",
                      fmt::format("must be from 1 to {}, got {}", kMaxAlertThreshold, c.threshold),
                      "range",
                      {{"min", 1}, {"max", kMaxAlertThreshold}}});
  }
  if (c.silence_s < 0 || std::int64_t{c.silence_s} * 1000 > kMaxAlertSilenceMs) {
    errors.push_back({"silence_s",
                      fmt::format("must be from 0 to {}, got {}", kMaxAlertSilenceMs / 1000, c.silence_s),
                      "range",
                      {{"min", 0}, {"max", kMaxAlertSilenceMs / 1000}}});
  }
  if (c.secret.size() > 256) {
    errors.push_back({"secret",
                      fmt::format("must be at most 256 bytes, got {}", c.secret.size()),
                      "length",
                      {{"min", 0}, {"max", 256}, {"actual", c.secret.size()}}});
  }
}

}  // namespace cronwheel::admin
