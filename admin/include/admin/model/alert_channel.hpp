#pragma once
// Alert channels (docs/operations.md, "Alert channels"): where an alarm goes. A channel is a shared, named
// object: an e-mail to a list of addresses through the operator's SMTP server, or an HTTP POST to a webhook
// whose body is a template. Jobs and groups name the channels they alert (alert_channel_ids); a fire's
// alarm goes to its job's channels and its group's, each once.
//
// Templates name an alarm's fields as {{field}} (AlertFields() lists them). A value is substituted with the
// escaping of the payload's format, never pasted raw: in a webhook body (JSON) as the inside of a JSON
// string, so a description holding '"' or a newline cannot break the body or add a field; in an e-mail
// (text/plain) as it is. Presets are templates for the bodies each service documents:
//   SLACK     Slack incoming webhooks: {"text": ...}
//   DINGTALK  DingTalk custom robots: {"msgtype": "text", "text": {"content": ...}}; with a secret, the URL
//             gets timestamp and sign (HMAC-SHA256 of "<timestamp ms>\n<secret>", Base64, URL-encoded)
//   WECOM     WeCom (WeChat Work) group robots: {"msgtype": "text", "text": {"content": ...}}
//   FEISHU    Feishu/Lark custom bots: {"msg_type": "text", "content": {"text": ...}}; with a secret, the
//             body gets "timestamp" (seconds) and "sign" (HMAC-SHA256 keyed by "<timestamp>\n<secret>" over
//             nothing, Base64)
//   JSON      cronwheel's own alarm object (the body of a job's alarm_webhook)
//   CUSTOM    the channel's own template, which must render to a JSON object
//
// Pure functions and plain values; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/alert_rule.hpp"
#include "admin/model/result.hpp"

namespace cronwheel::admin {

enum class AlertKind { kEmail, kWebhook };
enum class AlertPreset { kSlack, kDingTalk, kWeCom, kFeishu, kJson, kCustom };

std::string_view ToString(AlertKind k);    // "EMAIL", "WEBHOOK"
std::string_view ToString(AlertPreset p);  // "SLACK", "DINGTALK", "WECOM", "FEISHU", "JSON", "CUSTOM"
std::optional<AlertKind> ParseAlertKind(std::string_view s);
std::optional<AlertPreset> ParseAlertPreset(std::string_view s);
std::string ValidValues(AlertKind);    // "EMAIL, WEBHOOK"
std::string ValidValues(AlertPreset);  // "SLACK, DINGTALK, WECOM, FEISHU, JSON, CUSTOM"

// A channel (table alert_channel, sql/011_alert_channels.sql).
struct AlertChannel {
  int id = 0;
  std::string name;  // unique; 1 to 64 characters
  AlertKind kind = AlertKind::kWebhook;
  AlertPreset preset = AlertPreset::kJson;  // webhooks only
  // EMAIL: comma-separated addresses; WEBHOOK: the URL, which may carry a query (DingTalk's access_token,
  // WeCom's key) and must be under the operator's alarm_webhook_allow.
  std::string target;
  // EMAIL: the message body ("" = the standard text); CUSTOM: the JSON body; "" for the other presets.
  std::string body_template;
  std::string secret;  // DINGTALK, FEISHU: the signing secret ("" = unsigned); never shown by the API
  // Its rule (admin/model/alert_rule.hpp): the kinds of failure it alerts, the failures in a row it waits
  // for, and its silence window in seconds.
  std::vector<std::string> events = {std::string(kAlertFailed), std::string(kAlertTimeout),
                                     std::string(kAlertLost), std::string(kAlertMisfire),
                                     std::string(kAlertRecovered)};
  int threshold = 1;
  int silence_s = 0;
  std::int64_t created_ms = 0;
  std::int64_t updated_ms = 0;

  [[nodiscard]] AlertRule Rule() const {
    return {.events = events, .threshold = threshold, .silence_ms = std::int64_t{silence_s} * 1000};
  }
};

// The values a template may name, all as text: event ("fire_failed"), title (one line), text (the whole
// alarm as lines), job_id, job_description, app_name, log_id, trigger_type, scheduled (ISO 8601 UTC),
// scheduled_ms, trigger_code, trigger_msg, handle_code, handle_msg, suppressed (failures a silence window
// held back since the previous alert).
struct AlertFieldValue {
  std::string_view name;
  std::string value;
};
using AlertValues = std::vector<AlertFieldValue>;
const std::vector<std::string_view>& AlertFields();

// The preset's body template; CUSTOM and e-mail have none (nullopt).
std::optional<std::string_view> PresetTemplate(AlertPreset preset);

// Renders `tmpl` with `values`, each escaped as the inside of a JSON string (`json`) or as it is.
// kInvalid naming the first problem: "{{" without "}}", or a name that is not a field ("unknown field
// {{jb_id}}; the fields are: ...").
Result<std::string> RenderAlertTemplate(std::string_view tmpl, const AlertValues& values, bool json);

// The checks of a channel that need no database, one FieldError per problem: name 1 to 64 characters; a
// webhook's target parses as a webhook URL (ParseWebhookUrl, with an optional query of printable ASCII) and
// is under `webhook_allow`; an e-mail's target is a list of addresses; only EMAIL and CUSTOM take a
// template, and CUSTOM needs one; a template renders (unknown fields are named) and, for CUSTOM, renders
// to a JSON object whatever the values hold; only DINGTALK and FEISHU take a secret (at most 256 bytes); the
// rule's events are known kinds, each once, the threshold 1 to kMaxAlertThreshold and the silence 0 to 7
// days.
void CheckAlertChannel(const AlertChannel& channel, const std::vector<std::string>& webhook_allow,
                       FieldErrors& errors);

// "https://h/p?x=1" -> {"https://h/p", "x=1"}; no '?' -> {url, ""}.
struct UrlAndQuery {
  std::string url;
  std::string query;
};
UrlAndQuery SplitQuery(std::string_view url);

}  // namespace cronwheel::admin
