#include "admin/results/alarm.hpp"

#include <curl/curl.h>
#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "admin/model/validation.hpp"
#include "cronwheel/json.hpp"
#include "cronwheel/net/http_address.hpp"
#include "cronwheel/text.hpp"
#include "model/time_format.hpp"

namespace cronwheel::admin {
namespace {

// libcurl handles owned by unique_ptr: released on every path out of SendEmail.
struct CurlCleanup {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistCleanup {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using CurlHandle = std::unique_ptr<CURL, CurlCleanup>;
using CurlList = std::unique_ptr<curl_slist, SlistCleanup>;

// Feeds the message to libcurl's SMTP upload.
struct Upload {
  std::string data;
  std::size_t pos = 0;
};

std::size_t ReadUpload(char* buffer, std::size_t size, std::size_t count, void* user) {
  auto* up = static_cast<Upload*>(user);
  const auto n = std::min(size * count, up->data.size() - up->pos);
  std::copy_n(up->data.data() + up->pos, n, buffer);
  up->pos += n;
  return n;
}

// A header value without line breaks (no header injection through job descriptions).
std::string HeaderSafe(std::string s) {
  for (auto& c : s) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return s;
}

}  // namespace

DefaultAlarmSender::DefaultAlarmSender(Settings settings) : settings_(std::move(settings)) {
  static const auto init = curl_global_init(CURL_GLOBAL_DEFAULT);
  (void)init;
}

std::string DefaultAlarmSender::Describe(const AlarmEvent& e) {
  return fmt::format(
      "cronwheel alarm: job {} ({}) failed\n\nGroup: {}\nFire: {} ({}), scheduled {}\nTrigger: code "
      "{}\n{}\n\n"
      "Result: code {}\n{}\n",
      e.job_id, e.job_description, e.app_name, e.log_id, e.trigger_type, FormatUtc(e.scheduled_ms),
      e.trigger_code, e.trigger_msg, e.handle_code, e.handle_msg);
}

bool DefaultAlarmSender::SendEmail(const AlarmEvent& e, std::string& message) {
  if (settings_.smtp_url.empty()) {
    message += "e-mail: not sent, no SMTP server is configured (smtp_url)\n";
    return false;
  }
  const auto to = SplitCommas(e.alarm_email);
  Upload up;
  up.data = fmt::format(
      "From: {}\r\nTo: {}\r\nSubject: {}\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\n{}",
      settings_.smtp_from, HeaderSafe(e.alarm_email),
      HeaderSafe(fmt::format("cronwheel: job {} ({}) failed", e.job_id, e.job_description)), Describe(e));
  const CurlHandle handle(curl_easy_init());
  if (!handle) {
    message += "e-mail: libcurl could not start\n";
    return false;
  }
  CURL* curl = handle.get();
  CurlList rcpt;
  for (const auto& a : to) {
    curl_slist* grown = curl_slist_append(rcpt.get(), fmt::format("<{}>", a).c_str());
    if (grown == nullptr) {
      message += "e-mail: out of memory\n";
      return false;
    }
    if (!rcpt) rcpt.reset(grown);  // the first append creates the list; later ones grow it in place
  }
  const auto from = fmt::format("<{}>", settings_.smtp_from);
  curl_easy_setopt(curl, CURLOPT_URL, settings_.smtp_url.c_str());
  curl_easy_setopt(curl, CURLOPT_MAIL_FROM, from.c_str());
  curl_easy_setopt(curl, CURLOPT_MAIL_RCPT, rcpt.get());
  curl_easy_setopt(curl, CURLOPT_READFUNCTION, &ReadUpload);
  curl_easy_setopt(curl, CURLOPT_READDATA, &up);
  curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(settings_.timeout.count()));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  if (!settings_.smtp_user.empty()) {
    curl_easy_setopt(curl, CURLOPT_USERNAME, settings_.smtp_user.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, settings_.smtp_password.c_str());
  }
  if (settings_.smtp_starttls) curl_easy_setopt(curl, CURLOPT_USE_SSL, static_cast<long>(CURLUSESSL_ALL));
  const auto rc = curl_easy_perform(curl);
  if (rc != CURLE_OK) {
    message += fmt::format("e-mail to {}: failed: {}\n", e.alarm_email, curl_easy_strerror(rc));
    return false;
  }
  message += fmt::format("e-mail to {}: sent\n", e.alarm_email);
  return true;
}

bool DefaultAlarmSender::SendWebhook(const AlarmEvent& e, std::string& message) const {
  if (!WebhookAllowed(e.alarm_webhook, settings_.webhook_allow)) {
    message +=
        fmt::format("webhook {}: not sent, the URL is not under an allowed prefix (alarm_webhook_allow)\n",
                    e.alarm_webhook);
    return false;
  }
  const auto addr = net::ParseHttpAddress(e.alarm_webhook);
  if (!addr.ok()) {
    message += fmt::format("webhook: {}\n", std::string(addr.status().message()));
    return false;
  }
  httplib::Client client(addr->origin);
  const auto secs = static_cast<time_t>(settings_.timeout.count() / 1000);
  const auto usecs = static_cast<time_t>((settings_.timeout.count() % 1000) * 1000);
  client.set_connection_timeout(secs, usecs);
  client.set_read_timeout(secs, usecs);
  client.set_write_timeout(secs, usecs);
  const nlohmann::json body{{"event", "fire_failed"},
                            {"log_id", e.log_id},
                            {"job_id", e.job_id},
                            {"job_description", e.job_description},
                            {"app_name", e.app_name},
                            {"trigger_type", e.trigger_type},
                            {"scheduled_ms", e.scheduled_ms},
                            {"trigger_code", e.trigger_code},
                            {"trigger_msg", e.trigger_msg},
                            {"handle_code", e.handle_code},
                            {"handle_msg", e.handle_msg},
                            {"text", Describe(e)}};
  // The path of the configured URL, as given (ParseHttpAddress drops a trailing '/').
  const auto path_start = e.alarm_webhook.find('/', e.alarm_webhook.find("://") + 3);
  const std::string path = path_start == std::string::npos ? "/" : e.alarm_webhook.substr(path_start);
  auto res = client.Post(path, DumpLossy(body), "application/json");
  if (!res) {
    message += fmt::format("webhook {}: failed: {}\n", e.alarm_webhook, httplib::to_string(res.error()));
    return false;
  }
  if (res->status < 200 || res->status >= 300) {
    message += fmt::format("webhook {}: answered HTTP {}\n", e.alarm_webhook, res->status);
    return false;
  }
  message += fmt::format("webhook {}: sent\n", e.alarm_webhook);
  return true;
}

AlarmOutcome DefaultAlarmSender::Send(const AlarmEvent& e) {
  AlarmOutcome out;
  if (!e.alarm_email.empty()) {
    out.attempted = true;
    out.ok = SendEmail(e, out.message) && out.ok;
  }
  if (!e.alarm_webhook.empty()) {
    out.attempted = true;
    out.ok = SendWebhook(e, out.message) && out.ok;
  }
  return out;
}

}  // namespace cronwheel::admin
