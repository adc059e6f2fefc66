#pragma once
// Alarms for failed fires (XXL-JOB JobAlarmer, docs/xxl-job-protocol.md §11): an e-mail to the job's
// alarm_email addresses through a configured SMTP server (libcurl), a JSON POST to the job's alarm_webhook,
// and a message to each alert channel of the job and its group (admin/model/alert_channel.hpp: e-mail, or a
// webhook with a Slack, DingTalk, WeCom, Feishu, JSON or custom body). The alarm succeeds only if every
// channel succeeds.
//
// Security: the admin never sends a request to an address a user typed without the operator's consent:
// a webhook URL must be under one of the operator's `webhook_allow` URLs, compared as URLs (scheme, host,
// port, a path prefix at a '/': WebhookAllowed, admin/model/validation.hpp; none by default, so webhooks
// are off until allowed), checked again when the alarm is sent; e-mail goes only through the operator's
// SMTP server. Webhooks and e-mail go through libcurl, which connects only to addresses the registration
// guard allows for a service (`guard`: never into registry_deny, never to the admin itself), checked on the
// address each connection is made to, so an allowed name that resolves to a denied address reaches nothing
// (issue 44, F6; results/guarded_curl.hpp). Webhooks are sent without a proxy, with the URL's path as
// written (no redirect is followed).
//
// Thread-safety: Send() may be called from several threads.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "admin/dispatch/registry_guard.hpp"
#include "admin/model/alert_channel.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

struct AlarmEvent {
  // "fire_failed"; "fire_skipped": a misfire, instants skipped (trigger_msg says which and why);
  // "job_recovered": the job succeeded again (log_id is the fire that did) after `streak` failures in a row,
  // of which a channel was told; or "workflow_run_failed": run `log_id` of workflow `workflow_id`
  // (`job_description` its name) ended FAILED, `handle_msg` naming its failed nodes.
  std::string event = "fire_failed";
  int streak = 0;
  std::int64_t log_id = 0;
  int job_id = 0;
  std::string job_description;
  std::string app_name;
  std::string trigger_type;
  std::int64_t scheduled_ms = 0;
  int trigger_code = 0;
  std::string trigger_msg;
  int handle_code = 0;
  std::string handle_msg;
  std::string alarm_email;             // comma-separated; empty = no e-mail
  std::string alarm_webhook;           // URL; empty = no webhook
  std::vector<AlertChannel> channels;  // the job's and its group's alert channels, each once
  int suppressed = 0;   // failures of the job a silence window held back since the previous alert
  int workflow_id = 0;  // "workflow_run_failed" only
};

// The values an alert template may name (AlertFields()) for `event`.
AlertValues AlarmValues(const AlarmEvent& event);

struct AlarmOutcome {
  bool attempted = false;  // at least one channel was configured on the job
  bool ok = true;
  std::string message;  // what was sent where, or why it failed
};

class AlarmSender {
 public:
  virtual ~AlarmSender() = default;
  virtual AlarmOutcome Send(const AlarmEvent& event) = 0;

 protected:
  AlarmSender() = default;
  AlarmSender(const AlarmSender&) = default;
  AlarmSender& operator=(const AlarmSender&) = default;
};

class DefaultAlarmSender final : public AlarmSender {
 public:
  struct Settings {
    std::string smtp_url;   // "smtp://host:25" or "smtps://host:465"; empty = e-mail alarms off
    std::string smtp_from;  // envelope and header From
    std::string smtp_user;
    std::string smtp_password;
    bool smtp_starttls = false;               // require STARTTLS on smtp://
    std::vector<std::string> webhook_allow;   // URLs a webhook must be under (alarm_webhook_allow)
    std::chrono::milliseconds timeout{5000};  // a whole request, connection included
    // Where webhooks and e-mail may connect (RegistryGuard::Peer::kService); nullptr = the default guard.
    std::shared_ptr<const RegistryGuard> guard;
  };
  // `clock` gives the signing timestamps of DingTalk and Feishu; it must outlive the sender.
  DefaultAlarmSender(ringwheel::Clock& clock, Settings settings);
  AlarmOutcome Send(const AlarmEvent& event) override;

  // The message body of e-mails and the `text` field (plain text).
  static std::string Describe(const AlarmEvent& event);

  // DingTalk's signature of `timestamp_ms` ("<ms>\n<secret>" signed by HMAC-SHA256 with the secret, Base64)
  // and Feishu's ("<s>\n<secret>" as the HMAC-SHA256 key over no data, Base64), as each service documents
  // its custom robots' security setting.
  static std::string DingTalkSign(std::int64_t timestamp_ms, std::string_view secret);
  static std::string FeishuSign(std::int64_t timestamp_s, std::string_view secret);

 private:
  bool SendEmail(const std::string& to, const std::string& subject, const std::string& body,
                 std::string& message);
  bool SendWebhook(const AlarmEvent& event, std::string& message) const;
  bool SendChannel(const AlertChannel& channel, const AlarmEvent& event, std::string& message);
  bool Post(const std::string& url, const std::string& query, const std::string& body, AlertPreset preset,
            const std::string& what, std::string& message) const;
  ringwheel::Clock& clock_;
  Settings settings_;
};

}  // namespace cronwheel::admin
