#include "admin/results/alarm.hpp"

#include <curl/curl.h>
#include <fmt/format.h>
#include <sodium.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "admin/model/validation.hpp"
#include "admin/results/guarded_curl.hpp"
#include "cronwheel/json.hpp"
#include "cronwheel/net/http_message.hpp"
#include "cronwheel/text.hpp"
#include "model/time_format.hpp"

namespace cronwheel::admin {
namespace {

// libcurl handles owned by unique_ptr: released on every path out of SendEmail and Post.
struct CurlCleanup {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistCleanup {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using CurlHandle = std::unique_ptr<CURL, CurlCleanup>;
using CurlList = std::unique_ptr<curl_slist, SlistCleanup>;

constexpr std::size_t kMaxAnswerBytes = std::size_t{64} << 10;

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

// A webhook's answer, of which the first 64 KiB are kept (a service's refusal is a short JSON object).
struct Answer {
  std::string body;
  bool too_big = false;
};

std::size_t CollectAnswer(char* data, std::size_t size, std::size_t count, void* user) {
  auto* answer = static_cast<Answer*>(user);
  const std::size_t n = size * count;
  if (answer->body.size() + n > kMaxAnswerBytes) {
    answer->too_big = true;
    return 0;  // ends the transfer: the status is known, the rest is not read
  }
  answer->body.append(data, n);
  return n;
}

// What a failed transfer says: the guard's refusal when it refused every address, else libcurl's words.
std::string Failed(CURLcode rc, const CurlConnectGuard& guard) {
  if (rc == CURLE_COULDNT_CONNECT && !guard.refused().empty())
    return fmt::format("not sent, refused: {}", guard.refused());
  return fmt::format("failed: {}", curl_easy_strerror(rc));
}

// The alarm's one-line summary: the e-mail subject, the `title` field.
std::string Title(const AlarmEvent& e) {
  if (e.event == "workflow_run_failed") {
    return fmt::format("cronwheel: workflow {} ({}) run {} failed", e.workflow_id, e.job_description,
                       e.log_id);
  }
  return fmt::format("cronwheel: job {} ({}) {}", e.job_id, e.job_description,
                     e.event == "job_recovered"  ? "recovered"
                     : e.event == "fire_skipped" ? "missed its schedule (misfire)"
                                                 : "failed");
}

// A header value without line breaks (no header injection through job descriptions).
std::string HeaderSafe(std::string s) {
  for (auto& c : s) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return s;
}

}  // namespace

DefaultAlarmSender::DefaultAlarmSender(ringwheel::Clock& clock, Settings settings)
    : clock_(clock), settings_(std::move(settings)) {
  if (!settings_.guard) settings_.guard = std::make_shared<const RegistryGuard>();
  static const auto init = curl_global_init(CURL_GLOBAL_DEFAULT);
  (void)init;
  static const int sodium = sodium_init();
  if (sodium < 0) throw std::runtime_error("libsodium cannot be initialised");
}

std::string DefaultAlarmSender::Describe(const AlarmEvent& e) {
  if (e.event == "workflow_run_failed") {
    return fmt::format(
        "cronwheel alarm: workflow {} ({}) run {} failed\n\nGroup: {}\nRun: {} ({}), scheduled "
        "{}\n{}\n\n{}\n",
        e.workflow_id, e.job_description, e.log_id, e.app_name, e.log_id, e.trigger_type,
        FormatUtc(e.scheduled_ms), e.handle_msg, e.trigger_msg);
  }
  if (e.event == "job_recovered") {
    return fmt::format(
        "cronwheel: job {} ({}) recovered\n\nGroup: {}\nFire: {} ({}), scheduled {}, succeeded after {} "
        "failure(s) in "
        "a row\n",
        e.job_id, e.job_description, e.app_name, e.log_id, e.trigger_type, FormatUtc(e.scheduled_ms),
        e.streak);
  }
  const auto held_back = e.suppressed > 0
                             ? fmt::format(
                                   "\n{} more failure(s) of this job since the previous alert were held back "
                                   "(silence window)\n",
                                   e.suppressed)
                             : std::string();
  if (e.event == "fire_skipped") {
    return fmt::format(
               "cronwheel alarm: job {} ({}) missed its schedule (misfire)\n\nGroup: {}\nFire: {} ({}), "
               "scheduled {}, skipped\n{}\n",
               e.job_id, e.job_description, e.app_name, e.log_id, e.trigger_type, FormatUtc(e.scheduled_ms),
               e.trigger_msg) +
           held_back;
  }
  return fmt::format(
             "cronwheel alarm: job {} ({}) failed\n\nGroup: {}\nFire: {} ({}), scheduled {}\nTrigger: code "
             "{}\n{}\n\n"
             "Result: code {}\n{}\n",
             e.job_id, e.job_description, e.app_name, e.log_id, e.trigger_type, FormatUtc(e.scheduled_ms),
             e.trigger_code, e.trigger_msg, e.handle_code, e.handle_msg) +
         held_back;
}

AlertValues AlarmValues(const AlarmEvent& e) {
  return {{"event", e.event},
          {"title", Title(e)},
          {"text", DefaultAlarmSender::Describe(e)},
          {"job_id", std::to_string(e.job_id)},
          {"job_description", e.job_description},
          {"app_name", e.app_name},
          {"log_id", std::to_string(e.log_id)},
          {"trigger_type", e.trigger_type},
          {"scheduled", FormatUtc(e.scheduled_ms)},
          {"scheduled_ms", std::to_string(e.scheduled_ms)},
          {"trigger_code", std::to_string(e.trigger_code)},
          {"trigger_msg", e.trigger_msg},
          {"handle_code", std::to_string(e.handle_code)},
          {"handle_msg", e.handle_msg},
          {"suppressed", std::to_string(e.suppressed)}};
}

namespace {

std::string HmacSha256Base64(std::string_view key, std::string_view data) {
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, reinterpret_cast<const unsigned char*>(key.data()), key.size());
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(data.data()), data.size());
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256_final(&state, mac);
  char out[sodium_base64_ENCODED_LEN(crypto_auth_hmacsha256_BYTES, sodium_base64_VARIANT_ORIGINAL)];
  sodium_bin2base64(out, sizeof out, mac, sizeof mac, sodium_base64_VARIANT_ORIGINAL);
  return out;
}

// What a service's answer says beyond its HTTP status: DingTalk and WeCom answer 200 with a non-zero
// "errcode" on a refusal (a bad signature, a keyword missing), Feishu with a non-zero "code". "" = accepted.
std::string Refusal(AlertPreset preset, const std::string& answer) {
  const char* key = preset == AlertPreset::kFeishu                                      ? "code"
                    : preset == AlertPreset::kDingTalk || preset == AlertPreset::kWeCom ? "errcode"
                                                                                        : nullptr;
  if (key == nullptr) return "";
  const auto j = nlohmann::json::parse(answer, nullptr, false);
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer() || j[key].get<std::int64_t>() == 0) {
    return "";
  }
  const auto msg = j.value(preset == AlertPreset::kFeishu ? "msg" : "errmsg", std::string());
  return fmt::format("{} {}: {}", key, j[key].get<std::int64_t>(), Utf8Prefix(msg, 200));
}

}  // namespace

std::string DefaultAlarmSender::DingTalkSign(std::int64_t timestamp_ms, std::string_view secret) {
  return HmacSha256Base64(secret, fmt::format("{}\n{}", timestamp_ms, secret));
}

std::string DefaultAlarmSender::FeishuSign(std::int64_t timestamp_s, std::string_view secret) {
  return HmacSha256Base64(fmt::format("{}\n{}", timestamp_s, secret), "");
}

bool DefaultAlarmSender::SendEmail(const std::string& to_list, const std::string& subject,
                                   const std::string& body, std::string& message) {
  if (settings_.smtp_url.empty()) {
    message += "e-mail: not sent, no SMTP server is configured (smtp_url)\n";
    return false;
  }
  const auto to = SplitCommas(to_list);
  Upload up;
  up.data =
      fmt::format("From: {}\r\nTo: {}\r\nSubject: {}\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\n{}",
                  settings_.smtp_from, HeaderSafe(to_list), HeaderSafe(subject), body);
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
  CurlConnectGuard guard(*settings_.guard);
  guard.Install(curl);
  const auto rc = curl_easy_perform(curl);
  if (rc != CURLE_OK) {
    message += fmt::format("e-mail to {}: {}\n", to_list, Failed(rc, guard));
    return false;
  }
  message += fmt::format("e-mail to {}: sent\n", to_list);
  return true;
}

bool DefaultAlarmSender::Post(const std::string& url, const std::string& query, const std::string& body,
                              AlertPreset preset, const std::string& what, std::string& message) const {
  // Checked again when sent: the operator may have narrowed the list since the URL was saved.
  if (!WebhookAllowed(url, settings_.webhook_allow)) {
    message +=
        fmt::format("{}: not sent, the URL is not under an allowed prefix (alarm_webhook_allow)\n", what);
    return false;
  }
  const CurlHandle handle(curl_easy_init());
  if (!handle) {
    message += fmt::format("{}: libcurl could not start\n", what);
    return false;
  }
  CURL* curl = handle.get();
  const std::string target = query.empty() ? url : url + "?" + query;
  Answer answer;
  const CurlList headers(curl_slist_append(nullptr, "Content-Type: application/json"));
  // No "Expect: 100-continue" for a larger body: a receiver that does not answer it would cost a second.
  if (!headers || curl_slist_append(headers.get(), "Expect:") == nullptr) {
    message += fmt::format("{}: out of memory\n", what);
    return false;
  }
  curl_easy_setopt(curl, CURLOPT_URL, target.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);      // the path that was allowed, as written
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);  // a redirect would lead past the allow-list
  curl_easy_setopt(curl, CURLOPT_PROXY, "");           // and a proxy past the guard
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(settings_.timeout.count()));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &CollectAnswer);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
  CurlConnectGuard guard(*settings_.guard);
  guard.Install(curl);
  const auto rc = curl_easy_perform(curl);
  if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && answer.too_big)) {
    message += fmt::format("{}: {}\n", what, Failed(rc, guard));
    return false;
  }
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status >= 300) {
    message += fmt::format("{}: answered HTTP {}\n", what, status);
    return false;
  }
  if (const auto refused = Refusal(preset, answer.body); !refused.empty()) {
    message += fmt::format("{}: refused: {}\n", what, refused);
    return false;
  }
  message += fmt::format("{}: sent\n", what);
  return true;
}

bool DefaultAlarmSender::SendWebhook(const AlarmEvent& e, std::string& message) const {
  const auto body = RenderAlertTemplate(*PresetTemplate(AlertPreset::kJson), AlarmValues(e), true);
  if (!body) {
    message += fmt::format("webhook {}: {}\n", e.alarm_webhook, body.error().message);
    return false;
  }
  return Post(e.alarm_webhook, "", *body, AlertPreset::kJson, fmt::format("webhook {}", e.alarm_webhook),
              message);
}

bool DefaultAlarmSender::SendChannel(const AlertChannel& c, const AlarmEvent& e, std::string& message) {
  const auto values = AlarmValues(e);
  const auto what = fmt::format("channel {} ({})", c.name,
                                c.kind == AlertKind::kEmail ? "EMAIL" : std::string(ToString(c.preset)));
  if (c.kind == AlertKind::kEmail) {
    const auto body = c.body_template.empty() ? Result<std::string>(Describe(e))
                                              : RenderAlertTemplate(c.body_template, values, false);
    if (!body) {
      message += fmt::format("{}: {}\n", what, body.error().message);
      return false;
    }
    std::string sent;
    const bool ok = SendEmail(c.target, Title(e), *body, sent);
    message += fmt::format("{}: {}", what, sent);
    return ok;
  }
  const auto tmpl = c.preset == AlertPreset::kCustom ? std::optional<std::string_view>(c.body_template)
                                                     : PresetTemplate(c.preset);
  auto body = RenderAlertTemplate(tmpl.value_or(""), values, true);
  if (!body) {
    message += fmt::format("{}: {}\n", what, body.error().message);
    return false;
  }
  auto [url, query] = SplitQuery(c.target);
  if (!c.secret.empty() && c.preset == AlertPreset::kDingTalk) {
    const auto ms = clock_.NowMs();
    query += fmt::format("{}timestamp={}&sign={}", query.empty() ? "" : "&", ms,
                         net::PercentEncode(DingTalkSign(ms, c.secret)));
  }
  if (!c.secret.empty() && c.preset == AlertPreset::kFeishu) {
    auto j = nlohmann::json::parse(*body, nullptr, false);
    const auto s = clock_.NowMs() / 1000;
    if (j.is_object()) {
      j["timestamp"] = std::to_string(s);
      j["sign"] = FeishuSign(s, c.secret);
      *body = DumpLossy(j);
    }
  }
  return Post(url, query, *body, c.preset, what, message);
}

AlarmOutcome DefaultAlarmSender::Send(const AlarmEvent& e) {
  AlarmOutcome out;
  if (!e.alarm_email.empty()) {
    out.attempted = true;
    out.ok = SendEmail(e.alarm_email, Title(e), Describe(e), out.message) && out.ok;
  }
  if (!e.alarm_webhook.empty()) {
    out.attempted = true;
    out.ok = SendWebhook(e, out.message) && out.ok;
  }
  for (const auto& c : e.channels) {
    out.attempted = true;
    out.ok = SendChannel(c, e, out.message) && out.ok;
  }
  return out;
}

}  // namespace cronwheel::admin
