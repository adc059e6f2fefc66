// Alert channels end to end (docs/operations.md, "Alert channels"): a real admin alerts a failed fire to a
// receiver of each webhook preset that checks the body its service documents and the signatures DingTalk
// and Feishu use (tests/tools/alert_receiver.py), and to a real SMTP server (Debian's aiosmtpd, writing a
// Maildir). A channel whose secret is wrong is refused by the receiver as DingTalk refuses it (HTTP 200 with
// an errcode), and the fire's row says so.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cluster.hpp"
#include "cwtest/process.hpp"
#include "http_client.hpp"

namespace {

using namespace cwtest::e2e;
using cwtest::ChildProcess;
using cwtest::Cluster;
using cwtest::Eventually;
using nlohmann::json;
using ::testing::HasSubstr;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr const char* kPassword = "alert-e2e-password";
constexpr const char* kSecret = "SECe2e-signing-secret";

std::vector<json> ReadLines(const fs::path& path) {
  std::vector<json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

std::vector<std::string> Mails(const fs::path& maildir) {
  std::vector<std::string> out;
  if (!fs::exists(maildir / "new")) return out;
  for (const auto& f : fs::directory_iterator(maildir / "new")) {
    std::ifstream in(f.path());
    std::stringstream s;
    s << in.rdbuf();
    out.push_back(s.str());
  }
  return out;
}

// The webhook receivers (tests/tools/alert_receiver.py) in `dir`, stopping by themselves after 5 minutes;
// their port, once they listen.
struct Receiver {
  std::unique_ptr<ChildProcess> process;
  int port = 0;
  fs::path log;
};
Receiver StartReceiver(const fs::path& dir) {
  Receiver r;
  const auto port_file = dir / "receiver.port";
  r.log = dir / "receiver.jsonl";
  r.process = std::make_unique<ChildProcess>(ChildProcess::Options{
      .program = "/usr/bin/python3",
      .args = {fmt::format("{}/tests/tools/alert_receiver.py", CRONWHEEL_SOURCE_DIR), "--port-file",
               port_file.string(), "--log", r.log.string(), "--secret", kSecret, "--lifetime", "300"},
      .log_path = (dir / "receiver.out").string()});
  if (Eventually([&] { return fs::exists(port_file); }, 20s)) std::ifstream(port_file) >> r.port;
  return r;
}

fs::path FreshDir(const std::string& name) {
  auto dir = fs::temp_directory_path() / fmt::format("cronwheel-{}-{}", name, ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A Slack and a signed DingTalk channel to the receivers at `base`, each with `rule` (events, threshold,
// silence_s): their ids, or none when the admin refused one.
std::vector<int> SlackAndDingTalk(HttpCaller& http, const httplib::Headers& as_admin, const std::string& base,
                                  const std::string& slack_path, const json& rule) {
  std::vector<int> channels;
  for (const auto& [name, preset, path] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"slack", "SLACK", slack_path},
           {"dingtalk", "DINGTALK", "/dingtalk/robot/send?access_token=signed"}}) {
    json body{{"name", name}, {"kind", "WEBHOOK"}, {"preset", preset}, {"target", base + path}};
    body.update(rule);
    if (preset == "DINGTALK") body["secret"] = kSecret;
    const auto r = http.Send("POST", "/api/v1/alert-channels", as_admin, body.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    if (r.status != 201) return {};
    channels.push_back(r.Json()->at("id").get<int>());
  }
  return channels;
}

TEST(AlertE2E, AFailedFireReachesEveryPresetsReceiverAndAnSmtpServerAndARefusalIsRecorded) {
  std::signal(SIGPIPE, SIG_IGN);
  const auto dir = FreshDir("alert-e2e");
  auto receiver = StartReceiver(dir);
  ASSERT_GT(receiver.port, 0) << receiver.process->LogTail();
  const int port = receiver.port;
  const auto& log = receiver.log;
  const int smtp_port = cwtest::FreeTcpPort();
  const auto maildir = dir / "maildir";
  ChildProcess smtp({.program = "/usr/bin/python3",
                     .args = {"-m", "aiosmtpd", "-n", "-l", fmt::format("127.0.0.1:{}", smtp_port), "-c",
                              "aiosmtpd.handlers.Mailbox", maildir.string()},
                     .log_path = (dir / "smtp.out").string()});
  ASSERT_TRUE(cwtest::WaitForTcp(smtp_port, 20s))
      << "aiosmtpd did not start (scripts/setup installs python3-aiosmtpd): " << smtp.LogTail();

  const auto base = fmt::format("http://127.0.0.1:{}", port);
  Cluster c(
      {.admins = 1,
       .executors = 1,
       .admin_args = {"--alarm-webhook-allow", base, "--smtp-url",
                      fmt::format("smtp://127.0.0.1:{}", smtp_port), "--smtp-from", "cronwheel@example.com"},
       .admin_env = {{"CRONWHEEL_ADMIN_PASSWORD", kPassword}}});
  const int group = c.AddGroup();
  c.AwaitRegistered(0);
  HttpCaller http(c.admin_port(0));
  const auto session = cwtest::Login(http, "admin", kPassword);
  ASSERT_TRUE(session.has_value());
  const auto as_admin = cwtest::SessionHeaders(*session);
  const auto create = [&](const json& body) {
    const auto r = http.Send("POST", "/api/v1/alert-channels", as_admin, body.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Json()->at("id").get<int>();
  };
  const auto webhook = [&](const std::string& name, const std::string& preset, const std::string& path,
                           const std::string& secret = "") {
    json body{{"name", name}, {"kind", "WEBHOOK"}, {"preset", preset}, {"target", base + path}};
    if (!secret.empty()) body["secret"] = secret;
    return create(body);
  };
  const std::vector<int> channels = {
      webhook("slack", "SLACK", "/slack/T000/B000/XXXX"),
      webhook("dingtalk", "DINGTALK", "/dingtalk/robot/send?access_token=signed", kSecret),
      webhook("dingtalk, wrong secret", "DINGTALK", "/dingtalk/robot/send?access_token=signed", "SECwrong"),
      webhook("wecom", "WECOM", "/wecom/cgi-bin/webhook/send?key=k-123"),
      webhook("feishu", "FEISHU", "/feishu/open-apis/bot/v2/hook/signed", kSecret),
      webhook("json", "JSON", "/json/alarms"),
      create({{"name", "custom"},
              {"kind", "WEBHOOK"},
              {"preset", "CUSTOM"},
              {"target", base + "/slack/custom"},
              {"body_template", R"({"text": "{{title}} | {{handle_msg}}", "job": {{job_id}}})"}}),
  };
  const int mail =
      create({{"name", "mail"},
              {"kind", "EMAIL"},
              {"target", "ops@example.com"},
              {"body_template", "Job {{job_id}} ({{job_description}}) failed at {{scheduled}}."}});
  // The job names the webhooks; its group names the e-mail (and one webhook again: sent once).
  auto r = http.Send("PUT", fmt::format("/api/v1/groups/{}", group), as_admin,
                     json{{"alert_channel_ids", {mail, channels[0]}}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string description = "nightly \"billing\"\n}, {\"injected\": true";
  r = http.Send("POST", "/api/v1/jobs", as_admin,
                json{{"group_id", group},
                     {"description", description},
                     {"schedule_type", "NONE"},
                     {"handler", "noSuchHandler"},
                     {"alert_channel_ids", channels}}
                    .dump());
  ASSERT_EQ(r.status, 201) << r.body;
  const int job = r.Json()->at("id").get<int>();
  r = http.Send("POST", fmt::format("/api/v1/jobs/{}/trigger", job), as_admin, "{}");
  ASSERT_EQ(r.status, 202) << r.body;
  const auto fire = r.Json()->at("log_id").get<std::int64_t>();

  // Every channel once: 7 webhooks (the shared one once) and one e-mail.
  ASSERT_TRUE(Eventually([&] { return ReadLines(log).size() >= channels.size() && !Mails(maildir).empty(); },
                         60s, 200ms))
      << ReadLines(log).size() << " webhook request(s), " << Mails(maildir).size() << " mail(s)\n"
      << c.admin(0).LogTail();
  ASSERT_TRUE(Eventually(
      [&] { return c.Scalar(fmt::format("SELECT alarm_status FROM job_log WHERE id = {}", fire)) == 3; },
      30s))
      << "one channel was refused: the alarm failed";
  const auto requests = ReadLines(log);
  ASSERT_EQ(requests.size(), channels.size()) << json(requests).dump(1);
  EXPECT_EQ(Mails(maildir).size(), 1U);
  int accepted = 0;
  for (const auto& q : requests) {
    SCOPED_TRACE(q.dump());
    const bool wrong = q.at("path") == "/dingtalk/robot/send" &&
                       q.at("verdict").get<std::string>().find("signature") != std::string::npos;
    if (q.at("verdict") == "accepted") ++accepted;
    if (!wrong) {
      EXPECT_EQ(q.at("verdict"), "accepted");
    }
  }
  EXPECT_EQ(accepted, static_cast<int>(channels.size()) - 1) << "all but the wrong secret";
  // The description, with its quotes, newline and braces, arrived as text inside each body.
  for (const auto& q : requests) {
    if (q.at("path") == "/slack/T000/B000/XXXX") {
      EXPECT_THAT(q.at("body").at("text").get<std::string>(), HasSubstr(description));
    }
    if (q.at("path") == "/json/alarms") {
      EXPECT_EQ(q.at("body").at("job_description"), description);
      EXPECT_EQ(q.at("body").at("log_id"), fire);
    }
    if (q.at("path") == "/slack/custom") {
      EXPECT_EQ(q.at("body").at("job"), job);
      EXPECT_FALSE(q.at("body").contains("injected"));
    }
    if (q.at("path").get<std::string>().starts_with("/feishu/")) {
      EXPECT_THAT(q.at("body").at("content").at("text").get<std::string>(), HasSubstr("noSuchHandler"));
    }
  }
  const auto msg =
      c.Exec(fmt::format("SELECT handle_msg FROM job_log WHERE id = {}", fire))[0][0].as<std::string>();
  EXPECT_THAT(msg, HasSubstr("channel dingtalk, wrong secret (DINGTALK): refused: errcode 310000"));
  EXPECT_THAT(msg, ::testing::Not(HasSubstr("channel feishu (FEISHU): refused")));
  const auto mails = Mails(maildir);
  ASSERT_EQ(mails.size(), 1U);
  EXPECT_THAT(mails[0], HasSubstr(fmt::format("Subject: cronwheel: job {} (nightly \"billing\" }}", job)))
      << "the subject is one line";
  EXPECT_THAT(mails[0], HasSubstr("To: ops@example.com"));
  EXPECT_THAT(mails[0], HasSubstr(fmt::format("Job {} (nightly", job)));

  // The console's test button: a test alarm through one channel, answered with what happened.
  r = http.Send("POST", fmt::format("/api/v1/alert-channels/{}/test", channels[4]), as_admin, "");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()->at("ok"), true) << r.body;
  r = http.Send("POST", fmt::format("/api/v1/alert-channels/{}/test", channels[2]), as_admin, "");
  EXPECT_EQ(r.Json()->at("ok"), false) << r.body;
  EXPECT_THAT(r.Json()->at("message").get<std::string>(), HasSubstr("sign not match"));
  receiver.process->Stop(5s);
  smtp.Stop(5s);
  fs::remove_all(dir);
}

// Issue 25's "once per silence window": a job failing every second alerts Slack and DingTalk once, after
// two failures in a row, and the next failures are held back and recorded.
TEST(AlertE2E, AJobFailingEverySecondAlertsOncePerSilenceWindow) {
  std::signal(SIGPIPE, SIG_IGN);
  const auto dir = FreshDir("alert-silence-e2e");
  auto receiver = StartReceiver(dir);
  ASSERT_GT(receiver.port, 0) << receiver.process->LogTail();
  const auto base = fmt::format("http://127.0.0.1:{}", receiver.port);
  Cluster c({.admins = 1,
             .executors = 1,
             .admin_args = {"--alarm-webhook-allow", base},
             .admin_env = {{"CRONWHEEL_ADMIN_PASSWORD", kPassword}}});
  const int group = c.AddGroup();
  c.AwaitRegistered(0);
  HttpCaller http(c.admin_port(0));
  const auto session = cwtest::Login(http, "admin", kPassword);
  ASSERT_TRUE(session.has_value());
  const auto as_admin = cwtest::SessionHeaders(*session);
  const auto channels =
      SlackAndDingTalk(http, as_admin, base, "/slack/T1/B1/X1", {{"threshold", 2}, {"silence_s", 3600}});
  ASSERT_EQ(channels.size(), 2U);
  auto r = http.Send("POST", "/api/v1/jobs", as_admin,
                     json{{"group_id", group},
                          {"description", "fails every second"},
                          {"schedule_type", "CRON"},
                          {"schedule_conf", "* * * * * ?"},
                          {"handler", "noSuchHandler"},
                          {"alert_channel_ids", channels},
                          {"enabled", true}}
                         .dump());
  ASSERT_EQ(r.status, 201) << r.body;
  const int job = r.Json()->at("id").get<int>();
  // Six failures or more on each channel: one below the threshold, one sent, the rest held back.
  const auto held = [&] {
    return c.Scalar(
        fmt::format("SELECT count(*) FROM alert_log WHERE job_id = {} AND outcome = 'SUPPRESSED'", job));
  };
  ASSERT_TRUE(Eventually([&] { return held() >= 8; }, 60s, 200ms)) << c.admin(0).LogTail();
  // The handler is fixed: the next fire succeeds, and each channel hears once that the job recovered.
  r = http.Send("PUT", fmt::format("/api/v1/jobs/{}", job), as_admin,
                json{{"handler", "noopJobHandler"}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_TRUE(Eventually(
      [&] {
        return c.Scalar(fmt::format("SELECT count(*) FROM alert_log WHERE job_id = {} AND event = "
                                    "'RECOVERED' AND outcome = 'SENT'",
                                    job)) == 2;
      },
      30s, 200ms))
      << c.admin(0).LogTail();
  http.Send("POST", fmt::format("/api/v1/jobs/{}/stop", job), as_admin, "");
  const auto requests = ReadLines(receiver.log);
  int slack = 0;
  int ding = 0;
  int recovered = 0;
  for (const auto& q : requests) {
    EXPECT_EQ(q.at("verdict"), "accepted") << q.dump();
    slack += q.at("path").get<std::string>().starts_with("/slack/") ? 1 : 0;
    ding += q.at("path") == "/dingtalk/robot/send" ? 1 : 0;
    recovered += q.dump().find("recovered") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(slack, 2) << "one failure alert and one recovery: " << json(requests).dump(1);
  EXPECT_EQ(ding, 2) << json(requests).dump(1);
  EXPECT_EQ(recovered, 2) << json(requests).dump(1);
  for (const int ch : channels) {
    EXPECT_EQ(
        c.Scalar(fmt::format(
            "SELECT count(*) FROM alert_log WHERE channel_id = {} AND outcome = 'SENT' AND event = 'FAILED'",
            ch)),
        1);
    EXPECT_EQ(
        c.Scalar(fmt::format(
            "SELECT count(*) FROM alert_log WHERE channel_id = {} AND outcome = 'BELOW_THRESHOLD'", ch)),
        1);
  }
  // The history lists them, newest first.
  r = http.Send("GET", fmt::format("/api/v1/alerts?job_id={}&limit=1000", job), as_admin, "");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto items = r.Json()->at("items");
  ASSERT_GE(items.size(), 12U);
  EXPECT_GT(items[0].at("id").get<std::int64_t>(), items[1].at("id").get<std::int64_t>());
  receiver.process->Stop(5s);
  fs::remove_all(dir);
}

// Issue 25's misfire alert, once per silence window. The admin is stopped (SIGSTOP) for 12 s, as a long
// GC-like pause or a frozen VM would: on waking, the fires it had pre-read are more than the 5 s misfire
// threshold late and are skipped (the ring's path), and so is the instant the scan finds late (the scan's
// path). The Slack and DingTalk channels each get one MISFIRE alert for all of them, the rest are recorded
// SUPPRESSED; after the window, the next pause alerts again, saying how many were held back.
TEST(AlertE2E, SkippedInstantsAlertSlackAndDingTalkOncePerSilenceWindow) {
  std::signal(SIGPIPE, SIG_IGN);
  const auto dir = FreshDir("alert-misfire-e2e");
  auto receiver = StartReceiver(dir);
  ASSERT_GT(receiver.port, 0) << receiver.process->LogTail();
  const auto base = fmt::format("http://127.0.0.1:{}", receiver.port);
  Cluster c({.admins = 1,
             .executors = 1,
             .admin_args = {"--alarm-webhook-allow", base},
             .admin_env = {{"CRONWHEEL_ADMIN_PASSWORD", kPassword}}});
  const int group = c.AddGroup();
  c.AwaitRegistered(0);
  HttpCaller http(c.admin_port(0));
  const auto session = cwtest::Login(http, "admin", kPassword);
  ASSERT_TRUE(session.has_value());
  const auto as_admin = cwtest::SessionHeaders(*session);
  constexpr int kSilenceS = 20;
  const auto channels = SlackAndDingTalk(http, as_admin, base, "/slack/T2/B2/X2",
                                         {{"events", {"MISFIRE"}}, {"silence_s", kSilenceS}});
  ASSERT_EQ(channels.size(), 2U);
  auto r = http.Send("POST", "/api/v1/jobs", as_admin,
                     json{{"group_id", group},
                          {"description", "every second"},
                          {"schedule_type", "CRON"},
                          {"schedule_conf", "* * * * * ?"},
                          {"handler", "noopJobHandler"},
                          {"misfire_strategy", "DO_NOTHING"},
                          {"alert_channel_ids", channels},
                          {"enabled", true}}
                         .dump());
  ASSERT_EQ(r.status, 201) << r.body;
  const int job = r.Json()->at("id").get<int>();
  const auto count = [&](const std::string& where) {
    return c.Scalar(fmt::format("SELECT count(*) FROM job_log WHERE job_id = {} AND {}", job, where));
  };
  const auto alerts = [&](int channel, const std::string& outcome) {
    return c.Scalar(fmt::format(
        "SELECT count(*) FROM alert_log WHERE job_id = {} AND channel_id = {} AND event = 'MISFIRE' AND "
        "outcome = '{}'",
        job, channel, outcome));
  };
  ASSERT_TRUE(Eventually([&] { return count("status = 'SUCCESS'") >= 2; }, 30s, 200ms))
      << c.admin(0).LogTail();
  // The admin paused as a frozen VM would; back when it has run an instant due after the pause, and every
  // instant skipped meanwhile is alerted or held back on both channels.
  const auto pause_and_settle = [&] {
    c.admin(0).Signal(SIGSTOP);
    std::this_thread::sleep_for(12s);
    c.admin(0).Signal(SIGCONT);
    const auto resumed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
    return Eventually(
        [&] {
          const auto skipped = count("status = 'SKIPPED'");
          return count(fmt::format("status = 'SUCCESS' AND scheduled_ms > {}", resumed_ms + 1000)) > 0 &&
                 count("status = 'SKIPPED' AND alarm_status = 0") == 0 &&
                 c.Scalar(fmt::format(
                     "SELECT count(*) FROM alert_log WHERE job_id = {} AND event = 'MISFIRE'", job)) ==
                     2 * skipped;
        },
        30s, 200ms);
  };

  ASSERT_TRUE(pause_and_settle()) << c.admin(0).LogTail();
  const auto first_alert = std::chrono::steady_clock::now();
  const auto skipped_first = count("status = 'SKIPPED'");
  EXPECT_GE(skipped_first, 2) << "the pre-read fires and the scan's late instant";
  EXPECT_GE(count("status = 'SKIPPED' AND trigger_type = 'MISFIRE'"), 1) << "the scan's path";
  EXPECT_GE(count("status = 'SKIPPED' AND trigger_type = 'CRON'"), 1) << "the ring's path";
  for (const int ch : channels) {
    EXPECT_EQ(alerts(ch, "SENT"), 1) << "one alert in the window";
    EXPECT_EQ(alerts(ch, "SUPPRESSED"), skipped_first - 1);
  }

  // After the window, the next pause alerts again and says how many the window held back.
  std::this_thread::sleep_until(first_alert + std::chrono::seconds(kSilenceS + 1));
  ASSERT_TRUE(pause_and_settle()) << c.admin(0).LogTail();
  for (const int ch : channels)
    EXPECT_EQ(alerts(ch, "SENT"), 2);
  http.Send("POST", fmt::format("/api/v1/jobs/{}/stop", job), as_admin, "");
  const auto requests = ReadLines(receiver.log);
  std::vector<std::string> slack;
  std::vector<std::string> ding;
  for (const auto& q : requests) {
    EXPECT_EQ(q.at("verdict"), "accepted") << q.dump();
    const auto text = q.at("body").dump();
    if (q.at("path").get<std::string>().starts_with("/slack/")) slack.push_back(text);
    if (q.at("path") == "/dingtalk/robot/send") ding.push_back(text);
  }
  ASSERT_EQ(slack.size(), 2U) << json(requests).dump(1);
  ASSERT_EQ(ding.size(), 2U) << json(requests).dump(1);
  for (const auto* sent : {&slack, &ding}) {
    EXPECT_THAT((*sent)[0],
                HasSubstr(fmt::format("job {} (every second) missed its schedule (misfire)", job)));
    EXPECT_THAT((*sent)[0], HasSubstr("misfire: "));
    EXPECT_THAT((*sent)[1],
                HasSubstr(fmt::format("{} more failure(s) of this job since the previous alert were "
                                      "held back",
                                      skipped_first - 1)));
  }
  receiver.process->Stop(5s);
  fs::remove_all(dir);
}

}  // namespace
