// Security rules checked with real processes on loopback, where no other test covers them:
// - an admin in production mode refuses to start without an access token, or with an admin password that
//   fails the policy (the executor's own refusal is in executor/executor_e2e_test.cpp);
// - a job's output that holds markup reaches the console as a JSON string (application/json, nosniff),
//   never as HTML.
// Tokens wrong by one byte, unknown trigger addresses and the webhook allow-list are covered by the
// bad-input suite, the pg API tests and the dispatch e2e test.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <tuple>

#include "cluster.hpp"
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

}  // namespace
