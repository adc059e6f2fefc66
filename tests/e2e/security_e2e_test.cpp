// Security rules checked with real processes on loopback, where no other test covers them:
// - an admin in production mode refuses to start without an access token, or with an admin password that
//   fails the policy (the executor's own refusal is in executor/executor_e2e_test.cpp);
// - a job's output that holds markup reaches the console as a JSON string (application/json, nosniff),
//   never as HTML.
// - the registration guard (issue 21: registration was an SSRF): the admin stores no executor address in a
//   refused network and sends to none, checking a host name on what it resolves to when it connects, and a
//   failed fire says why without echoing what the address answered; no text form of a denied address (a
//   zone id, an IPv4-mapped literal, inet_aton's forms: issue 44, F6) gets past it, and an alarm webhook
//   is not sent to a denied address either.
// Tokens wrong by one byte, unknown trigger addresses and the webhook allow-list are covered by the
// bad-input suite, the pg API tests and the dispatch e2e test.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "cluster.hpp"
#include "cwtest/loopback_server.hpp"
#include "http_client.hpp"

namespace {

using namespace cwtest::e2e;
using ::testing::HasSubstr;

TEST(SecurityE2E, AProductionAdminRefusesToStartWithoutATokenOrWithAWeakAdminPassword) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("cw-security-{}", ::getpid());
  std::filesystem::create_directories(dir);
  const auto start = [&](const std::string& name, std::vector<std::string> args,
                         std::map<std::string, std::string> env) {
    ChildProcess::Options o;
    o.program = CRONWHEEL_ADMIN_BIN;
    o.args = {"--dsn",    "postgresql://nobody@127.0.0.1:1/none",
              "--listen", fmt::format("127.0.0.1:{}", cwtest::FreeTcpPort()),
              "--mode",   "production"};
    o.args.insert(o.args.end(), args.begin(), args.end());
    o.env = std::move(env);
    o.clean_env = true;  // no CRONWHEEL_ACCESS_TOKEN of the caller
    o.log_path = (dir / (name + ".log")).string();
    return std::make_unique<ChildProcess>(o);
  };
  auto no_token = start("no-token", {}, {});
  auto code = no_token->Wait(30s);
  ASSERT_TRUE(code.has_value()) << "still running without a token: " << no_token->LogTail();
  EXPECT_NE(*code, 0);
  EXPECT_THAT(no_token->Output(), HasSubstr("access_token is empty: production mode refuses to run"));
  EXPECT_THAT(no_token->Output(), HasSubstr("CRONWHEEL_ACCESS_TOKEN"));

  auto weak = start("weak-password", {"--access-token", "a-long-random-token-0123456789"},
                    {{"CRONWHEEL_ADMIN_PASSWORD", "short"}});
  code = weak->Wait(30s);
  ASSERT_TRUE(code.has_value()) << "still running with a weak admin password: " << weak->LogTail();
  EXPECT_NE(*code, 0);
  EXPECT_THAT(weak->Output(), HasSubstr("admin_password must be at least 10 characters"));
  std::filesystem::remove_all(dir);
}

// Security review (issue 21), finding 7: the session cookie was not Secure unless cookie_secure was set, so
// a console behind TLS sent it over plain HTTP too when asked. A production admin marks it Secure unless
// told otherwise (cookie_secure = false, for plain HTTP on a trusted network).
TEST(SecurityE2E, AProductionAdminsSessionCookieIsSecureUnlessTurnedOff) {
  constexpr const char* kPassword = "security-admin-password";
  const std::vector<std::tuple<std::string, std::vector<std::string>, bool>> cases = {
      {"production", {}, true},
      {"production, cookie_secure false", {"--cookie-secure", "false"}, false},
  };  // dev mode's default: AdminConfig's unit test (the cluster runs its admins in production mode)
  for (const auto& [name, args, secure] : cases) {
    SCOPED_TRACE(name);
    Cluster cluster({.admins = 1,
                     .executors = 0,
                     .admin_args = args,
                     .admin_env = {{"CRONWHEEL_ADMIN_PASSWORD", kPassword}}});
    HttpCaller http(cluster.admin_port(0));
    const auto session = cwtest::Login(http, "admin", kPassword);
    ASSERT_TRUE(session);
    EXPECT_THAT(session->set_cookie, HasSubstr("HttpOnly"));
    if (secure) {
      EXPECT_THAT(session->set_cookie, HasSubstr("; Secure"));
    } else {
      EXPECT_THAT(session->set_cookie, ::testing::Not(HasSubstr("Secure")));
    }
  }
}

TEST(SecurityE2E, MarkupInAJobsOutputReachesTheConsoleAsAJsonString) {
  constexpr const char* kPassword = "security-admin-password";
  Cluster cluster({.admins = 1,
                   .executors = 1,
                   .admin_env = {{"CRONWHEEL_ADMIN_PASSWORD", kPassword}},
                   .scripts_on_last_executor = true});
  cluster.AwaitRegistered(0);
  HttpCaller http(cluster.admin_port(0));
  const auto session = cwtest::Login(http, "admin", kPassword);
  ASSERT_TRUE(session);
  const auto headers = cwtest::SessionHeaders(*session);
  const int group = cluster.AddGroup();
  const std::string markup = "<script>alert(document.cookie)</script><img src=x onerror=alert(1)>";
  auto r = http.Send("POST", "/api/v1/jobs", headers,
                     json{{"group_id", group},
                          {"description", "prints markup"},
                          {"schedule_type", "NONE"},
                          {"glue_type", "GLUE_SHELL"},
                          {"glue_source", fmt::format("#!/bin/sh\necho '{}'\n", markup)}}
                         .dump());
  ASSERT_EQ(r.status, 201) << r.body;
  const auto job = r.Json()->at("id").get<int>();
  r = http.Send("POST", fmt::format("/api/v1/jobs/{}/trigger", job), headers, "{}");
  ASSERT_EQ(r.status, 202) << r.body;
  const auto log = r.Json()->at("log_id").get<std::int64_t>();
  ASSERT_TRUE(cwtest::Eventually(
      [&] {
        return cluster.Scalar(fmt::format("SELECT handle_code FROM job_log WHERE id = {}", log)) == 200;
      },
      30s))
      << cluster.executor(0).LogTail();
  r = http.Send("GET", fmt::format("/api/v1/logs/{}/output", log), headers, "", "");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.Header("Content-Type"), HasSubstr("application/json"));
  EXPECT_EQ(r.Header("X-Content-Type-Options"), "nosniff");
  const auto body = r.Json();
  ASSERT_TRUE(body && body->at("content").is_string()) << r.body;
  EXPECT_THAT(body->at("content").get<std::string>(), HasSubstr(markup)) << "the output, as text";
  EXPECT_THAT(r.body, ::testing::Not(HasSubstr("<html"))) << r.body;
}

// An HTTP server on 127.0.0.1 counting the /run requests it gets: where a refused address would lead.
class RunCounter {
 public:
  RunCounter() {
    server_.Post("/run", [this](const httplib::Request&, httplib::Response& res) {
      ++runs;
      res.set_content(R"({"code":200,"msg":null})", "application/json");
    });
    loopback_ = std::make_unique<cwtest::LoopbackServer>(server_);
  }
  int port() const { return loopback_->port(); }
  std::atomic<int> runs{0};

 private:
  httplib::Server server_;
  std::unique_ptr<cwtest::LoopbackServer> loopback_;
};

// POSTs /api/registry as an executor with the cluster's token; the envelope.
json Register(Cluster& cluster, const std::string& address) {
  HttpCaller http(cluster.admin_port(0));
  const auto r = http.Send(
      "POST", "/api/registry", {{"XXL-JOB-ACCESS-TOKEN", cluster.token()}},
      json{{"registryGroup", "EXECUTOR"}, {"registryKey", "e2e-app"}, {"registryValue", address}}.dump());
  return r.Json().value_or(json::object());
}

// The envelope's msg ("" when it has none).
std::string Msg(const json& envelope) {
  const auto it = envelope.find("msg");
  return it != envelope.end() && it->is_string() ? it->get<std::string>() : "";
}

// A MANUAL group configured with `address` and a job firing every second on it; waits for its first fire
// with a trigger result and returns (trigger_code, trigger_msg).
std::pair<std::int64_t, std::string> FireAt(Cluster& cluster, const std::string& address) {
  const int group = static_cast<int>(cluster.Scalar(
      fmt::format("INSERT INTO job_group (app_name, title, address_type, addresses, created_ms, updated_ms) "
                  "VALUES ('manual-app', 'e2e', 'MANUAL', ARRAY['{}'], 1, 1) RETURNING id",
                  address)));
  const int job =
      cluster.AddJob(group, "* * * * * ?", "FIRST", "DO_NOTHING", "noopJobHandler", Cluster::NowMs());
  const auto sql = fmt::format("SELECT count(*) FROM job_log WHERE job_id = {} AND trigger_code <> 0", job);
  EXPECT_TRUE(cwtest::Eventually([&] { return cluster.Scalar(sql) > 0; }, 30s)) << cluster.admin(0).LogTail();
  const auto row =
      cluster.Exec(fmt::format("SELECT trigger_code, trigger_msg FROM job_log WHERE job_id = {} AND "
                               "trigger_code <> 0 ORDER BY id LIMIT 1",
                               job));
  if (row.empty()) return {0, ""};
  return {row[0][0].as<std::int64_t>(), row[0][1].as<std::string>()};
}

TEST(SecurityE2E, ByDefaultTheAdminNeitherRegistersNorSendsToLinkLocalUnspecifiedOrItsOwnAddress) {
  Cluster cluster({.admins = 1, .executors = 0});
  // Registration: the cloud metadata address and the admin itself are refused, naming the setting.
  for (const auto& [address, setting] : std::vector<std::pair<std::string, std::string>>{
           {"http://169.254.169.254/", "registry_deny"},
           {"http://[fe80::1]:9999/", "registry_deny"},
           {fmt::format("http://127.0.0.1:{}/", cluster.admin_port(0)), "listen"}}) {
    const auto e = Register(cluster, address);
    EXPECT_EQ(e.value("code", 0), 500) << address << ": " << e.dump();
    EXPECT_THAT(Msg(e), HasSubstr(address)) << e.dump();
    EXPECT_THAT(Msg(e), HasSubstr("setting " + setting)) << e.dump();
  }
  EXPECT_EQ(cluster.Scalar("SELECT count(*) FROM executor_registry"), 0);

  // A configured address is checked when the admin connects: 0.0.0.0 would reach this host's loopback.
  RunCounter local;
  const auto [code, msg] = FireAt(cluster, fmt::format("http://0.0.0.0:{}/", local.port()));
  EXPECT_EQ(code, 500) << msg;
  EXPECT_THAT(msg, HasSubstr("0.0.0.0 is in a network the admin does not send to (setting registry_deny)"));
  EXPECT_EQ(local.runs, 0) << "the admin sent /run to 0.0.0.0";
}

TEST(SecurityE2E, AHostNameIsCheckedOnWhatItResolvesToWhenTheAdminConnects) {
  // An operator who denies loopback: 127.0.0.1 is refused at registration, and localhost, a name that
  // passes registration, when the admin connects (as a name rebound to a denied address would be).
  Cluster cluster(
      {.admins = 1,
       .executors = 0,
       .admin_args = {"--registry-deny", "169.254.0.0/16,fe80::/10,0.0.0.0/8,::/128,127.0.0.0/8,::1"}});
  RunCounter local;
  auto e = Register(cluster, fmt::format("http://127.0.0.1:{}/", local.port()));
  EXPECT_EQ(e.value("code", 0), 500) << e.dump();
  EXPECT_THAT(Msg(e), HasSubstr("registry_deny")) << e.dump();
  const auto by_name = fmt::format("http://localhost:{}/", local.port());
  e = Register(cluster, by_name);
  EXPECT_EQ(e.value("code", 0), 200) << "a name is stored and checked at connect time: " << e.dump();

  const auto [code, msg] = FireAt(cluster, by_name);
  EXPECT_EQ(code, 500) << msg;
  EXPECT_THAT(msg, HasSubstr("refused: localhost resolves to no address the admin sends to"));
  EXPECT_THAT(msg, HasSubstr("registry_deny"));
  EXPECT_EQ(local.runs, 0) << "the admin sent /run to a denied address";
}

// A TCP listener on `ip` (any 127.0.0.0/8 address is this host's loopback) counting the connections made to
// it, whatever they send: where a refused address would lead. Its thread polls, so it stops with the test.
class ConnectionCounter {
 public:
  explicit ConnectionCounter(const std::string& ip) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    ::inet_pton(AF_INET, ip.c_str(), &at.sin_addr);
    socklen_t length = sizeof at;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&at), length) != 0 || ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&at), &length) != 0) {
      ADD_FAILURE() << "cannot listen on " << ip << ": " << std::generic_category().message(errno);
      return;
    }
    port_ = ntohs(at.sin_port);
    thread_ = std::jthread([this](const std::stop_token& stop) {
      while (!stop.stop_requested()) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        const int peer = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (peer < 0) continue;
        ++connections_;
        ::close(peer);
      }
    });
  }
  ~ConnectionCounter() {
    thread_ = {};  // stops and joins
    if (fd_ >= 0) ::close(fd_);
  }
  ConnectionCounter(const ConnectionCounter&) = delete;
  ConnectionCounter& operator=(const ConnectionCounter&) = delete;
  int port() const { return port_; }
  int connections() const { return connections_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<int> connections_{0};
  std::jthread thread_;
};

// Whether a connection to ip:port can be made now (the control of a ConnectionCounter).
bool Connects(const std::string& ip, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, ip.c_str(), &to.sin_addr);
  const bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0;
  if (fd >= 0) ::close(fd);
  return ok;
}

// Issue 44, F6: http://[::ffff:127.0.0.5%1]:PORT/ (an IPv4-mapped IPv6 literal with a zone id) was stored
// although registry_deny covered 127.0.0.5, and the admin sent it /run with the access token; the same form
// of 127.0.0.1 made the admin call itself. Neither it nor another form of the address is stored now, and a
// configured one is not connected to: nothing reaches a listener on 127.0.0.5.
TEST(SecurityE2E, F6_NoFormOfADeniedAddressIsRegisteredOrConnectedTo) {
  ConnectionCounter listener("127.0.0.5");
  ASSERT_GT(listener.port(), 0);
  const int port = listener.port();
  Cluster cluster(
      {.admins = 1,
       .executors = 0,
       .admin_args = {"--registry-deny", "169.254.0.0/16,fe80::/10,0.0.0.0/8,::/128,127.0.0.5/32"}});
  for (const auto& [address, says] : std::vector<std::pair<std::string, std::string>>{
           {fmt::format("http://[::ffff:127.0.0.5%1]:{}/", port), "has a zone id (%1)"},
           {fmt::format("http://[::ffff:7f00:5%lo]:{}/", port), "has a zone id (%lo)"},
           {fmt::format("http://[::ffff:127.0.0.1%1]:{}/", cluster.admin_port(0)), "has a zone id (%1)"},
           {fmt::format("http://2130706437:{}/", port), "is the IPv4 address 127.0.0.5 in another form"},
           {fmt::format("http://0x7f.0.0.5:{}/", port), "is the IPv4 address 127.0.0.5 in another form"},
           {fmt::format("http://127.0.0.5.:{}/", port), "ends in a dot"},
           {fmt::format("http://user@127.0.0.5:{}/", port), "user info"},
           {fmt::format("http://[::ffff:127.0.0.5]:{}/", port),
            "127.0.0.5 is in a network the admin does not "
            "send to (setting registry_deny)"},
           {fmt::format("http://[::127.0.0.5]:{}/", port),
            "::127.0.0.5 (which reaches the IPv4 address "
            "127.0.0.5) is in a network the admin does not send "
            "to (setting registry_deny)"}}) {
    const auto e = Register(cluster, address);
    EXPECT_EQ(e.value("code", 0), 500) << address << ": " << e.dump();
    EXPECT_THAT(Msg(e), HasSubstr(address)) << e.dump();
    EXPECT_THAT(Msg(e), HasSubstr(says)) << e.dump();
  }
  EXPECT_EQ(cluster.Scalar("SELECT count(*) FROM executor_registry"), 0);

  // A MANUAL group's address is checked when the admin connects: make_address reads "%1" as the literal's
  // scope, and the address it connects to is 127.0.0.5.
  const auto [code, msg] = FireAt(cluster, fmt::format("http://[::ffff:127.0.0.5%1]:{}/", port));
  EXPECT_EQ(code, 500) << msg;
  EXPECT_THAT(msg, HasSubstr("127.0.0.5 is in a network the admin does not send to (setting registry_deny)"));
  const int connections = listener.connections();
  EXPECT_EQ(connections, 0) << "the admin connected to 127.0.0.5";
  // The control: the listener counts a connection that is made.
  ASSERT_TRUE(Connects("127.0.0.5", port));
  EXPECT_TRUE(cwtest::Eventually([&] { return listener.connections() == connections + 1; }, 10s));
}

// Issue 44, F6, for the admin's other requests: an alarm webhook under an allowed URL whose name resolves to
// a denied address is not sent (libcurl connects only where the guard allows), and says why.
TEST(SecurityE2E, F6_AnAlarmWebhookIsNotSentToADeniedAddressItsAllowedNameResolvesTo) {
  ConnectionCounter hooks("127.0.0.1");
  ASSERT_GT(hooks.port(), 0);
  const auto allowed = fmt::format("http://localhost:{}/hooks", hooks.port());
  Cluster cluster(
      {.admins = 1,
       .executors = 0,
       .admin_args = {"--registry-deny", "169.254.0.0/16,fe80::/10,0.0.0.0/8,::/128,127.0.0.0/8,::1",
                      "--alarm-webhook-allow", allowed}});
  // A job of a group without executors: each fire fails, and the failure alarms the webhook.
  const int job = cluster.AddJob(cluster.AddGroup(), "* * * * * ?", "FIRST", "DO_NOTHING", "noopJobHandler",
                                 Cluster::NowMs(), fmt::format("alarm_webhook = '{}/team-a'", allowed));
  const auto sql = fmt::format("SELECT count(*) FROM job_log WHERE job_id = {} AND alarm_status = 3", job);
  ASSERT_TRUE(cwtest::Eventually([&] { return cluster.Scalar(sql) > 0; }, 60s)) << cluster.admin(0).LogTail();
  const auto note =
      cluster
          .Exec(fmt::format("SELECT handle_msg FROM job_log WHERE job_id = {} AND alarm_status = 3 "
                            "ORDER BY id LIMIT 1",
                            job))[0][0]
          .as<std::string>();
  EXPECT_THAT(note, HasSubstr(fmt::format("webhook {}/team-a: not sent, refused: ", allowed)));
  EXPECT_THAT(note, HasSubstr("is in a network the admin does not send to (setting registry_deny)"));
  const int connections = hooks.connections();
  EXPECT_EQ(connections, 0) << "the admin connected to the webhook's denied address";
  ASSERT_TRUE(Connects("127.0.0.1", hooks.port()));  // the control
  EXPECT_TRUE(cwtest::Eventually([&] { return hooks.connections() == connections + 1; }, 10s));
}

}  // namespace
