// The console's server side against a real database, served in-process on a loopback port with the real
// AuthService (sessions, CSRF, API tokens, throttle) on a fake clock, and a recording executor client.

#include <arpa/inet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "admin/api/server.hpp"
#include "admin/auth/sso_service.hpp"
#include "admin/catalog/job_service.hpp"
#include "admin/dispatch/job_catalog.hpp"
#include "admin/results/callback_service.hpp"
#include "admin/schedule/scan_planner.hpp"
#include "admin/schedule/scheduler.hpp"
#include "admin/store/pg_account_store.hpp"
#include "admin/store/pg_job_store.hpp"
#include "admin/store/pg_scheduler_store.hpp"
#include "admin/store/pg_sso_store.hpp"
#include "api_fixture.hpp"
#include "cwtest/answering_executor_client.hpp"
#include "cwtest/fake_clock.hpp"
#include "pg_fixture.hpp"

namespace {

using namespace cronwheel::admin;
using cronwheel::xxljob::Envelope;
using nlohmann::json;
using ::testing::HasSubstr;

constexpr std::int64_t kT0 = 1767225600000;  // 2026-01-01T00:00:00Z
constexpr const char* kToken = "test-token-0123456789";
constexpr const char* kAdminPassword = "admin-password-1";
constexpr const char* kUserPassword = "user-password-1";

class NullSink final : public FireSink {
 public:
  void Dispatch(std::vector<Fire> /*fires*/) override {}
};

// Records /log and /kill and answers what the test set.
class FakeExecutors final : public cwtest::AnsweringExecutorClient {
 public:
  Envelope Kill(const std::string& address, const std::string& token, int job_id) override {
    {
      std::lock_guard lock(mu);
      kills.push_back(fmt::format("{} {} {}", address, token, job_id));
    }
    if (on_kill) on_kill();  // what the executor does meanwhile (its callback may come first)
    return kill_reply;
  }
  // /killFires: like a cronwheel executor when `kill_fires` (every fire asked is killed), else the base's
  // answer, an XXL-JOB executor's "uri-mapping(/killFires) not found".
  Envelope KillFires(const std::string& address, const std::string& token,
                     const cronwheel::xxljob::CancelParam& p) override {
    if (!kill_fires) return AnsweringExecutorClient::KillFires(address, token, p);
    std::lock_guard lock(mu);
    fire_kills.push_back(fmt::format("{} {} {}", address, token, fmt::join(p.log_ids, ",")));
    return Envelope::Success(json{{"killed", p.log_ids}});
  }
  Envelope Drain(const std::string& address, const std::string& token) override {
    std::lock_guard lock(mu);
    drains.push_back(address + " " + token);
    return drain_reply;
  }
  Envelope Log(const std::string& address, const std::string& token,
               const cronwheel::xxljob::LogParam& p) override {
    std::lock_guard lock(mu);
    logs.push_back(fmt::format("{} {} {} {} {}", address, token, p.log_date_tim, p.log_id, p.from_line_num));
    return log_reply;
  }
  std::mutex mu;
  std::vector<std::string> kills;
  bool kill_fires = false;
  std::vector<std::string> fire_kills;
  std::vector<std::string> drains;
  Envelope drain_reply = Envelope::Success();
  std::vector<std::string> logs;
  Envelope kill_reply = Envelope::Success();
  std::function<void()> on_kill;
  Envelope log_reply = Envelope::Success(
      json{{"fromLineNum", 1}, {"toLineNum", 2}, {"logContent", "line 1\nline 2\n"}, {"isEnd", false}});
};

// A caller: a session (cookie + CSRF token), a Bearer token, or nobody.
struct Caller {
  std::string cookie;
  std::string csrf;
  std::string bearer;
};

class ConsoleTest : public cwtest::ApiServerFixture {
 protected:
  void SetUp() override {
    PgFixture::SetUp();
    BuildServices(kT0, sink_, [](const std::vector<Fire>&) {});
    account_store_ = std::make_unique<PgAccountStore>(*pool_);
    auth_ = std::make_unique<AuthService>(AuthSettings(), *clock_, *account_store_);
    accounts_ = std::make_unique<Accounts>(*auth_, *clock_, *account_store_);
    audit_ = std::make_unique<AuditLog>(*clock_, *pool_);
    console_store_ = std::make_unique<ConsoleRepository>(*clock_, *pool_);
    // Single sign-on with nothing configured: its routes answer as in an admin without an SSO file (the
    // flows themselves: tests/e2e/sso_e2e_test.cpp).
    sso_store_ = std::make_unique<PgSsoStore>(*pool_);
    sso_ = std::make_unique<SsoService>(SsoConfig{}, *clock_, *auth_, *account_store_, *sso_store_,
                                        MakeCurlHttpsClient(false));
    console_ = std::make_unique<ConsoleServices>(ConsoleServices{.auth = *auth_,
                                                                 .accounts = *accounts_,
                                                                 .audit = *audit_,
                                                                 .store = *console_store_,
                                                                 .executors = executors_,
                                                                 .web_dir = "",
                                                                 .sso = *sso_});
    ASSERT_NO_FATAL_FAILURE(StartServer({.access_token = kToken}, *auth_, console_.get()));
    ASSERT_TRUE(auth_->EnsureAdminUser(kAdminPassword));
    admin_ = Login("admin", kAdminPassword);
  }
  // Argon2id at libsodium's minimum cost: the tests check behaviour, not hashing strength.
  static AuthService::Settings AuthSettings() {
    AuthService::Settings s;
    s.hashing.ops_limit = 1;
    s.hashing.mem_limit = 8192;
    return s;
  }

  struct Reply {
    int status = 0;
    json body;
    httplib::Headers headers;
  };
  Reply Call(const std::string& method, const std::string& path, const Caller& who,
             const std::string& body = "", bool send_csrf = true) {
    httplib::Headers h;
    if (!who.cookie.empty()) h.emplace("Cookie", std::string(kSessionCookie) + "=" + who.cookie);
    if (!who.csrf.empty() && send_csrf) h.emplace(kCsrfHeader, who.csrf);
    if (!who.bearer.empty()) h.emplace("Authorization", "Bearer " + who.bearer);
    httplib::Result r = Send(method, path, h, body);
    EXPECT_TRUE(r) << method << " " << path;
    if (!r) return {};
    Reply out{r->status, json::parse(r->body, nullptr, false), r->headers};
    EXPECT_FALSE(out.body.is_discarded()) << method << " " << path << " answered non-JSON: " << r->body;
    return out;
  }
  Reply Call(const std::string& method, const std::string& path, const std::string& body = "") {
    return Call(method, path, admin_, body);
  }
  Reply RawLogin(const std::string& username, const std::string& password) {
    return Call("POST", "/api/v1/auth/login", Caller{},
                json{{"username", username}, {"password", password}}.dump());
  }
  // A login from another loopback address (127.0.0.0/8 is all loopback on Linux): the client's socket is
  // bound to `source` before it connects, so the admin sees that address as the client's.
  Reply LoginFrom(const std::string& source, const std::string& username, const std::string& password) {
    httplib::Client client("127.0.0.1", server_->port());
    client.set_read_timeout(30, 0);
    client.set_socket_options([source](socket_t sock) {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = 0;
      inet_pton(AF_INET, source.c_str(), &a.sin_addr);
      if (bind(sock, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
        ADD_FAILURE() << "bind " << source;
    });
    auto r = client.Post("/api/v1/auth/login", json{{"username", username}, {"password", password}}.dump(),
                         "application/json");
    EXPECT_TRUE(r) << "login from " << source;
    if (!r) return {};
    return Reply{r->status, json::parse(r->body, nullptr, false), r->headers};
  }
  Caller Login(const std::string& username, const std::string& password) {
    const auto r = RawLogin(username, password);
    EXPECT_EQ(r.status, 200) << r.body.dump();
    const auto set_cookie = r.headers.find("Set-Cookie");
    if (set_cookie == r.headers.end()) return {};
    const auto& v = set_cookie->second;
    const auto start = v.find('=') + 1;
    return Caller{.cookie = v.substr(start, v.find(';') - start), .csrf = r.body.value("csrf_token", "")};
  }
  int CreateGroup(const std::string& app) {
    const auto r = Call("POST", "/api/v1/groups", json{{"app_name", app}, {"title", "T"}}.dump());
    EXPECT_EQ(r.status, 201) << r.body.dump();
    return r.body.value("id", 0);
  }
  int CreateJob(int group, const std::string& description = "d") {
    const auto r = Call("POST", "/api/v1/jobs",
                        json{{"group_id", group},
                             {"description", description},
                             {"schedule_type", "CRON"},
                             {"schedule_conf", "0/2 * * * * ?"},
                             {"handler", "demoJobHandler"}}
                            .dump());
    EXPECT_EQ(r.status, 201) << r.body.dump();
    return r.body.value("id", 0);
  }
  // A USER with `roles` (group id -> VIEWER, OPERATOR, DEVELOPER or ADMIN).
  int CreateUserWithRoles(const std::string& name, const std::map<int, std::string>& roles) {
    json grants = json::array();
    for (const auto& [g, role] : roles)
      grants.push_back({{"group_id", g}, {"role", role}});
    const auto r =
        Call("POST", "/api/v1/users",
             json{{"username", name}, {"password", kUserPassword}, {"group_roles", grants}}.dump());
    EXPECT_EQ(r.status, 201) << r.body.dump();
    return r.body.value("id", 0);
  }
  int CreateUser(const std::string& name, const std::vector<int>& groups, const std::string& role = "USER") {
    const auto r = Call(
        "POST", "/api/v1/users",
        json{{"username", name}, {"password", kUserPassword}, {"role", role}, {"permitted_group_ids", groups}}
            .dump());
    EXPECT_EQ(r.status, 201) << r.body.dump();
    return r.body.value("id", 0);
  }
  // A fire of `job` accepted by the executor at `address`, without a result yet.
  std::int64_t AddRunningFire(int job, int group, const std::string& address = "http://127.0.0.1:9999/") {
    return AddFire(job, group, "MANUAL", kT0, 200, 0, 0, address, kT0 + 5);
  }

  NullSink sink_;
  FakeExecutors executors_;
  std::unique_ptr<PgAccountStore> account_store_;
  std::unique_ptr<AuthService> auth_;
  std::unique_ptr<Accounts> accounts_;
  std::unique_ptr<AuditLog> audit_;
  std::unique_ptr<ConsoleRepository> console_store_;
  std::unique_ptr<PgSsoStore> sso_store_;
  std::unique_ptr<SsoService> sso_;
  std::unique_ptr<ConsoleServices> console_;
  Caller admin_;
};

TEST_F(ConsoleTest, FirstStartCreatesOneAdminEvenWhenAdminsStartTogether) {
  Exec("DELETE FROM app_user");
  std::vector<std::optional<std::string>> created(3);
  std::vector<std::thread> threads;
  threads.reserve(3);
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      PgAccountStore store(*pool_);
      AuthService auth(AuthSettings(), *clock_, store);
      created[static_cast<std::size_t>(i)] = auth.EnsureAdminUser("");
    });
  }
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(Count("SELECT count(*) FROM app_user"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM app_user WHERE username = 'admin' AND role = 'ADMIN'"), 1);
  const auto made =
      std::count_if(created.begin(), created.end(), [](const auto& p) { return p.has_value(); });
  ASSERT_EQ(made, 1) << "exactly one admin created the user and printed its password";
  for (const auto& p : created) {
    if (p) {
      EXPECT_EQ(RawLogin("admin", *p).status, 200) << "the printed password works";
    }
  }
  EXPECT_EQ(Exec("SELECT password_hash FROM app_user")[0][0].as<std::string>().rfind("$argon2id$", 0), 0u);
  // Users exist now: the setting is ignored, nothing is created.
  PgAccountStore again_store(*pool_);
  AuthService again(AuthSettings(), *clock_, again_store);
  EXPECT_FALSE(again.EnsureAdminUser("another-password"));
  EXPECT_THROW(again.EnsureAdminUser("short"), std::invalid_argument);
}

TEST_F(ConsoleTest, LoginSetsAHardenedCookieAndStateChangesNeedTheCsrfToken) {
  const auto r = RawLogin("admin", kAdminPassword);
  ASSERT_EQ(r.status, 200);
  const auto cookie = r.headers.find("Set-Cookie")->second;
  EXPECT_THAT(cookie, HasSubstr("HttpOnly"));
  EXPECT_THAT(cookie, HasSubstr("SameSite=Strict"));
  EXPECT_THAT(cookie, HasSubstr("Path=/"));
  EXPECT_THAT(cookie, HasSubstr("; Secure"))
      << "AuthService's default (the admin's setting: docs/operations.md)";
  EXPECT_EQ(r.body.at("user").at("role"), "ADMIN");
  EXPECT_FALSE(r.body.at("user").contains("password_hash"));
  // The database keeps only a hash of the session secret.
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM user_session WHERE token_hash = '{}'", admin_.cookie)),
            0);
  const auto me = Call("GET", "/api/v1/auth/me", admin_);
  EXPECT_EQ(me.body.at("user").at("username"), "admin");
  EXPECT_EQ(me.body.at("csrf_token"), admin_.csrf);
  // Without or with a wrong CSRF token: 403, nothing changes.
  const auto body = json{{"app_name", "csrf-app"}, {"title", "T"}}.dump();
  EXPECT_EQ(Call("POST", "/api/v1/groups", admin_, body, false).status, 403);
  EXPECT_EQ(Call("POST", "/api/v1/groups", Caller{.cookie = admin_.cookie, .csrf = "forged"}, body).status,
            403);
  EXPECT_EQ(Count("SELECT count(*) FROM job_group"), 0);
  EXPECT_EQ(Call("POST", "/api/v1/groups", admin_, body).status, 201);
  // A form post (not JSON) cannot log anyone in.
  auto form =
      client_->Post("/api/v1/auth/login", "username=admin&password=x", "application/x-www-form-urlencoded");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 415);
  // Wrong credentials say nothing about which part was wrong.
  EXPECT_EQ(RawLogin("admin", "wrong-password").body.at("error"), "wrong username or password");
  EXPECT_EQ(RawLogin("nobody", "wrong-password").body.at("error"), "wrong username or password");
  // Logout ends the session.
  EXPECT_EQ(Call("POST", "/api/v1/auth/logout", admin_).status, 200);
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", admin_).status, 401);
}

// Security review (issue 21), finding 3: failed logins were counted per user name, so five wrong passwords
// from anywhere locked the user out everywhere (429 for the right password). Now an address the user has
// signed in from is limited only by its own failures; the user name's back-off holds for the others.
TEST_F(ConsoleTest, WrongGuessesFromElsewhereDoNotLockTheUserOutOfAFamiliarAddress) {
  // SetUp signed admin in from 127.0.0.1: a familiar address for admin.
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(LoginFrom("127.0.0.2", "admin", "wrong-password").status, 401) << i;
  auto r = LoginFrom("127.0.0.2", "admin", kAdminPassword);
  EXPECT_EQ(r.status, 429) << "the guessing address waits, even with the right password";
  ASSERT_NE(r.headers.find("Retry-After"), r.headers.end());
  EXPECT_EQ(r.headers.find("Retry-After")->second, "1");
  EXPECT_EQ(LoginFrom("127.0.0.2", "someone-else", "wrong-password").status, 429) << "for any user name";
  EXPECT_EQ(LoginFrom("127.0.0.3", "ADMIN", kAdminPassword).status, 429)
      << "an address new to the user waits for the user name's back-off (the name ignores case)";
  EXPECT_EQ(RawLogin("admin", kAdminPassword).status, 200) << "the user's own address is not refused";
  // Each further failure doubles the wait.
  clock_->Advance(std::chrono::seconds(1));
  EXPECT_EQ(LoginFrom("127.0.0.2", "admin", "wrong-password").status, 401);
  r = LoginFrom("127.0.0.2", "admin", kAdminPassword);
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.headers.find("Retry-After")->second, "2");
  // An address that signed in becomes familiar: a new address, once free, signs in and is then exempt.
  clock_->Advance(std::chrono::seconds(2));
  EXPECT_EQ(LoginFrom("127.0.0.3", "admin", kAdminPassword).status, 200);
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(LoginFrom("127.0.0.2", "admin", "wrong-password").status, i == 0 ? 401 : 429) << i;
  EXPECT_EQ(LoginFrom("127.0.0.3", "admin", kAdminPassword).status, 200);
  EXPECT_EQ(LoginFrom("127.0.0.4", "admin", kAdminPassword).status, 429);
  // A familiar address is still limited by its own failures.
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(RawLogin("admin", "wrong-password").status, 401) << i;
  EXPECT_EQ(RawLogin("admin", kAdminPassword).status, 429);
}

// Security review 2, F5 (a): the address key applied to every login, so five wrong guesses by anyone at a
// user's own address (a NAT, a proxy) locked the user out there too. A familiar address is held to a key of
// the user's own there: others' failures at it, and the user's own there, do not spill over.
TEST_F(ConsoleTest, F5a_OthersWrongGuessesAtASharedAddressDoNotLockOutTheUsersFamiliarWithIt) {
  CreateUser("alice", {});
  ASSERT_EQ(LoginFrom("127.0.0.7", "alice", kUserPassword).status, 200);  // familiar for alice
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(LoginFrom("127.0.0.7", fmt::format("guess{}", i), "wrong-password").status, 401) << i;
  EXPECT_EQ(LoginFrom("127.0.0.7", "admin", kAdminPassword).status, 429)
      << "the address waits for names it is not familiar for";
  EXPECT_EQ(LoginFrom("127.0.0.7", "alice", kUserPassword).status, 200) << "not for alice";
  // alice's own typos there are hers: once the address's wait is over, others there are not slowed by them.
  clock_->Advance(std::chrono::minutes(30));
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(LoginFrom("127.0.0.7", "alice", "wrong-password").status, 401) << i;
  EXPECT_EQ(LoginFrom("127.0.0.7", "alice", kUserPassword).status, 429);
  EXPECT_EQ(LoginFrom("127.0.0.7", "admin", kAdminPassword).status, 200);
}

// Security review (issue 21), finding 3: the throttle was checked before the password and counted after it,
// so 30 guesses at once were all checked (limit 5). An attempt now takes its place under the throttle's lock
// before its password is verified: however many come at once, at most the allowed number is checked.
TEST_F(ConsoleTest, ParallelWrongGuessesAreCheckedAtMostTheAllowedNumber) {
  // A costlier stored hash makes each check take a while, so that the guesses overlap.
  PasswordHasher slow({.ops_limit = 2, .mem_limit = std::size_t{8} << 20U, .max_concurrent = 4});
  Exec(fmt::format("UPDATE app_user SET password_hash = '{}' WHERE username = 'admin'",
                   slow.Hash(kAdminPassword)));
  const auto guess_at_once = [&](const std::function<std::string(int)>& source) {
    std::vector<std::thread> threads;
    std::atomic<int> checked{0};
    std::atomic<int> throttled{0};
    threads.reserve(30);
    for (int i = 0; i < 30; ++i) {
      threads.emplace_back([&, i] {
        const auto r = LoginFrom(source(i), "admin", fmt::format("wrong-password-{}", i));
        (r.status == 401 ? checked : throttled)++;
        EXPECT_TRUE(r.status == 401 || r.status == 429) << r.status;
      });
    }
    for (auto& t : threads)
      t.join();
    return std::pair{checked.load(), throttled.load()};
  };
  // From one address.
  auto [checked, throttled] = guess_at_once([](int) { return std::string("127.0.0.5"); });
  EXPECT_LE(checked, 5);
  EXPECT_GE(checked, 1);
  EXPECT_EQ(checked + throttled, 30);
  // From 30 addresses, none familiar to the user: the user name's back-off bounds them together.
  clock_->Advance(std::chrono::hours(1));
  std::tie(checked, throttled) = guess_at_once([](int i) { return fmt::format("127.0.1.{}", i + 1); });
  EXPECT_LE(checked, 5);
  EXPECT_GE(checked, 1);
  EXPECT_EQ(checked + throttled, 30);
  EXPECT_EQ(RawLogin("admin", kAdminPassword).status, 200) << "the user's own address still signs in";
}

TEST_F(ConsoleTest, SessionsEndWhenIdleAndAtTheLatestAfterTheMaximum) {
  // 12 h idle: a request within it renews; one after it finds the session gone.
  clock_->Advance(std::chrono::hours(11));
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", admin_).status, 200);
  clock_->Advance(std::chrono::hours(11));
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", admin_).status, 200) << "renewed by the previous request";
  clock_->Advance(std::chrono::hours(12) + std::chrono::seconds(1));
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", admin_).status, 401);
  // 7 days at most, however busy: requests every 11 h keep it for 165 h, not past 168 h.
  const auto busy = Login("admin", kAdminPassword);
  for (int i = 0; i < 15; ++i) {
    clock_->Advance(std::chrono::hours(11));
    EXPECT_EQ(Call("GET", "/api/v1/auth/me", busy).status, 200) << i;
  }
  clock_->Advance(std::chrono::hours(4));
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", busy).status, 401);
}

TEST_F(ConsoleTest, ApiTokensActAsTheirUserAreShownOnceAndCanBeDeleted) {
  const int g = CreateGroup("mine-app");
  const int other = CreateGroup("other-app");
  CreateUser("alice", {g});
  const auto alice = Login("alice", kUserPassword);
  auto r = Call("POST", "/api/v1/tokens", alice, json{{"name", "ci"}, {"scope", "write"}}.dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  EXPECT_EQ(r.body.at("scope"), "write");
  const std::string secret = r.body.at("token");
  const int token_id = r.body.at("id");
  EXPECT_EQ(secret.rfind("cwt_", 0), 0u);
  EXPECT_EQ(
      Count(fmt::format("SELECT count(*) FROM api_token WHERE token_hash LIKE '%{}%'", secret.substr(4))), 0);
  const Caller bearer{.bearer = secret};
  // No CSRF token needed, alice's groups only.
  EXPECT_EQ(
      Call("POST", "/api/v1/jobs", bearer,
           json{{"group_id", g}, {"description", "d"}, {"schedule_type", "NONE"}, {"handler", "h"}}.dump())
          .status,
      201);
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/groups/{}", other), bearer).status, 404);
  EXPECT_EQ(Call("GET", "/api/v1/users", bearer).status, 403);
  r = Call("GET", "/api/v1/tokens", alice);
  ASSERT_EQ(r.body.at("items").size(), 1u);
  EXPECT_EQ(r.body.at("items")[0].at("last_used_ms"), kT0);
  EXPECT_FALSE(r.body.at("items")[0].contains("token"));
  EXPECT_EQ(Call("GET", "/api/v1/tokens?all=true", alice).status, 403);
  EXPECT_EQ(Call("GET", "/api/v1/tokens?all=true").body.at("items").size(), 1u);
  EXPECT_EQ(Call("GET", "/api/v1/tokens").body.at("items").size(), 0u) << "the admin's own list";
  // A wrong or malformed bearer never falls back to a cookie.
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", Caller{.bearer = "cwt_nope"}).status, 401);
  EXPECT_EQ(Call("DELETE", fmt::format("/api/v1/tokens/{}", token_id), alice).status, 200);
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", bearer).status, 401);
  EXPECT_EQ(Call("POST", "/api/v1/tokens", alice, json{{"name", ""}}.dump()).status, 400);
  EXPECT_EQ(Fields(Call("POST", "/api/v1/tokens", alice, json{{"nom", "x"}}.dump()).body),
            (std::vector<std::string>{"nom", "name"}));
}

// Issue 24, item 5: an API token's scope. The table is the design (docs/operations.md, "API tokens"): each
// route's scope, written out here apart from the code. Every served route is in it, and for every route
// and every scope a token of the admin's is refused with 403 (code scope) exactly when its scope is less
// than the route's; otherwise the route runs (on ids that do not exist and empty bodies: nothing changes).
TEST_F(ConsoleTest, EachApiTokenScopeGetsExactlyTheRoutesItCovers) {
  const std::map<std::string, std::string> needs = {
      {"GET /api/v1/alert-channels", "read"},
      {"GET /api/v1/alert-channels/{id}", "read"},
      {"GET /api/v1/alerts", "read"},
      {"GET /api/v1/auth/me", "read"},
      {"GET /api/v1/auth/policy", "admin"},
      {"PUT /api/v1/auth/policy", "admin"},
      {"GET /api/v1/calendars", "read"},
      {"GET /api/v1/calendars/{id}", "read"},
      {"GET /api/v1/dashboard", "read"},
      {"GET /api/v1/groups", "read"},
      {"GET /api/v1/groups/{id}", "read"},
      {"GET /api/v1/jobs", "read"},
      {"GET /api/v1/jobs/{id}", "read"},
      {"GET /api/v1/jobs/{id}/glue", "read"},
      {"GET /api/v1/jobs/{id}/run-once", "read"},
      {"GET /api/v1/logs", "read"},
      {"GET /api/v1/logs/{id}", "read"},
      {"GET /api/v1/logs/{id}/output", "read"},
      {"GET /api/v1/tags", "read"},
      {"GET /api/v1/workflow-runs/{id}", "read"},
      {"GET /api/v1/workflows", "read"},
      {"GET /api/v1/workflows/{id}", "read"},
      {"GET /api/v1/workflows/{id}/runs", "read"},
      {"POST /api/v1/auth/logout", "read"},
      {"POST /api/v1/schedules/preview", "read"},
      {"POST /api/v1/auth/cli/authorize", "admin"},
      {"DELETE /api/v1/jobs/{id}/run-once/{run_id}", "operate"},
      {"POST /api/v1/jobs/bulk", "operate"},
      {"POST /api/v1/jobs/{id}/run-once", "operate"},
      {"POST /api/v1/jobs/{id}/start", "operate"},
      {"POST /api/v1/jobs/{id}/stop", "operate"},
      {"POST /api/v1/jobs/{id}/trigger", "operate"},
      {"POST /api/v1/logs/{id}/kill", "operate"},
      {"POST /api/v1/workflow-runs/{id}/kill", "operate"},
      {"POST /api/v1/workflow-runs/{id}/nodes/{key}/rerun", "operate"},
      {"POST /api/v1/workflows/{id}/trigger", "operate"},
      {"DELETE /api/v1/jobs/{id}", "write"},
      {"DELETE /api/v1/workflows/{id}", "write"},
      {"POST /api/v1/jobs", "write"},
      {"POST /api/v1/jobs/{id}/copy", "write"},
      {"POST /api/v1/logs/clear", "write"},
      {"POST /api/v1/workflows", "write"},
      {"PUT /api/v1/jobs/{id}", "write"},
      {"PUT /api/v1/workflows/{id}", "write"},
      {"DELETE /api/v1/alert-channels/{id}", "admin"},
      {"DELETE /api/v1/calendars/{id}", "admin"},
      {"DELETE /api/v1/groups/{id}", "admin"},
      {"DELETE /api/v1/tokens/{id}", "admin"},
      {"DELETE /api/v1/users/{id}", "admin"},
      {"DELETE /api/v1/users/{id}/identity", "admin"},
      {"GET /api/v1/audit", "admin"},
      {"GET /api/v1/tokens", "admin"},
      {"GET /api/v1/users", "admin"},
      {"GET /api/v1/users/{id}", "admin"},
      {"POST /api/v1/alert-channels", "admin"},
      {"POST /api/v1/alert-channels/{id}/test", "admin"},
      {"POST /api/v1/calendars", "admin"},
      {"POST /api/v1/groups", "admin"},
      {"POST /api/v1/groups/{id}/drain", "admin"},
      {"POST /api/v1/tokens", "admin"},
      {"POST /api/v1/users", "admin"},
      {"POST /api/v1/users/me/password", "admin"},
      {"PUT /api/v1/alert-channels/{id}", "admin"},
      {"PUT /api/v1/calendars/{id}", "admin"},
      {"PUT /api/v1/groups/{id}", "admin"},
      {"PUT /api/v1/users/{id}", "admin"},
      {"PUT /api/v1/users/{id}/identity", "admin"},
  };
  const std::vector<std::string> scopes = {"read", "operate", "write", "admin"};
  std::map<std::string, Caller> tokens;
  for (const auto& scope : scopes) {
    const auto r = Call("POST", "/api/v1/tokens", json{{"name", scope}, {"scope", scope}}.dump());
    ASSERT_EQ(r.status, 201) << r.body.dump();
    EXPECT_EQ(r.body.at("scope"), scope);
    tokens[scope] = Caller{.bearer = r.body.at("token")};
  }
  const auto rank = [&](const std::string& scope) {
    return std::find(scopes.begin(), scopes.end(), scope) - scopes.begin();
  };
  std::map<std::string, std::string> served;
  for (const auto& route : console_->routes) {
    if (route.scope.empty()) continue;  // health, login, the OpenAPI document
    served[route.method + " " + route.path] = route.scope;
    std::string path = route.path;
    for (const auto& [from, to] :
         {std::pair<std::string, std::string>{"{id}", "999999"}, {"{run_id}", "999999"}, {"{key}", "k"}}) {
      if (const auto at = path.find(from); at != std::string::npos) path.replace(at, from.size(), to);
    }
    const std::string body = route.method == "POST" || route.method == "PUT" ? "{}" : "";
    const auto needed = needs.find(route.method + " " + route.path);
    if (needed == needs.end()) continue;  // reported by the comparison below
    for (const auto& scope : scopes) {
      const auto r = Call(route.method, path, tokens[scope], body);
      const bool refused_by_scope =
          r.status == 403 && r.body.contains("errors") && r.body.at("errors")[0].value("code", "") == "scope";
      EXPECT_EQ(refused_by_scope, rank(scope) < rank(needed->second))
          << route.method << " " << path << " with a token of scope " << scope << ": " << r.status << " "
          << r.body.dump();
      if (refused_by_scope) {
        EXPECT_THAT(r.body.at("error").get<std::string>(),
                    HasSubstr(fmt::format("scope is '{}'; {} {} needs '{}'", scope, route.method, route.path,
                                          needed->second)));
      }
    }
  }
  EXPECT_EQ(served, needs);
  EXPECT_EQ(Count("SELECT count(*) FROM api_token"), 4)
      << "the tokens routes ran on bodies and ids that change nothing";

  // The bulk route needs operate; its deleting and tagging actions need write.
  const int g = CreateGroup("bulk-app");
  const int job = CreateJob(g);
  auto r = Call("POST", "/api/v1/jobs/bulk", tokens["operate"],
                json{{"action", "DELETE"}, {"job_ids", {job}}}.dump());
  EXPECT_EQ(r.status, 403) << r.body.dump();
  EXPECT_THAT(r.body.at("error").get<std::string>(), HasSubstr("with action DELETE needs 'write'"));
  r = Call("POST", "/api/v1/jobs/bulk", tokens["operate"],
           json{{"action", "TAG"}, {"job_ids", {job}}, {"tags", {"x"}}}.dump());
  EXPECT_EQ(r.status, 403) << r.body.dump();
  EXPECT_EQ(Call("POST", "/api/v1/jobs/bulk", tokens["operate"],
                 json{{"action", "STOP"}, {"job_ids", {job}}}.dump())
                .status,
            200);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM job WHERE id = {}", job)), 1);

  // A scope never adds to the user's rights: a USER's admin-scope token still cannot use the ADMIN routes.
  CreateUser("alice", {g});
  const auto alice = Login("alice", kUserPassword);
  r = Call("POST", "/api/v1/tokens", alice, json{{"name", "all"}, {"scope", "admin"}}.dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  const Caller alice_admin_scope{.bearer = r.body.at("token")};
  r = Call("GET", "/api/v1/users", alice_admin_scope);
  EXPECT_EQ(r.status, 403);
  EXPECT_THAT(r.body.at("error").get<std::string>(), HasSubstr("ADMIN role"));
  EXPECT_EQ(Call("GET", "/api/v1/tokens", alice_admin_scope).status, 200) << "her own tokens";

  // A new token without a scope reads only; a scope not in the list is refused on its field.
  r = Call("POST", "/api/v1/tokens", json{{"name", "default"}}.dump());
  ASSERT_EQ(r.status, 201);
  EXPECT_EQ(r.body.at("scope"), "read");
  for (const auto& bad : {json("READ"), json("root"), json(3), json(nullptr)}) {
    r = Call("POST", "/api/v1/tokens", json{{"name", "bad"}, {"scope", bad}}.dump());
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_EQ(Fields(r.body), std::vector<std::string>{"scope"}) << bad;
    EXPECT_THAT(r.body.at("errors")[0].at("message").get<std::string>(),
                HasSubstr("read, operate, write, admin"));
  }
}

// Issue 24, item 4: roles per group. The table is the design (docs/operations.md, "Roles"), written out
// here apart from the code: each route needs a role in the group of what it acts on (VIEWER, OPERATOR,
// DEVELOPER, ADMIN), or is a global ADMIN's ("global"), or any signed-in user's ("any": it acts on no
// group, or lists only what the caller sees), or a console session's only ("session": approving the CLI's
// login, which an API token never may). Every served route is in it. For each role, a USER holding
// that role in one group calls every route on that group's job, fire, workflow and run (fresh ones per
// role), with an API token of scope admin; it is refused (403) exactly when the table says so, and a refusal
// of a group route names the role needed (code "role").
TEST_F(ConsoleTest, EachGroupRoleGetsExactlyTheRoutesItsTableAllows) {
  const std::map<std::string, std::string> needs = {
      {"GET /api/v1/alert-channels", "any"},
      {"GET /api/v1/alert-channels/{id}", "any"},
      {"GET /api/v1/alerts", "any"},
      {"GET /api/v1/auth/me", "any"},
      {"GET /api/v1/auth/policy", "global"},
      {"PUT /api/v1/auth/policy", "global"},
      {"GET /api/v1/calendars", "any"},
      {"GET /api/v1/calendars/{id}", "any"},
      {"GET /api/v1/dashboard", "any"},
      {"GET /api/v1/groups", "any"},
      {"GET /api/v1/jobs", "any"},
      {"GET /api/v1/logs", "any"},
      {"GET /api/v1/tags", "any"},
      {"GET /api/v1/workflows", "any"},
      {"POST /api/v1/auth/logout", "any"},
      {"POST /api/v1/schedules/preview", "any"},
      {"GET /api/v1/tokens", "any"},
      {"POST /api/v1/tokens", "any"},
      {"DELETE /api/v1/tokens/{id}", "any"},
      {"POST /api/v1/users/me/password", "any"},
      {"POST /api/v1/auth/cli/authorize", "session"},
      {"GET /api/v1/groups/{id}", "VIEWER"},
      {"GET /api/v1/jobs/{id}", "VIEWER"},
      {"GET /api/v1/jobs/{id}/glue", "VIEWER"},
      {"GET /api/v1/jobs/{id}/run-once", "VIEWER"},
      {"GET /api/v1/logs/{id}", "VIEWER"},
      {"GET /api/v1/logs/{id}/output", "VIEWER"},
      {"GET /api/v1/workflow-runs/{id}", "VIEWER"},
      {"GET /api/v1/workflows/{id}", "VIEWER"},
      {"GET /api/v1/workflows/{id}/runs", "VIEWER"},
      {"DELETE /api/v1/jobs/{id}/run-once/{run_id}", "OPERATOR"},
      {"POST /api/v1/jobs/bulk", "OPERATOR"},
      {"POST /api/v1/jobs/{id}/run-once", "OPERATOR"},
      {"POST /api/v1/jobs/{id}/start", "OPERATOR"},
      {"POST /api/v1/jobs/{id}/stop", "OPERATOR"},
      {"POST /api/v1/jobs/{id}/trigger", "OPERATOR"},
      {"POST /api/v1/logs/{id}/kill", "OPERATOR"},
      {"POST /api/v1/workflow-runs/{id}/kill", "OPERATOR"},
      {"POST /api/v1/workflow-runs/{id}/nodes/{key}/rerun", "OPERATOR"},
      {"POST /api/v1/workflows/{id}/trigger", "OPERATOR"},
      {"DELETE /api/v1/jobs/{id}", "DEVELOPER"},
      {"DELETE /api/v1/workflows/{id}", "DEVELOPER"},
      {"POST /api/v1/jobs", "DEVELOPER"},
      {"POST /api/v1/jobs/{id}/copy", "DEVELOPER"},
      {"POST /api/v1/logs/clear", "DEVELOPER"},
      {"POST /api/v1/workflows", "DEVELOPER"},
      {"PUT /api/v1/jobs/{id}", "DEVELOPER"},
      {"PUT /api/v1/workflows/{id}", "DEVELOPER"},
      {"POST /api/v1/groups/{id}/drain", "ADMIN"},
      {"PUT /api/v1/groups/{id}", "ADMIN"},
      {"DELETE /api/v1/alert-channels/{id}", "global"},
      {"DELETE /api/v1/calendars/{id}", "global"},
      {"DELETE /api/v1/groups/{id}", "global"},
      {"DELETE /api/v1/users/{id}", "global"},
      {"DELETE /api/v1/users/{id}/identity", "global"},
      {"GET /api/v1/audit", "global"},
      {"GET /api/v1/users", "global"},
      {"GET /api/v1/users/{id}", "global"},
      {"POST /api/v1/alert-channels", "global"},
      {"POST /api/v1/alert-channels/{id}/test", "global"},
      {"POST /api/v1/calendars", "global"},
      {"POST /api/v1/groups", "global"},
      {"POST /api/v1/users", "global"},
      {"PUT /api/v1/alert-channels/{id}", "global"},
      {"PUT /api/v1/calendars/{id}", "global"},
      {"PUT /api/v1/users/{id}", "global"},
      {"PUT /api/v1/users/{id}/identity", "global"},
  };
  const std::vector<std::string> roles = {"VIEWER", "OPERATOR", "DEVELOPER", "ADMIN"};
  const auto rank = [&](const std::string& role) {
    return std::find(roles.begin(), roles.end(), role) - roles.begin();
  };
  // The served routes, the deleting ones last (each role's objects stay until then).
  std::vector<RouteInfo> served;
  std::map<std::string, std::string> served_names;
  for (const auto& route : console_->routes) {
    if (route.scope.empty()) continue;  // health, login, the OpenAPI document
    served.push_back(route);
    served_names[route.method + " " + route.path] = needs.contains(route.method + " " + route.path)
                                                        ? needs.at(route.method + " " + route.path)
                                                        : "(not in the table)";
  }
  std::stable_partition(served.begin(), served.end(),
                        [](const RouteInfo& r) { return r.method != "DELETE"; });
  std::map<std::string, std::string> table_routes;
  for (const auto& [route, role] : needs)
    table_routes[route] = role;
  EXPECT_EQ(served_names, table_routes) << "every served route is in the table, and only those";

  std::map<std::string, int> refusals;  // role -> routes refused
  for (const auto& role : roles) {
    SCOPED_TRACE("role " + role);
    const int g = CreateGroup(fmt::format("{}-app", role == "ADMIN" ? "gadmin" : role));
    const int job = CreateJob(g, "of " + role);
    const auto log = AddRunningFire(job, g);
    auto r = Call("POST", "/api/v1/workflows",
                  json{{"group_id", g}, {"name", "w"}, {"nodes", {{{"key", "a"}, {"job_id", job}}}}}.dump());
    ASSERT_EQ(r.status, 201) << r.body.dump();
    const int workflow = r.body.at("id");
    r = Call("POST", fmt::format("/api/v1/workflows/{}/trigger", workflow), "");
    ASSERT_EQ(r.status, 202) << r.body.dump();
    const std::int64_t run = r.body.at("run_id");
    const int user = CreateUserWithRoles(fmt::format("role-{}", role), {{g, role}});
    r = Call("POST", "/api/v1/tokens", Login(fmt::format("role-{}", role), kUserPassword),
             json{{"name", "all"}, {"scope", "admin"}}.dump());
    ASSERT_EQ(r.status, 201) << r.body.dump();
    const Caller caller{.bearer = r.body.at("token")};
    for (const auto& route : served) {
      const auto key = route.method + " " + route.path;
      if (!needs.contains(key)) continue;  // reported above
      const auto& needed = needs.at(key);
      // The route's ids: this role's group's objects (a user's own id; what no route of a USER reaches,
      // an id of nothing).
      std::string path = route.path;
      const auto object = route.path.starts_with("/api/v1/jobs/")            ? std::to_string(job)
                          : route.path.starts_with("/api/v1/logs/")          ? std::to_string(log)
                          : route.path.starts_with("/api/v1/workflows/")     ? std::to_string(workflow)
                          : route.path.starts_with("/api/v1/workflow-runs/") ? std::to_string(run)
                          : route.path.starts_with("/api/v1/groups/")        ? std::to_string(g)
                          : route.path.starts_with("/api/v1/users/")         ? std::to_string(user)
                                                                             : std::string("999999");
      for (const auto& [from, to] :
           {std::pair<std::string, std::string>{"{id}", object}, {"{run_id}", "999999"}, {"{key}", "a"}}) {
        if (const auto at = path.find(from); at != std::string::npos) path.replace(at, from.size(), to);
      }
      // Bodies that reach the role check: a group or job named where the route reads one, else {}.
      std::string body = route.method == "POST" || route.method == "PUT" ? "{}" : "";
      if (key == "POST /api/v1/jobs") body = json{{"group_id", g}}.dump();
      if (key == "POST /api/v1/jobs/bulk") body = json{{"action", "STOP"}, {"job_ids", {job}}}.dump();
      if (key == "POST /api/v1/logs/clear") body = json{{"group_id", g}, {"older_than_days", 30}}.dump();
      if (key == "POST /api/v1/groups/{id}/drain") body = R"({"address":"http://127.0.0.1:9999/"})";
      if (key == "PUT /api/v1/groups/{id}") body = json{{"title", "renamed by " + role}}.dump();
      if (key == "POST /api/v1/workflows") {
        body = json{{"group_id", g}, {"name", "w2"}, {"nodes", {{{"key", "a"}, {"job_id", job}}}}}.dump();
      }
      if (key == "POST /api/v1/jobs/{id}/trigger" || key == "POST /api/v1/workflows/{id}/trigger") body = "";
      r = Call(route.method, path, caller, body);
      // The bulk route answers 200 with each job's own answer.
      const auto answer =
          key == "POST /api/v1/jobs/bulk" && r.status == 200 ? r.body.at("results")[0] : r.body;
      const int status =
          key == "POST /api/v1/jobs/bulk" && r.status == 200 ? answer.at("status").get<int>() : r.status;
      const bool refused = status == 403;
      const bool should =
          needed == "global" || needed == "session" || (needed != "any" && rank(role) < rank(needed));
      EXPECT_EQ(refused, should) << route.method << " " << path << " as " << role << " (needs " << needed
                                 << "): " << status << " " << answer.dump();
      if (refused) ++refusals[role];
      if (refused && needed != "global" && needed != "session") {
        const auto errors = answer.value("errors", json::array());
        EXPECT_TRUE(!errors.empty() && errors[0].value("code", "") == "role") << answer.dump();
        EXPECT_THAT(
            answer.value("error", ""),
            HasSubstr(fmt::format("your role in job group {} is {}; this needs {}", g, role, needed)));
      }
    }
  }
  std::string summary;
  for (const auto& role : roles)
    summary += fmt::format(" {} refused {}", role, refusals[role]);
  std::printf("[roles] %zu routes x %zu roles:%s\n", served.size(), roles.size(), summary.c_str());
}

// A user's roles through the users API: given as group_roles (or, as before, permitted_group_ids: each group
// as DEVELOPER), shown both ways, a group that does not exist named on the field the request gave. A
// group's ADMIN renames its group but may not change where its fires go or how its executors authenticate.
TEST_F(ConsoleTest, AUsersRolesRoundTripAndAGroupAdminChangesOnlyItsGroupsTitleAndChannels) {
  const int g1 = CreateGroup("roles-one-app");
  const int g2 = CreateGroup("roles-two-app");
  const int carol = CreateUserWithRoles("carol", {{g1, "ADMIN"}, {g2, "VIEWER"}});
  auto r = Call("GET", fmt::format("/api/v1/users/{}", carol));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body.at("group_roles"),
            json::parse(fmt::format(R"([{{"group_id":{},"role":"ADMIN"}},{{"group_id":{},"role":"VIEWER"}}])",
                                    g1, g2)));
  EXPECT_EQ(r.body.at("permitted_group_ids"), json::array({g1, g2}));
  // The old field: each group as DEVELOPER.
  r = Call("PUT", fmt::format("/api/v1/users/{}", carol), json{{"permitted_group_ids", {g2}}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("group_roles"),
            json::parse(fmt::format(R"([{{"group_id":{},"role":"DEVELOPER"}}])", g2)));
  // A group that does not exist, named on the field given; nothing changes.
  r = Call("PUT", fmt::format("/api/v1/users/{}", carol),
           json{{"group_roles", {{{"group_id", 999999}, {"role", "VIEWER"}}}}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"group_roles"});
  r = Call("PUT", fmt::format("/api/v1/users/{}", carol), json{{"permitted_group_ids", {999999}}}.dump());
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"permitted_group_ids"});
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM app_user_group WHERE user_id = {} AND role = 'DEVELOPER'",
                              carol)),
            1);
  // carol's own view of herself.
  r = Call("PUT", fmt::format("/api/v1/users/{}", carol),
           json{{"group_roles", {{{"group_id", g1}, {"role", "ADMIN"}}}}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  const auto session = Login("carol", kUserPassword);
  r = Call("GET", "/api/v1/auth/me", session);
  EXPECT_EQ(r.body.at("user").at("group_roles"),
            json::parse(fmt::format(R"([{{"group_id":{},"role":"ADMIN"}}])", g1)));

  // Her group's title, yes; its addresses, address type, app name or token, no; another group, not found.
  r = Call("PUT", fmt::format("/api/v1/groups/{}", g1), session,
           json{{"title", "Renamed by its admin"}}.dump());
  EXPECT_EQ(r.status, 200) << r.body.dump();
  for (const auto& body :
       {json{{"address_type", "MANUAL"}, {"addresses", {"http://10.0.0.9:9999/"}}},
        json{{"app_name", "taken-over-app"}}, json{{"access_token", "0123456789abcdef-mine"}}}) {
    const auto field = body.begin().key();
    r = Call("PUT", fmt::format("/api/v1/groups/{}", g1), session, body.dump());
    EXPECT_EQ(r.status, 403) << field << ": " << r.body.dump();
    EXPECT_THAT(r.body.value("error", ""), HasSubstr("needs the global ADMIN role")) << field;
  }
  EXPECT_EQ(
      Count(fmt::format("SELECT count(*) FROM job_group WHERE id = {} AND app_name = 'roles-one-app' AND "
                        "address_type = 'AUTO' AND access_token IS NULL AND title = 'Renamed by its admin'",
                        g1)),
      1);
  EXPECT_EQ(Call("PUT", fmt::format("/api/v1/groups/{}", g2), session, json{{"title", "x"}}.dump()).status,
            404);
  EXPECT_EQ(Call("DELETE", fmt::format("/api/v1/groups/{}", g1), session).status, 403)
      << "deleting: a global ADMIN's";
}

// Security review (issue 21), finding 5: API tokens never expired. A token lasts expires_in_days (90 by
// default, at most 365); an expired one is refused with a message that says so, and the list shows it.
TEST_F(ConsoleTest, ApiTokensExpireAfterTheirDaysAndSaySo) {
  constexpr std::int64_t kDayMs = 86'400'000;
  auto r = Call("POST", "/api/v1/tokens", json{{"name", "default"}, {"scope", "admin"}}.dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  EXPECT_EQ(r.body.at("expires_ms"), kT0 + 90 * kDayMs);
  EXPECT_EQ(r.body.at("state"), "active");
  const Caller long_lived{.bearer = r.body.at("token")};
  r = Call("POST", "/api/v1/tokens", json{{"name", "one day"}, {"expires_in_days", 1}}.dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  EXPECT_EQ(r.body.at("expires_ms"), kT0 + kDayMs);
  const Caller short_lived{.bearer = r.body.at("token")};
  for (const auto& bad : {json(0), json(366), json("7"), json(1.5)}) {
    r = Call("POST", "/api/v1/tokens", json{{"name", "bad"}, {"expires_in_days", bad}}.dump());
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_EQ(Fields(r.body), std::vector<std::string>{"expires_in_days"}) << bad;
    EXPECT_THAT(r.body.at("errors")[0].at("message").get<std::string>(), HasSubstr("365")) << bad;
  }
  EXPECT_EQ(Count("SELECT count(*) FROM api_token"), 2);
  // Last use: recorded at most once a minute.
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", short_lived).status, 200);
  clock_->Advance(std::chrono::seconds(30));
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", short_lived).status, 200);
  auto listed = Call("GET", "/api/v1/tokens");
  ASSERT_EQ(listed.status, 200) << listed.body.dump();
  auto tokens = listed.body.at("items");
  EXPECT_EQ(tokens[1].at("last_used_ms"), kT0);
  clock_->Advance(std::chrono::seconds(31));
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", short_lived).status, 200);
  tokens = Call("GET", "/api/v1/tokens").body.at("items");
  EXPECT_EQ(tokens[1].at("last_used_ms"), kT0 + 61'000);
  EXPECT_EQ(tokens[0].at("last_used_ms"), 0) << "never used";
  // One day on: the short one is refused, and says why.
  clock_->Advance(std::chrono::milliseconds(kDayMs - 61'000));
  r = Call("GET", "/api/v1/auth/me", short_lived);
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.body.at("error"), "the API token expired at 2026-01-02T00:00:00Z: create a new one");
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", long_lived).status, 200);
  tokens = Call("GET", "/api/v1/tokens", long_lived).body.at("items");  // (the session of SetUp has ended)
  EXPECT_EQ(tokens[0].at("state"), "active");
  EXPECT_EQ(tokens[1].at("state"), "expired");
}

// Security review (issue 21), finding 5: API tokens survived a password reset. A user's tokens are revoked
// when an admin sets their password and when they change it themselves; a deleted user's are gone. A revoked
// token is refused with a message that says why, and stays in the list, marked, until deleted.
TEST_F(ConsoleTest, ApiTokensAreRevokedWhenTheirUsersPasswordChanges) {
  const int alice = CreateUser("alice", {});
  const int bob = CreateUser("bob", {});
  const auto token_of = [&](const std::string& user, const std::string& name) {
    const auto r = Call("POST", "/api/v1/tokens", Login(user, kUserPassword), json{{"name", name}}.dump());
    EXPECT_EQ(r.status, 201) << r.body.dump();
    return Caller{.bearer = r.body.value("token", "")};
  };
  const auto alice_token = token_of("alice", "ci");
  const auto bob_token = token_of("bob", "ci");
  clock_->Advance(std::chrono::seconds(10));
  // An admin resets alice's password.
  ASSERT_EQ(
      Call("PUT", fmt::format("/api/v1/users/{}", alice), json{{"password", "another-password-1"}}.dump())
          .status,
      200);
  auto r = Call("GET", "/api/v1/auth/me", alice_token);
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(
      r.body.at("error"),
      "the API token was revoked at 2026-01-01T00:00:10Z when an admin reset its user's password: create a "
      "new one");
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", bob_token).status, 200) << "other users' tokens stay";
  // Changing other fields revokes nothing.
  const auto alice_session = Login("alice", "another-password-1");
  const auto alice_again =
      Caller{.bearer = Call("POST", "/api/v1/tokens", alice_session, json{{"name", "ci2"}}.dump())
                           .body.value("token", "")};
  ASSERT_EQ(
      Call("PUT", fmt::format("/api/v1/users/{}", alice), json{{"permitted_group_ids", json::array()}}.dump())
          .status,
      200);
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", alice_again).status, 200);
  // Alice changes her own password.
  ASSERT_EQ(Call("POST", "/api/v1/users/me/password", alice_session,
                 json{{"old_password", "another-password-1"}, {"new_password", "third-password-1"}}.dump())
                .status,
            200);
  r = Call("GET", "/api/v1/auth/me", alice_again);
  EXPECT_EQ(r.status, 401);
  EXPECT_THAT(r.body.at("error").get<std::string>(), HasSubstr("when its user changed their password"));
  const auto items = Call("GET", "/api/v1/tokens", alice_session).body.at("items");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].at("state"), "revoked");
  EXPECT_EQ(items[0].at("revoked_reason"), "password_reset");
  EXPECT_EQ(items[1].at("revoked_reason"), "password_changed");
  EXPECT_EQ(items[1].at("revoked_ms"), kT0 + 10'000);
  // A deleted user's tokens are gone with the user.
  ASSERT_EQ(Call("DELETE", fmt::format("/api/v1/users/{}", bob)).status, 200);
  r = Call("GET", "/api/v1/auth/me", bob_token);
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM api_token WHERE user_id = {}", bob)), 0);
}

TEST_F(ConsoleTest, UsersAreManagedByAdminsWithoutLockingThemselvesOut) {
  const int g = CreateGroup("mine-app");
  auto r = Call("POST", "/api/v1/users",
                json{{"username", "a b"}, {"password", "short"}, {"role", "ROOT"}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(Fields(r.body), ::testing::UnorderedElementsAre("username", "password", "role"));
  EXPECT_EQ(
      Call("POST", "/api/v1/users",
           json{{"username", "bob"}, {"password", kUserPassword}, {"permitted_group_ids", {999}}}.dump())
          .status,
      400);
  const int bob = CreateUser("bob", {g});
  EXPECT_EQ(
      Fields(
          Call("POST", "/api/v1/users", json{{"username", "bob"}, {"password", kUserPassword}}.dump()).body),
      std::vector<std::string>{"username"});
  const int admin_id = Call("GET", "/api/v1/auth/me").body.at("user").at("id");
  // Not yourself, not the last admin.
  r = Call("DELETE", fmt::format("/api/v1/users/{}", admin_id));
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(Call("PUT", fmt::format("/api/v1/users/{}", admin_id), json{{"role", "USER"}}.dump()).status,
            409);
  const int carol = CreateUser("carol", {}, "ADMIN");
  const auto carol_session = Login("carol", kUserPassword);
  EXPECT_EQ(
      Call("PUT", fmt::format("/api/v1/users/{}", admin_id), carol_session, json{{"role", "USER"}}.dump())
          .status,
      200);
  EXPECT_EQ(Call("DELETE", fmt::format("/api/v1/users/{}", carol), carol_session).status, 409);
  EXPECT_EQ(Call("GET", "/api/v1/users").status, 403) << "the demoted admin acts as a USER at once";
  // An admin's new password for bob ends bob's sessions.
  const auto bob_session = Login("bob", kUserPassword);
  EXPECT_EQ(Call("PUT", fmt::format("/api/v1/users/{}", bob), carol_session,
                 json{{"password", "another-password"}}.dump())
                .status,
            200);
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", bob_session).status, 401);
  EXPECT_EQ(
      Call("PUT", fmt::format("/api/v1/users/{}", bob), carol_session, json{{"username", "robert"}}.dump())
          .status,
      400);
  EXPECT_EQ(Call("DELETE", fmt::format("/api/v1/users/{}", bob), carol_session).status, 200);
}

TEST_F(ConsoleTest, OwnPasswordChangeChecksTheOldOneAndEndsOtherSessions) {
  const auto other = Login("admin", kAdminPassword);
  auto r = Call("POST", "/api/v1/users/me/password",
                json{{"old_password", "wrong-password"}, {"new_password", "new-password-1"}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"old_password"});
  r = Call("POST", "/api/v1/users/me/password",
           json{{"old_password", kAdminPassword}, {"new_password", "short"}}.dump());
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"new_password"});
  r = Call("POST", "/api/v1/users/me/password",
           json{{"old_password", kAdminPassword}, {"new_password", "new-password-1"}}.dump());
  EXPECT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(Call("GET", "/api/v1/auth/me").status, 200) << "this session stays";
  EXPECT_EQ(Call("GET", "/api/v1/auth/me", other).status, 401) << "the others end";
  EXPECT_EQ(RawLogin("admin", "new-password-1").status, 200);
}

TEST_F(ConsoleTest, SchedulePreviewGivesFiresInTheZoneAndNamesTheBadField) {
  // 2026-03-29: Europe/Berlin leaves +01:00 for +02:00 at 02:00 (there is no 02:30 that day).
  const auto from = 1774652400000;  // 2026-03-28T00:00:00+01:00
  auto r = Call("POST", "/api/v1/schedules/preview",
                json{{"schedule_type", "CRON"},
                     {"schedule_conf", "0 30 2 * * ?"},
                     {"time_zone", "Europe/Berlin"},
                     {"count", 3},
                     {"from_ms", from}}
                    .dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  ASSERT_EQ(r.body.at("fires").size(), 3u);
  EXPECT_EQ(r.body.at("fires")[0].at("iso"), "2026-03-28T02:30:00+01:00");
  EXPECT_THAT(r.body.at("fires")[1].at("iso").get<std::string>(), HasSubstr("+02:00"));
  EXPECT_EQ(r.body.at("fires")[0].at("ms"), from + 9'000'000);
  r = Call("POST", "/api/v1/schedules/preview",
           json{{"schedule_type", "CRON"}, {"schedule_conf", "0 0 25 * * ?"}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"schedule_conf"});
  r = Call(
      "POST", "/api/v1/schedules/preview",
      json{{"schedule_type", "CRON"}, {"schedule_conf", "0 * * * * ?"}, {"time_zone", "Mars/Base"}}.dump());
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"time_zone"});
  r = Call("POST", "/api/v1/schedules/preview", json{{"schedule_type", "CRON"}, {"count", 1000}}.dump());
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"count"});
  r = Call("POST", "/api/v1/schedules/preview", json{{"schedule_type", "NONE"}}.dump());
  EXPECT_EQ(r.body.at("fires").size(), 0u);
  r = Call("POST", "/api/v1/schedules/preview",
           json{{"schedule_type", "FIX_RATE"}, {"schedule_conf", "30"}}.dump());
  EXPECT_EQ(r.body.at("fires")[1].at("ms"), kT0 + 60'000);
}

TEST_F(ConsoleTest, OutputComesFromTheFiresOwnExecutorUntilTheEnd) {
  const int g = CreateGroup("sample-app");
  const int job = CreateJob(g);
  const auto log = AddRunningFire(job, g);
  auto r = Call("GET", fmt::format("/api/v1/logs/{}/output", log));
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("content"), "line 1\nline 2\n");
  EXPECT_EQ(r.body.at("to_line"), 2);
  EXPECT_EQ(r.body.at("end"), false);
  {
    std::lock_guard lock(executors_.mu);
    ASSERT_EQ(executors_.logs.size(), 1u);
    EXPECT_EQ(executors_.logs[0], fmt::format("http://127.0.0.1:9999/ {} {} {} 1", kToken, kT0 + 5, log))
        << "the recorded address, the global token, logDateTim = trigger_ms";
  }
  // No new lines and no result yet: not the end. With a result: the end (XXL-JOB, docs/xxl-job-protocol.md
  // §2).
  executors_.log_reply =
      Envelope::Success(json{{"fromLineNum", 3}, {"toLineNum", 0}, {"logContent", ""}, {"isEnd", false}});
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/logs/{}/output?from_line=3", log)).body.at("end"), false);
  Exec(fmt::format("UPDATE job_log SET handle_code = 200 WHERE id = {}", log));
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/logs/{}/output?from_line=3", log)).body.at("end"), true);
  // The executor's failure is a 502 naming it; bad input is a 400.
  executors_.log_reply = Envelope::Fail("connection refused");
  r = Call("GET", fmt::format("/api/v1/logs/{}/output?from_line=3", log));
  EXPECT_EQ(r.status, 502);
  EXPECT_THAT(r.body.at("error").get<std::string>(), HasSubstr("connection refused"));
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/logs/{}/output?from_line=0", log)).status, 400);
  // A fire never sent has no output: not ended while pending.
  const auto pending =
      Exec(fmt::format("INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, "
                       "created_ms) VALUES ({}, {}, 'CRON', {}, {}) RETURNING id",
                       job, g, kT0 + 60'000, kT0))[0][0]
          .as<std::int64_t>();
  r = Call("GET", fmt::format("/api/v1/logs/{}/output", pending));
  EXPECT_EQ(r.body.at("end"), false);
  // Its callback came before its trigger result (written in batches): it ran, and the trigger result naming
  // its executor is on its way, so its output is not at its end yet; after 30 s without one, it is.
  Exec(fmt::format("UPDATE job_log SET handle_code = 200, handle_ms = {} WHERE id = {}", clock_->NowMs(),
                   pending));
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/logs/{}/output", pending)).body.at("end"), false);
  clock_->Advance(std::chrono::seconds(31));
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/logs/{}/output", pending)).body.at("end"), true);
  std::lock_guard lock(executors_.mu);
  EXPECT_EQ(executors_.logs.size(), 4u) << "no request for a fire without an executor";
}

// The fire output archive (docs/operations.md): while a fire runs its output comes from its executor; once
// its callback brought its log, from the archive (source "archive"), in pages of lines, without asking the
// executor; a fire whose log is still to be pulled, or could not be, is read from its executor with the
// archive's state, and when its executor fails too the 502 says why the archive has no copy.
TEST_F(ConsoleTest, AnEndedFiresOutputComesFromTheArchiveAndSaysSo) {
  const int g = CreateGroup("sample-app");
  const int job = CreateJob(g);
  const auto log = AddRunningFire(job, g);
  auto r = Call("GET", fmt::format("/api/v1/logs/{}/output", log));
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("source"), "executor");
  EXPECT_FALSE(r.body.contains("archive")) << "it runs";

  cronwheel::xxljob::HandleCallbackParam cb{.log_id = log, .handle_code = 200, .handle_msg = "ok"};
  cb.job_log = cronwheel::xxljob::HandleCallbackParam::JobLog{.content = "one\ntwo\nthree\n", .bytes = 14};
  callbacks_->Handle(std::vector<cronwheel::xxljob::HandleCallbackParam>{cb});
  const auto asked = [this] {
    std::lock_guard lock(executors_.mu);
    return executors_.logs.size();
  };
  const auto before = asked();
  r = Call("GET", fmt::format("/api/v1/logs/{}/output", log));
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("source"), "archive");
  EXPECT_EQ(r.body.at("content"), "one\ntwo\nthree\n");
  EXPECT_EQ(r.body.at("to_line"), 3);
  EXPECT_EQ(r.body.at("end"), true);
  EXPECT_EQ(r.body.at("archive").at("state"), "archived");
  EXPECT_EQ(r.body.at("archive").at("via"), "push");
  EXPECT_EQ(r.body.at("archive").at("log_bytes"), 14);
  EXPECT_EQ(r.body.at("archive").at("left_out_bytes"), 0);
  r = Call("GET", fmt::format("/api/v1/logs/{}/output?from_line=2", log));
  EXPECT_EQ(r.body.at("content"), "two\nthree\n");
  EXPECT_EQ(r.body.at("to_line"), 3);
  r = Call("GET", fmt::format("/api/v1/logs/{}/output?from_line=4", log));
  EXPECT_EQ(r.body.at("content"), "");
  EXPECT_EQ(r.body.at("to_line"), 0);
  EXPECT_EQ(r.body.at("end"), true);
  EXPECT_EQ(asked(), before) << "the executor is not asked";

  // An XXL-JOB executor's fire: no log came, a pull is queued; meanwhile its executor answers.
  const auto xxl = AddRunningFire(job, g);
  callbacks_->Handle(std::vector<cronwheel::xxljob::HandleCallbackParam>{
      {.log_id = xxl, .handle_code = 200, .handle_msg = ""}});
  r = Call("GET", fmt::format("/api/v1/logs/{}/output", xxl));
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("source"), "executor");
  EXPECT_EQ(r.body.at("archive").at("state"), "pending");
  EXPECT_EQ(r.body.at("content"), "line 1\nline 2\n");
  // The pull failed for good, and the executor is gone: the 502 says both.
  Exec(fmt::format("DELETE FROM fire_output_pull WHERE log_id = {}", xxl));
  Exec(
      fmt::format("INSERT INTO fire_output (log_id, scheduled_ms, via, archived_ms, error) VALUES ({}, {}, "
                  "'pull', 1, 'the executor did not answer (after 4 attempt(s))')",
                  xxl, kT0));
  executors_.log_reply = Envelope::Fail("connection refused");
  r = Call("GET", fmt::format("/api/v1/logs/{}/output", xxl));
  EXPECT_EQ(r.status, 502);
  EXPECT_THAT(r.body.at("error").get<std::string>(),
              HasSubstr("connection refused; the archive has no copy: the executor did not answer"));
}

// An admin asks one executor of a group to drain (issue 25, item 5): the request goes to the address the
// group holds (normalised), with the group's token; any other address is a 400 naming the field and the
// online ones, and nothing is sent; the executor's refusal is a 502 with its answer; users may not.
TEST_F(ConsoleTest, ADrainRequestGoesOnlyToAnOnlineExecutorOfTheGroupWithItsToken) {
  const int g = CreateGroup("drained-app");
  ASSERT_EQ(Call("PUT", fmt::format("/api/v1/groups/{}", g),
                 json{{"address_type", "MANUAL"},
                      {"addresses", {"http://127.0.0.1:9999/", "http://127.0.0.1:9998/"}},
                      {"access_token", "group-token-123"}}
                     .dump())
                .status,
            200);
  const auto path = fmt::format("/api/v1/groups/{}/drain", g);
  auto r = Call("POST", path, json{{"address", "http://127.0.0.1:9999"}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("address"), "http://127.0.0.1:9999/");
  {
    std::lock_guard lock(executors_.mu);
    EXPECT_EQ(executors_.drains, std::vector<std::string>{"http://127.0.0.1:9999/ group-token-123"});
  }
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/audit?action=executor.drain")).body.at("total"), 1);

  r = Call("POST", path, json{{"address", "http://10.1.2.3:9999/"}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body.dump(), HasSubstr("'http://10.1.2.3:9999/' is not an online executor of group"));
  EXPECT_THAT(r.body.dump(), HasSubstr("http://127.0.0.1:9998/"));
  EXPECT_EQ(Call("POST", path, "{}").status, 400);
  EXPECT_EQ(Call("POST", path, R"({"address":7})").status, 400);
  EXPECT_EQ(Call("POST", path, R"({"address":"http://127.0.0.1:9999/","now":true})").status, 400);
  {
    std::lock_guard lock(executors_.mu);
    EXPECT_EQ(executors_.drains.size(), 1u) << "nothing sent for a refused request";
  }
  executors_.drain_reply = Envelope::Fail("invalid request, uri-mapping(/drain) not found.");
  r = Call("POST", path, json{{"address", "http://127.0.0.1:9998/"}}.dump());
  EXPECT_EQ(r.status, 502);
  EXPECT_THAT(r.body.at("error").get<std::string>(), HasSubstr("uri-mapping(/drain) not found"));

  CreateUser("alice", {g});
  const auto alice = Login("alice", kUserPassword);
  EXPECT_EQ(Call("POST", path, alice, json{{"address", "http://127.0.0.1:9999/"}}.dump()).status, 403);
  EXPECT_EQ(Call("POST", fmt::format("/api/v1/groups/{}/drain", g + 1000),
                 json{{"address", "http://127.0.0.1:9999/"}}.dump())
                .status,
            404);
}

TEST_F(ConsoleTest, KillStopsTheRunOnItsExecutorAndTheLaterCallbackIsARepeat) {
  const int g = CreateGroup("sample-app");
  Exec(fmt::format("UPDATE job_group SET access_token = 'group-token-123' WHERE id = {}", g));
  const int job = CreateJob(g);
  const auto log = AddRunningFire(job, g);
  auto r = Call("POST", fmt::format("/api/v1/logs/{}/kill", log));
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("handle_code"), 500);
  EXPECT_EQ(r.body.at("status"), "FAILED");
  EXPECT_THAT(r.body.at("handle_msg").get<std::string>(), HasSubstr("Manual operation, kill job: "));
  {
    std::lock_guard lock(executors_.mu);
    ASSERT_EQ(executors_.kills.size(), 1u);
    EXPECT_EQ(executors_.kills[0], fmt::format("http://127.0.0.1:9999/ group-token-123 {}", job));
  }
  EXPECT_EQ(Count(fmt::format("SELECT alarm_status FROM job_log WHERE id = {}", log)), 1)
      << "no retry, no alarm";
  // The executor's callback afterwards changes nothing.
  callbacks_->Handle(
      std::vector<cronwheel::xxljob::HandleCallbackParam>{{.log_id = log, .handle_code = 500}});
  EXPECT_THAT(Exec(fmt::format("SELECT handle_msg FROM job_log WHERE id = {}", log))[0][0].as<std::string>(),
              HasSubstr("Manual operation"));
  // Finished or never accepted: 409. The executor refusing: 502 and the row unchanged.
  EXPECT_EQ(Call("POST", fmt::format("/api/v1/logs/{}/kill", log)).status, 409);
  const auto other = AddRunningFire(job, g);
  executors_.kill_reply = Envelope::Fail("no such job thread");
  EXPECT_EQ(Call("POST", fmt::format("/api/v1/logs/{}/kill", other)).status, 502);
  EXPECT_EQ(Count(fmt::format("SELECT handle_code FROM job_log WHERE id = {}", other)), 0);
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/audit?entity=log&entity_id={}", log)).body.at("total"), 1);
}

// The executor reports the killed fire (a failed callback) before the admin records the kill: the kill still
// stands, and the fire is neither retried nor alarmed.
TEST_F(ConsoleTest, AKillWhoseCallbackArrivesFirstStillStands) {
  const int g = CreateGroup("sample-app");
  const int job = CreateJob(g);
  const auto log = AddRunningFire(job, g);
  executors_.on_kill = [&] {
    callbacks_->Handle(std::vector<cronwheel::xxljob::HandleCallbackParam>{
        {.log_id = log,
         .handle_code = 500,
         .handle_msg = "scheduling center kill job. [job running, killed]"}});
  };
  const auto r = Call("POST", fmt::format("/api/v1/logs/{}/kill", log));
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("handle_code"), 500);
  EXPECT_THAT(r.body.at("handle_msg").get<std::string>(), HasSubstr("Manual operation, kill job: "));
  EXPECT_EQ(Count(fmt::format("SELECT alarm_status FROM job_log WHERE id = {}", log)), 1)
      << "no retry, no alarm";
}

TEST_F(ConsoleTest, ClearDeletesOnlyFinishedFiresOfTheChosenScope) {
  const int g = CreateGroup("sample-app");
  const int job = CreateJob(g);
  const int other = CreateJob(g);
  const auto day = std::int64_t{86'400'000};
  for (int i = 0; i < 10; ++i) {
    Exec(fmt::format(
        "INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, trigger_code, handle_code,"
        " created_ms) VALUES ({}, {}, 'MANUAL', {}, 200, 200, 1)",
        job, g, kT0 - i * day));
  }
  AddRunningFire(job, g);  // scheduled at kT0, running
  Exec(fmt::format("UPDATE job_log SET scheduled_ms = {} WHERE trigger_code = 200 AND handle_code = 0",
                   kT0 - 30 * day));
  Exec(fmt::format("UPDATE fire_open SET scheduled_ms = {}", kT0 - 30 * day));
  Exec(fmt::format(
      "INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, trigger_code, handle_code,"
      " created_ms) VALUES ({}, {}, 'MANUAL', {}, 200, 200, 1)",
      other, g, kT0 - 30 * day));
  auto r = Call("POST", "/api/v1/logs/clear", json{{"job_id", job}, {"older_than_days", 5}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("deleted"), 4) << "days 6..9 ago; the running fire stays";
  r = Call("POST", "/api/v1/logs/clear", json{{"job_id", job}, {"keep_last", 2}}.dump());
  EXPECT_EQ(r.body.at("deleted"), 4);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM job_log WHERE job_id = {}", job)), 3);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM job_log WHERE job_id = {}", other)), 1);
  EXPECT_EQ(Fields(Call("POST", "/api/v1/logs/clear", json{{"job_id", job}}.dump()).body),
            std::vector<std::string>{"older_than_days"});
  EXPECT_EQ(Call("POST", "/api/v1/logs/clear", json{{"older_than_days", 1}, {"keep_last", 1}}.dump()).status,
            400);
}

TEST_F(ConsoleTest, DashboardCountsTheGroupsTheCallerMaySee) {
  const int mine = CreateGroup("mine-app");
  const int other = CreateGroup("other-app");
  CreateJob(mine);
  const int o = CreateJob(other);
  Call("POST", fmt::format("/api/v1/jobs/{}/start", o));
  Exec(fmt::format(
      "INSERT INTO job_log (job_id, group_id, trigger_type, scheduled_ms, handle_code, created_ms)"
      " VALUES ({}, {}, 'MANUAL', {}, 200, 1)",
      o, other, kT0 + 1000));
  Exec(
      "INSERT INTO log_report (day, running_count, success_count, failed_count, updated_ms) VALUES"
      " ('2026-01-01', 1, 2, 3, 1), ('2025-12-30', 0, 5, 0, 1), ('2025-12-01', 9, 9, 9, 1)");
  ASSERT_TRUE(registry_->Register({.registry_key = "other-app", .registry_value = "http://127.0.0.1:9999/"}));
  catalog_->RefreshRegistry();
  auto r = Call("GET", "/api/v1/dashboard?days=7");
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("totals"),
            (json{{"jobs", 2}, {"enabled_jobs", 1}, {"fires_today", 1}, {"executors_online", 1}}));
  ASSERT_EQ(r.body.at("days").size(), 7u);
  EXPECT_EQ(r.body.at("days")[6],
            (json{{"day", "2026-01-01"}, {"running", 0}, {"success", 1}, {"failed", 0}}))
      << "today is counted live, not read from the report the monitor renews every minute";
  EXPECT_EQ(r.body.at("days")[4].at("success"), 5);
  EXPECT_EQ(r.body.at("days")[0].at("day"), "2025-12-26");
  CreateUser("alice", {mine});
  const auto alice = Login("alice", kUserPassword);
  r = Call("GET", "/api/v1/dashboard", alice);
  EXPECT_EQ(r.body.at("totals"),
            (json{{"jobs", 1}, {"enabled_jobs", 0}, {"fires_today", 0}, {"executors_online", 0}}));
  EXPECT_EQ(r.body.at("days")[6].at("success"), 0) << "counted over alice's groups, not the global report";
  EXPECT_EQ(Call("GET", "/api/v1/dashboard?days=0").status, 400);
}

TEST_F(ConsoleTest, CopyMakesAStoppedJobAndGlueVersionsAreListed) {
  const int g = CreateGroup("sample-app");
  auto r = Call("POST", "/api/v1/jobs",
                json{{"group_id", g},
                     {"description", "script"},
                     {"schedule_type", "CRON"},
                     {"schedule_conf", "0 * * * * ?"},
                     {"glue_type", "GLUE_SHELL"},
                     {"glue_source", "echo one"},
                     {"enabled", true}}
                    .dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  const int job = r.body.at("id");
  clock_->Advance(std::chrono::seconds(1));
  Call("PUT", fmt::format("/api/v1/jobs/{}", job),
       json{{"glue_source", "echo two"}, {"glue_remark", "v2"}}.dump());
  r = Call("GET", fmt::format("/api/v1/jobs/{}/glue", job));
  ASSERT_EQ(r.body.at("items").size(), 2u);
  EXPECT_EQ(r.body.at("items")[0].at("glue_source"), "echo two");
  EXPECT_EQ(r.body.at("items")[0].at("glue_remark"), "v2");
  r = Call("POST", fmt::format("/api/v1/jobs/{}/copy", job));
  ASSERT_EQ(r.status, 201) << r.body.dump();
  EXPECT_EQ(r.body.at("description"), "script (copy)");
  EXPECT_EQ(r.body.at("enabled"), false);
  EXPECT_EQ(r.body.at("glue_source"), "echo two");
  EXPECT_NE(r.body.at("id"), job);
  r = Call("GET", "/api/v1/audit?action=job.copy");
  ASSERT_EQ(r.body.at("total"), 1);
  EXPECT_EQ(r.body.at("items")[0].at("after").at("copied_from"), job);
}

// Security review (issue 21), finding 1: a copy is a new job, so a user's copy may name no child outside the
// user's groups, even one an admin linked to the job copied.
TEST_F(ConsoleTest, AUsersCopyNamesNoChildOutsideTheirGroups) {
  const int mine = CreateGroup("mine-app");
  const int other = CreateGroup("other-app");
  const int foreign = CreateJob(other, "foreign");
  const int job = CreateJob(mine, "parent");
  ASSERT_EQ(
      Call("PUT", fmt::format("/api/v1/jobs/{}", job), json{{"child_job_ids", {foreign}}}.dump()).status,
      200);
  CreateUser("alice", {mine});
  const auto alice = Login("alice", kUserPassword);
  auto r = Call("POST", fmt::format("/api/v1/jobs/{}/copy", job), alice);
  EXPECT_EQ(r.status, 409) << r.body.dump();
  ASSERT_EQ(Fields(r.body), std::vector<std::string>{"child_job_ids"}) << r.body.dump();
  EXPECT_EQ(r.body.at("errors")[0].at("message"), fmt::format("job {} not found", foreign));
  EXPECT_EQ(r.body.at("errors")[0].at("code"), "not_found");
  EXPECT_EQ(Count("SELECT count(*) FROM job"), 2);
  r = Call("POST", fmt::format("/api/v1/jobs/{}/copy", job));
  EXPECT_EQ(r.status, 201) << "an admin's copy keeps the link: " << r.body.dump();
  EXPECT_EQ(r.body.at("child_job_ids"), (json{foreign}));
}

// Security review (issue 21), item 2: a script job (any glue type but BEAN) runs whatever code its author
// wrote on the executors of its group, which may run other groups' jobs too (docs/security.md, "Script
// jobs"). Creating one, or changing one in any way, needs the ADMIN role; a USER may still trigger, start,
// stop and delete one in their groups, and keep using bean jobs as before.
TEST_F(ConsoleTest, ScriptJobsAreCreatedAndChangedByAdminsOnly) {
  const int g = CreateGroup("mine-app");
  CreateUser("alice", {g});
  const auto alice = Login("alice", kUserPassword);
  const json script{{"group_id", g},
                    {"description", "script"},
                    {"schedule_type", "CRON"},
                    {"schedule_conf", "0 * * * * ?"},
                    {"glue_type", "GLUE_SHELL"},
                    {"glue_source", "echo hello"}};
  const auto expect_forbidden = [](const Reply& r, const std::string& glue_type) {
    EXPECT_EQ(r.status, 403) << r.body.dump();
    EXPECT_EQ(r.body.value("code", ""), "forbidden");
    ASSERT_EQ(Fields(r.body), std::vector<std::string>{"glue_type"}) << r.body.dump();
    EXPECT_THAT(r.body.at("errors")[0].at("message").get<std::string>(),
                ::testing::AllOf(HasSubstr(glue_type), HasSubstr("ADMIN")));
    EXPECT_EQ(r.body.at("errors")[0].at("code"), "role");
    EXPECT_EQ(r.body.at("errors")[0].at("params").at("role"), "ADMIN");
  };
  expect_forbidden(Call("POST", "/api/v1/jobs", alice, script.dump()), "GLUE_SHELL");
  EXPECT_EQ(Count("SELECT count(*) FROM job"), 0);
  // Her bean job may not become a script.
  auto r = Call(
      "POST", "/api/v1/jobs", alice,
      json{{"group_id", g}, {"description", "bean"}, {"schedule_type", "NONE"}, {"handler", "h"}}.dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  const int bean = r.body.at("id");
  expect_forbidden(Call("PUT", fmt::format("/api/v1/jobs/{}", bean), alice,
                        json{{"glue_type", "GLUE_PYTHON"}, {"glue_source", "print(1)"}}.dump()),
                   "GLUE_PYTHON");
  EXPECT_EQ(Call("PUT", fmt::format("/api/v1/jobs/{}", bean), alice, json{{"param", "p"}}.dump()).status,
            200);
  // An admin's script job in her group: she may run it, start and stop it, not change or copy it.
  r = Call("POST", "/api/v1/jobs", script.dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  const int job = r.body.at("id");
  const auto path = fmt::format("/api/v1/jobs/{}", job);
  for (const auto& change : {json{{"param", "x"}}, json{{"glue_source", "rm -rf /"}},
                             json{{"glue_type", "BEAN"}, {"handler", "h"}}}) {
    expect_forbidden(Call("PUT", path, alice, change.dump()), "GLUE_SHELL");
  }
  expect_forbidden(Call("POST", path + "/copy", alice), "GLUE_SHELL");
  EXPECT_EQ(Call("POST", path + "/start", alice).status, 200);
  EXPECT_EQ(Call("POST", path + "/stop", alice).status, 200);
  EXPECT_EQ(Call("POST", path + "/trigger", alice, json{{"param", "p"}}.dump()).status, 202);
  EXPECT_EQ(Exec(fmt::format("SELECT glue_source || '|' || param FROM job WHERE id = {}", job))[0][0]
                .as<std::string>(),
            "echo hello|")
      << "nothing of hers was saved";
  EXPECT_EQ(Call("PUT", path, json{{"glue_source", "echo two"}}.dump()).status, 200) << "an admin may";
  EXPECT_EQ(Count("SELECT count(*) FROM job"), 2);
  EXPECT_EQ(Call("DELETE", path, alice).status, 200);
}

// Issue 24, item 4: a global ADMIN may allow script jobs in a group (allow_scripts,
// sql/022_group_scripts.sql); then the group's DEVELOPERs (and its ADMINs) may create, change and copy them
// there, an OPERATOR still may not, nobody may move one into a group that does not allow them, and only a
// global ADMIN changes the switch.
TEST_F(ConsoleTest, ADevelopersScriptJobsNeedAGroupWhereAnAdminAllowedScripts) {
  const int open = CreateGroup("scripts-app");
  const int closed = CreateGroup("beans-app");
  CreateUserWithRoles("dev", {{open, "DEVELOPER"}, {closed, "DEVELOPER"}});
  CreateUserWithRoles("ops", {{open, "OPERATOR"}});
  CreateUserWithRoles("lead", {{open, "ADMIN"}});
  const auto dev = Login("dev", kUserPassword);
  const auto ops = Login("ops", kUserPassword);
  const auto lead = Login("lead", kUserPassword);
  const auto script = [](int group) {
    return json{{"group_id", group},
                {"description", "script"},
                {"schedule_type", "NONE"},
                {"glue_type", "GLUE_SHELL"},
                {"glue_source", "echo hi"}}
        .dump();
  };
  // Off by default: as before, only a global ADMIN.
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/groups/{}", open)).body.at("allow_scripts"), false);
  auto r = Call("POST", "/api/v1/jobs", dev, script(open));
  EXPECT_EQ(r.status, 403) << r.body.dump();
  EXPECT_THAT(r.body.dump(), HasSubstr("scripts are not allowed"));
  // The group's own ADMIN may not turn it on; a global ADMIN may.
  r = Call("PUT", fmt::format("/api/v1/groups/{}", open), lead, json{{"allow_scripts", true}}.dump());
  EXPECT_EQ(r.status, 403) << r.body.dump();
  EXPECT_EQ(Fields(r.body), std::vector<std::string>{"allow_scripts"});
  r = Call("PUT", fmt::format("/api/v1/groups/{}", open), json{{"allow_scripts", true}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body.at("allow_scripts"), true);
  EXPECT_EQ(Call("PUT", fmt::format("/api/v1/groups/{}", open), json{{"allow_scripts", "yes"}}.dump()).status,
            400);

  // Now its DEVELOPER writes script jobs there, and its ADMIN too; its OPERATOR still may not.
  r = Call("POST", "/api/v1/jobs", dev, script(open));
  ASSERT_EQ(r.status, 201) << r.body.dump();
  const int job = r.body.at("id");
  EXPECT_EQ(
      Call("PUT", fmt::format("/api/v1/jobs/{}", job), dev, json{{"glue_source", "echo two"}}.dump()).status,
      200);
  EXPECT_EQ(Call("POST", fmt::format("/api/v1/jobs/{}/copy", job), dev).status, 201);
  EXPECT_EQ(Call("PUT", fmt::format("/api/v1/jobs/{}", job), lead, json{{"glue_source", "echo three"}}.dump())
                .status,
            200);
  r = Call("POST", "/api/v1/jobs", ops, script(open));
  EXPECT_EQ(r.status, 403) << r.body.dump();
  // Not into a group that does not allow them, whether made there or moved there.
  r = Call("POST", "/api/v1/jobs", dev, script(closed));
  EXPECT_EQ(r.status, 403) << r.body.dump();
  EXPECT_EQ(r.body.at("errors")[0].at("params"), (json{{"role", "ADMIN"}, {"group_id", closed}}));
  r = Call("PUT", fmt::format("/api/v1/jobs/{}", job), dev, json{{"group_id", closed}}.dump());
  EXPECT_EQ(r.status, 403) << r.body.dump();
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM job WHERE group_id = {}", closed)), 0);

  // Turned off again, the jobs stay and only a global ADMIN changes them.
  ASSERT_EQ(Call("PUT", fmt::format("/api/v1/groups/{}", open), json{{"allow_scripts", false}}.dump()).status,
            200);
  EXPECT_EQ(
      Call("PUT", fmt::format("/api/v1/jobs/{}", job), dev, json{{"glue_source", "echo four"}}.dump()).status,
      403);
  EXPECT_EQ(Exec(fmt::format("SELECT glue_source FROM job WHERE id = {}", job))[0][0].as<std::string>(),
            "echo three");
}

// Security review (issue 21), finding 6: the health check's details are for administrators (the test of
// the status alone, and of the database's error, is
// ApiTest.HealthShowsTheStatusToAnyoneAndTheDetailsToAnAdminOnly).
TEST_F(ConsoleTest, HealthDetailsNeedAnAdminsSessionOrToken) {
  EXPECT_EQ(Call("GET", "/api/v1/health", Caller{}).body, (json{{"status", "ok"}}));
  EXPECT_EQ(Call("GET", "/api/v1/health").body.value("node_id", ""), "node-a");
  CreateUser("alice", {});
  EXPECT_EQ(Call("GET", "/api/v1/health", Login("alice", kUserPassword)).body, (json{{"status", "ok"}}));
  EXPECT_EQ(Call("GET", "/api/v1/health", Caller{.cookie = "forged"}).body, (json{{"status", "ok"}}))
      << "bad credentials are not an error here: the status, as for anyone";
}

TEST_F(ConsoleTest, AuditRecordsWhoChangedWhatWithoutSecrets) {
  const int g = CreateGroup("sample-app");
  Call("PUT", fmt::format("/api/v1/groups/{}", g), json{{"access_token", "group-secret-token"}}.dump());
  const int job = CreateJob(g);
  Call("PUT", fmt::format("/api/v1/jobs/{}", job), json{{"description", "renamed"}}.dump());
  CreateUser("alice", {g});
  Call("POST", "/api/v1/tokens", json{{"name", "ci"}}.dump());
  const auto all =
      Exec("SELECT string_agg(coalesce(before::text, '') || coalesce(after::text, ''), ' ') FROM audit_log")
          [0][0]
              .as<std::string>();
  EXPECT_THAT(all, ::testing::Not(HasSubstr("group-secret-token")));
  EXPECT_THAT(all, ::testing::Not(HasSubstr(kUserPassword)));
  EXPECT_THAT(all, ::testing::Not(HasSubstr("argon2")));
  EXPECT_THAT(all, ::testing::Not(HasSubstr("cwt_")));
  auto r = Call("GET", fmt::format("/api/v1/audit?entity=job&entity_id={}", job));
  ASSERT_EQ(r.body.at("total"), 2);
  const auto& update = r.body.at("items")[0];
  EXPECT_EQ(update.at("action"), "job.update");
  EXPECT_EQ(update.at("username"), "admin");
  EXPECT_EQ(update.at("before").at("description"), "d");
  EXPECT_EQ(update.at("after").at("description"), "renamed");
  EXPECT_EQ(update.at("at_ms"), kT0);
  EXPECT_EQ(update.at("via"), "session");
  r = Call("GET", "/api/v1/audit?action=user.login");
  EXPECT_EQ(r.body.at("total"), 1);
  EXPECT_EQ(r.body.at("items")[0].at("via"), "password");
  // An API token's change names the token (issue 24: who did what, through which login).
  r = Call("POST", "/api/v1/tokens", json{{"name", "deploy bot"}, {"scope", "write"}}.dump());
  ASSERT_EQ(r.status, 201);
  const int token_id = r.body.at("id");
  const Caller bot{.bearer = r.body.at("token")};
  ASSERT_EQ(Call("PUT", fmt::format("/api/v1/jobs/{}", job), bot, json{{"description", "by the bot"}}.dump())
                .status,
            200);
  r = Call("GET", fmt::format("/api/v1/audit?entity=job&entity_id={}", job));
  ASSERT_EQ(r.body.at("total"), 3);
  EXPECT_EQ(r.body.at("items")[0].at("via"), fmt::format("token {} (deploy bot)", token_id));
  EXPECT_EQ(r.body.at("items")[0].at("username"), "admin");
}

TEST_F(ConsoleTest, PagesAreServedWithTheSecurityHeaders) {
  auto r = client_->Get("/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_THAT(r->get_header_value("Content-Type"), HasSubstr("text/html"));
  EXPECT_THAT(r->get_header_value("Content-Security-Policy"), HasSubstr("default-src 'self'"));
  EXPECT_THAT(r->get_header_value("Content-Security-Policy"), ::testing::Not(HasSubstr("unsafe-inline")));
  EXPECT_EQ(r->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(r->get_header_value("Referrer-Policy"), "no-referrer");
  EXPECT_EQ(r->get_header_value("X-Frame-Options"), "DENY");
  EXPECT_THAT(r->body, ::testing::Not(HasSubstr("<script>"))) << "no inline script";
  r = client_->Get("/js/app.js");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_THAT(r->get_header_value("Content-Type"), HasSubstr("text/javascript"));
  for (const char* path :
       {"/nothing.js", "/js/../index.html", "/.hidden", "/js//app.js", "/vendor/%2e%2e/x"}) {
    r = client_->Get(path);
    ASSERT_TRUE(r);
    EXPECT_GE(r->status, 400) << path;
    EXPECT_LT(r->status, 500) << path;
  }
  r = client_->Get("/api/v1/nothing");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_THAT(r->body, HasSubstr("error")) << "API paths never fall through to the pages";
}

// --- every route: documented, and denying what it must -------------------------------------------------

// Every registered /api/v1 route appears in web/openapi.json with its method, and nothing more.
TEST_F(ConsoleTest, EveryRouteIsInTheOpenApiDocument) {
  const auto r = Call("GET", "/api/v1/openapi.json", Caller{});
  ASSERT_EQ(r.status, 200);
  const auto& paths = r.body.at("paths");
  // "<method> <path> <scope>": the scope an API token needs, "" for a public route.
  std::set<std::string> documented;
  for (const auto& [path, ops] : paths.items()) {
    for (const auto& [method, op] : ops.items()) {
      documented.insert(fmt::format("{} {} {}", method, path, op.value("x-cronwheel-scope", "")));
      EXPECT_TRUE(op.contains("responses")) << method << " " << path;
    }
  }
  std::set<std::string> served;
  for (const auto& route : console_->routes) {
    std::string m = route.method;
    std::transform(m.begin(), m.end(), m.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    served.insert(fmt::format("{} {} {}", m, route.path, route.scope));
  }
  EXPECT_GE(served.size(), 37u);
  EXPECT_EQ(served, documented);
}

// Every operation web/openapi.json lists is served: a request to it (each {parameter} as 1, no credentials,
// {} as the body of a POST or PUT) reaches a route, whatever the route answers then (401, 400, a 404 of its
// own), and never the HTTP server's answer to a request no route takes: 404 "no such resource" for a path,
// 405 for a method the path does not take. The table above lists what the routes were registered as; this
// asks the server as a client does, so a route registered under a pattern that does not match its own path,
// or behind another that takes its requests, fails here.
TEST_F(ConsoleTest, EveryDocumentedRouteIsServed) {
  const auto unrouted = [](const Reply& r) {
    return r.status == 405 || (r.status == 404 && r.body.is_object() &&
                               r.body.value("error", "").starts_with("no such resource: "));
  };
  // The server's own answers, as the check reads them.
  EXPECT_TRUE(unrouted(Call("GET", "/api/v1/no-such-route", Caller{})));
  EXPECT_TRUE(unrouted(Call("DELETE", "/api/v1/health", Caller{})));
  EXPECT_FALSE(unrouted(Call("GET", "/api/v1/jobs/999999", admin_)));  // a route's own 404

  const auto doc = Call("GET", "/api/v1/openapi.json", Caller{});
  ASSERT_EQ(doc.status, 200);
  int operations = 0;
  for (const auto& [path, ops] : doc.body.at("paths").items()) {
    std::string concrete;
    for (std::size_t i = 0; i < path.size(); ++i) {
      if (path[i] == '{') {
        i = path.find('}', i);
        concrete += '1';
      } else {
        concrete += path[i];
      }
    }
    for (const auto& [method, op] : ops.items()) {
      std::string m = method;
      std::transform(m.begin(), m.end(), m.begin(),
                     [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
      if (m != "GET" && m != "POST" && m != "PUT" && m != "DELETE") {
        ADD_FAILURE() << path << ": " << method << " is not a method this test sends";
        continue;
      }
      const auto r = Call(m, concrete, Caller{}, m == "POST" || m == "PUT" ? "{}" : "");
      EXPECT_FALSE(unrouted(r)) << m << " " << path << " is documented but not served: " << m << " "
                                << concrete << " answered " << r.status << " " << r.body.dump();
      ++operations;
    }
  }
  EXPECT_GE(operations, 70);
}

TEST_F(ConsoleTest, EveryRouteDeniesStrangersUsersOutsideTheirGroupsAndCookiesWithoutCsrf) {
  const int mine = CreateGroup("mine-app");
  const int other = CreateGroup("other-app");
  const int job = CreateJob(other);
  const auto log = AddRunningFire(job, other);
  const int alice_id = CreateUser("alice", {mine});
  const auto alice = Login("alice", kUserPassword);
  const int token_id = Call("POST", "/api/v1/tokens", json{{"name", "admin's"}}.dump()).body.at("id");
  const int channel =
      Call("POST", "/api/v1/alert-channels",
           json{{"name", "ops mail"}, {"kind", "EMAIL"}, {"target", "ops@example.com"}}.dump())
          .body.at("id");
  const int calendar =
      Call("POST", "/api/v1/calendars", json{{"name", "holidays"}, {"days", {"2026-12-25"}}}.dump())
          .body.at("id");
  const auto workflow_body =
      json{{"group_id", other}, {"name", "w"}, {"nodes", {{{"key", "a"}, {"job_id", job}}}}};
  const int workflow = Call("POST", "/api/v1/workflows", workflow_body.dump()).body.at("id");
  const std::int64_t run =
      Call("POST", fmt::format("/api/v1/workflows/{}/trigger", workflow), "").body.at("run_id");

  struct Case {
    std::string method;
    std::string path;      // the template, as registered
    std::string concrete;  // with ids of `other`'s resources
    std::string body;
    int stranger;  // 401, or 200 for public routes
    int user;      // alice (USER on `mine`): 403 admin-only, 404 outside her groups, 0 = allowed
  };
  const auto id = [](auto v) { return std::to_string(v); };
  const std::string job_body =
      json{{"group_id", other}, {"description", "d"}, {"schedule_type", "NONE"}, {"handler", "h"}}.dump();
  const std::vector<Case> cases = {
      {"GET", "/api/v1/health", "/api/v1/health", "", 200, 0},
      {"GET", "/api/v1/openapi.json", "/api/v1/openapi.json", "", 200, 0},
      {"POST", "/api/v1/auth/login", "/api/v1/auth/login", "{}", 400, 0},
      {"POST", "/api/v1/auth/logout", "/api/v1/auth/logout", "", 401, 0},
      {"POST", "/api/v1/auth/cli/authorize", "/api/v1/auth/cli/authorize", "{}", 401, 0},
      {"POST", "/api/v1/auth/cli/token", "/api/v1/auth/cli/token", "{}", 400, 0},
      {"GET", "/api/v1/auth/me", "/api/v1/auth/me", "", 401, 0},
      // Single sign-on: what the login page offers is public; a provider this admin does not have is 404.
      {"GET", "/api/v1/auth/providers", "/api/v1/auth/providers", "", 200, 0},
      {"GET", "/api/v1/auth/oidc/{name}/start", "/api/v1/auth/oidc/none/start", "", 404, 0},
      {"GET", "/api/v1/auth/oidc/{name}/callback", "/api/v1/auth/oidc/none/callback?code=c&state=s", "", 404,
       0},
      {"GET", "/api/v1/auth/policy", "/api/v1/auth/policy", "", 401, 403},
      {"PUT", "/api/v1/auth/policy", "/api/v1/auth/policy", R"({"require_sso":false})", 401, 403},
      {"GET", "/api/v1/groups", "/api/v1/groups", "", 401, 0},
      {"POST", "/api/v1/groups", "/api/v1/groups", R"({"app_name":"new-app","title":"t"})", 401, 403},
      {"GET", "/api/v1/groups/{id}", "/api/v1/groups/" + id(other), "", 401, 404},
      {"PUT", "/api/v1/groups/{id}", "/api/v1/groups/" + id(other), R"({"title":"x"})", 401, 404},
      {"DELETE", "/api/v1/groups/{id}", "/api/v1/groups/" + id(other), "", 401, 403},
      {"POST", "/api/v1/groups/{id}/drain", "/api/v1/groups/" + id(other) + "/drain",
       R"({"address":"http://127.0.0.1:9999/"})", 401, 404},
      {"GET", "/api/v1/jobs", "/api/v1/jobs", "", 401, 0},
      {"GET", "/api/v1/tags", "/api/v1/tags", "", 401, 0},
      {"POST", "/api/v1/jobs", "/api/v1/jobs", job_body, 401, 403},
      // Alice may use the route: the other group's job in her request is not found, and nothing changes.
      {"POST", "/api/v1/jobs/bulk", "/api/v1/jobs/bulk", json{{"action", "STOP"}, {"job_ids", {job}}}.dump(),
       401, 0},
      {"GET", "/api/v1/jobs/{id}", "/api/v1/jobs/" + id(job), "", 401, 404},
      {"PUT", "/api/v1/jobs/{id}", "/api/v1/jobs/" + id(job), R"({"param":"x"})", 401, 404},
      {"DELETE", "/api/v1/jobs/{id}", "/api/v1/jobs/" + id(job), "", 401, 404},
      {"POST", "/api/v1/jobs/{id}/start", "/api/v1/jobs/" + id(job) + "/start", "", 401, 404},
      {"POST", "/api/v1/jobs/{id}/stop", "/api/v1/jobs/" + id(job) + "/stop", "", 401, 404},
      {"POST", "/api/v1/jobs/{id}/trigger", "/api/v1/jobs/" + id(job) + "/trigger", "", 401, 404},
      {"POST", "/api/v1/jobs/{id}/run-once", "/api/v1/jobs/" + id(job) + "/run-once", R"({"delay_ms":60000})",
       401, 404},
      {"GET", "/api/v1/jobs/{id}/run-once", "/api/v1/jobs/" + id(job) + "/run-once", "", 401, 404},
      {"DELETE", "/api/v1/jobs/{id}/run-once/{run_id}", "/api/v1/jobs/" + id(job) + "/run-once/1", "", 401,
       404},
      {"POST", "/api/v1/jobs/{id}/copy", "/api/v1/jobs/" + id(job) + "/copy", "", 401, 404},
      {"GET", "/api/v1/jobs/{id}/glue", "/api/v1/jobs/" + id(job) + "/glue", "", 401, 404},
      {"GET", "/api/v1/logs", "/api/v1/logs", "", 401, 0},
      {"GET", "/api/v1/logs/{id}", "/api/v1/logs/" + id(log), "", 401, 404},
      {"GET", "/api/v1/logs/{id}/output", "/api/v1/logs/" + id(log) + "/output", "", 401, 404},
      {"POST", "/api/v1/logs/{id}/kill", "/api/v1/logs/" + id(log) + "/kill", "", 401, 404},
      {"POST", "/api/v1/logs/clear", "/api/v1/logs/clear", json{{"group_id", other}, {"keep_last", 0}}.dump(),
       401, 404},
      {"GET", "/api/v1/dashboard", "/api/v1/dashboard", "", 401, 0},
      {"POST", "/api/v1/schedules/preview", "/api/v1/schedules/preview", R"({"schedule_type":"NONE"})", 401,
       0},
      {"GET", "/api/v1/users", "/api/v1/users", "", 401, 403},
      {"POST", "/api/v1/users", "/api/v1/users", R"({"username":"mallory","password":"0123456789"})", 401,
       403},
      {"GET", "/api/v1/users/{id}", "/api/v1/users/" + id(alice_id), "", 401, 403},
      {"PUT", "/api/v1/users/{id}", "/api/v1/users/" + id(alice_id), R"({"role":"ADMIN"})", 401, 403},
      {"DELETE", "/api/v1/users/{id}", "/api/v1/users/" + id(alice_id), "", 401, 403},
      {"PUT", "/api/v1/users/{id}/identity", "/api/v1/users/" + id(alice_id) + "/identity",
       R"({"source":"ldap","subject":"x"})", 401, 403},
      {"DELETE", "/api/v1/users/{id}/identity", "/api/v1/users/" + id(alice_id) + "/identity", "", 401, 403},
      {"POST", "/api/v1/users/me/password", "/api/v1/users/me/password", "{}", 401, 0},
      {"GET", "/api/v1/tokens", "/api/v1/tokens?all=true", "", 401, 403},
      {"POST", "/api/v1/tokens", "/api/v1/tokens", R"({"name":"t"})", 401, 0},
      {"DELETE", "/api/v1/tokens/{id}", "/api/v1/tokens/" + id(token_id), "", 401, 404},
      {"GET", "/api/v1/audit", "/api/v1/audit", "", 401, 403},
      {"GET", "/api/v1/alert-channels", "/api/v1/alert-channels", "", 401, 0},
      {"GET", "/api/v1/alerts", "/api/v1/alerts", "", 401, 0},
      {"POST", "/api/v1/alert-channels", "/api/v1/alert-channels",
       R"({"name":"m","kind":"EMAIL","target":"mallory@example.com"})", 401, 403},
      {"GET", "/api/v1/alert-channels/{id}", "/api/v1/alert-channels/" + id(channel), "", 401, 0},
      {"PUT", "/api/v1/alert-channels/{id}", "/api/v1/alert-channels/" + id(channel),
       R"({"target":"mallory@example.com"})", 401, 403},
      {"DELETE", "/api/v1/alert-channels/{id}", "/api/v1/alert-channels/" + id(channel), "", 401, 403},
      {"POST", "/api/v1/alert-channels/{id}/test", "/api/v1/alert-channels/" + id(channel) + "/test", "", 401,
       403},
      {"GET", "/api/v1/calendars", "/api/v1/calendars", "", 401, 0},
      {"POST", "/api/v1/calendars", "/api/v1/calendars", R"({"name":"mallory's"})", 401, 403},
      {"GET", "/api/v1/calendars/{id}", "/api/v1/calendars/" + id(calendar), "", 401, 0},
      {"PUT", "/api/v1/calendars/{id}", "/api/v1/calendars/" + id(calendar), R"({"days":[]})", 401, 403},
      {"DELETE", "/api/v1/calendars/{id}", "/api/v1/calendars/" + id(calendar), "", 401, 403},
      {"GET", "/api/v1/workflows", "/api/v1/workflows", "", 401, 0},
      // Alice may use the route: the other group in her body is refused as one that does not exist.
      {"POST", "/api/v1/workflows", "/api/v1/workflows", workflow_body.dump(), 401, 400},
      {"GET", "/api/v1/workflows/{id}", "/api/v1/workflows/" + id(workflow), "", 401, 404},
      {"PUT", "/api/v1/workflows/{id}", "/api/v1/workflows/" + id(workflow), R"({"name":"x"})", 401, 404},
      {"DELETE", "/api/v1/workflows/{id}", "/api/v1/workflows/" + id(workflow), "", 401, 404},
      {"POST", "/api/v1/workflows/{id}/trigger", "/api/v1/workflows/" + id(workflow) + "/trigger", "", 401,
       404},
      {"GET", "/api/v1/workflows/{id}/runs", "/api/v1/workflows/" + id(workflow) + "/runs", "", 401, 404},
      {"GET", "/api/v1/workflow-runs/{id}", "/api/v1/workflow-runs/" + id(run), "", 401, 404},
      {"POST", "/api/v1/workflow-runs/{id}/kill", "/api/v1/workflow-runs/" + id(run) + "/kill", "", 401, 404},
      {"POST", "/api/v1/workflow-runs/{id}/nodes/{key}/rerun",
       "/api/v1/workflow-runs/" + id(run) + "/nodes/a/rerun", "", 401, 404},
  };
  // The walk covers every registered route: a new route must be added here.
  std::set<std::string> walked;
  std::set<std::string> served;
  for (const auto& c : cases)
    walked.insert(c.method + " " + c.path);
  for (const auto& route : console_->routes)
    served.insert(route.method + " " + route.path);
  EXPECT_EQ(walked, served);

  const auto changes = [this] {
    return Exec(
               "SELECT (SELECT count(*) FROM job) || '/' || (SELECT count(*) FROM job_group) || '/' ||"
               " (SELECT count(*) FROM app_user) || '/' || (SELECT count(*) FROM api_token) || '/' ||"
               " (SELECT count(*) FROM job_log) || '/' || (SELECT count(*) FROM run_once) || '/' ||"
               " (SELECT string_agg(target, ',') FROM alert_channel) || '/' ||"
               " (SELECT count(*) FROM workflow) || '/' || (SELECT count(*) FROM workflow_run) || '/' ||"
               " (SELECT string_agg(name || state, ',') FROM workflow, workflow_run) || '/' ||"
               " (SELECT string_agg(role, ',' ORDER BY id) FROM app_user)")[0][0]
        .as<std::string>();
  };
  const auto before = changes();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.method + " " + c.concrete);
    // Strangers.
    const auto anon = Call(c.method, c.concrete, Caller{}, c.body);
    if (c.stranger == 401) {
      EXPECT_EQ(anon.status, 401);
    } else {
      EXPECT_NE(anon.status, 401);
    }
    if (c.stranger != 401) continue;
    // A cookie without the CSRF token on a state-changing method: 403 before anything happens.
    if (c.method != "GET") {
      EXPECT_EQ(Call(c.method, c.concrete, admin_, c.body, false).status, 403);
    }
    // Alice, a USER on `mine`, on `other`'s resources and admin-only routes.
    if (c.user != 0) {
      EXPECT_EQ(Call(c.method, c.concrete, alice, c.body).status, c.user);
    }
  }
  EXPECT_EQ(changes(), before) << "no denied request changed anything";
  // What alice may list holds nothing of `other`.
  EXPECT_EQ(Call("GET", "/api/v1/jobs", alice).body.at("total"), 0);
  EXPECT_EQ(Call("GET", "/api/v1/logs", alice).body.at("total"), 0);
  EXPECT_EQ(Call("GET", "/api/v1/groups", alice).body.at("items").size(), 1u);
  EXPECT_EQ(Call("GET", "/api/v1/tokens", alice).body.at("items").size(), 0u);
  // A USER sees a channel's name (to attach it), never where it sends.
  const auto channels = Call("GET", "/api/v1/alert-channels", alice).body.at("items");
  ASSERT_EQ(channels.size(), 1u);
  EXPECT_EQ(channels[0].at("name"), "ops mail");
  EXPECT_FALSE(channels[0].contains("target")) << channels.dump();
  EXPECT_FALSE(Call("GET", "/api/v1/alert-channels/" + id(channel), alice).body.contains("target"));
}

// Issue 21, item 6, and issue 24, item 4: the access rule of admin/api/server.hpp, checked on random callers
// and objects. Random users (ADMINs, and USERs with a random role, or none, in each group) call every
// registered REST route on random
// groups, jobs (in random groups, with child jobs in others, some of them scripts), fires, users and
// tokens, with random bodies that name such objects; each answer is checked against the rule, worked out
// from the database just before the call:
//  * a resource the caller may not see answers 404, as one that does not exist (a child job in a job body
//    too: 400 "job N not found" on child_job_ids, or 409 on a copy; a child needs OPERATOR in its group);
//    one it sees with a role less than the route needs (VIEWER reads, OPERATOR runs, DEVELOPER writes,
//    ADMIN changes the group) answers 403; an ADMIN-only route answers 403 to a USER, and so does creating
//    or changing a script job; a route that needs a caller answers 401 to none;
//  * nothing the rule forbids is ever a 2xx, and a list holds only what the caller may see.
// Deterministic: the seed is CRONWHEEL_TEST_SEED or a fixed one, and every failure names it and the call.
TEST_F(ConsoleTest, EveryRouteAnswersRandomCallersByTheAccessRule) {
  const char* seed_env = std::getenv("CRONWHEEL_TEST_SEED");  // NOLINT(concurrency-mt-unsafe): one thread
  const std::uint32_t seed =
      seed_env != nullptr ? static_cast<std::uint32_t>(std::stoul(seed_env)) : 20261125u;
  SCOPED_TRACE(fmt::format("seed {} (CRONWHEEL_TEST_SEED={} repeats this run)", seed, seed));
  std::mt19937 rng(seed);
  const auto pick = [&rng](auto n) {
    return static_cast<decltype(n)>(rng() % static_cast<std::uint32_t>(n));
  };
  const auto coin = [&rng](int in) { return rng() % static_cast<std::uint32_t>(in) == 0; };
  const auto id = [](auto v) { return std::to_string(v); };

  // --- the world ---------------------------------------------------------------------------------------
  std::vector<int> groups;
  groups.reserve(4);
  for (int i = 0; i < 4; ++i)
    groups.push_back(CreateGroup(fmt::format("world-{}-app", i)));
  struct Actor {
    std::string name;
    int user_id = 0;
    bool admin = false;
    Caller caller;     // a Bearer token: the cookie's CSRF rule is walked by the test above
    int token_id = 0;  // never deleted here
  };
  std::vector<Actor> actors;
  const auto add_actor = [&](const std::string& name, bool admin, const std::map<int, std::string>& roles) {
    Actor a{.name = name, .admin = admin};
    a.user_id = name == "admin" ? Call("GET", "/api/v1/auth/me").body.at("user").at("id").get<int>()
                : admin         ? CreateUser(name, {}, "ADMIN")
                                : CreateUserWithRoles(name, roles);
    const auto session = name == "admin" ? admin_ : Login(name, kUserPassword);
    // Scope admin: the token may do all its user may, as the user's session does.
    const auto r =
        Call("POST", "/api/v1/tokens", session, json{{"name", "caller"}, {"scope", "admin"}}.dump());
    EXPECT_EQ(r.status, 201) << r.body.dump();
    a.caller = Caller{.bearer = r.body.value("token", "")};
    a.token_id = r.body.value("id", 0);
    // Spare tokens, for the DELETE route.
    Call("POST", "/api/v1/tokens", session, json{{"name", "spare"}}.dump());
    actors.push_back(a);
  };
  add_actor("admin", true, {});
  add_actor("ada", true, {});
  const std::vector<std::string> kRoles = {"VIEWER", "OPERATOR", "DEVELOPER", "ADMIN"};
  for (int u = 0; u < 3; ++u) {
    std::map<int, std::string> roles;  // a role in about four groups of five
    for (const int g : groups) {
      if (!coin(5)) roles[g] = kRoles[pick(kRoles.size())];
    }
    add_actor(fmt::format("user{}", u), false, roles);
  }
  actors.push_back(Actor{.name = "nobody"});  // no credentials
  std::vector<int> victims;                   // users the admin routes may change and delete
  victims.reserve(3);
  for (int v = 0; v < 3; ++v)
    victims.push_back(CreateUser(fmt::format("victim{}", v), {groups[pick(groups.size())]}));
  for (int j = 0; j < 12; ++j) {
    const int job = CreateJob(groups[pick(groups.size())], fmt::format("world job {}", j));
    if (coin(3))
      Exec(fmt::format("UPDATE job SET glue_type = 'GLUE_SHELL', glue_source = 'echo' WHERE id = {}", job));
    AddRunningFire(job, Count(fmt::format("SELECT group_id FROM job WHERE id = {}", job)));
  }
  // Child links as an admin may make them, across groups.
  const auto all_ids = [this](const std::string& sql) {
    std::vector<std::int64_t> out;
    for (const auto& r : Exec(sql))
      out.push_back(r[0].as<std::int64_t>());
    return out;
  };
  const auto jobs = all_ids("SELECT id FROM job ORDER BY id");
  for (const auto job : jobs) {
    const auto child = jobs[pick(jobs.size())];
    if (coin(2) && child != job)
      Call("PUT", "/api/v1/jobs/" + id(job), json{{"child_job_ids", {child}}}.dump());
  }

  // --- what the database says, just before a call --------------------------------------------------------
  const auto group_of_job = [this](std::int64_t job) -> std::optional<int> {
    const auto r = Exec(fmt::format("SELECT group_id FROM job WHERE id = {}", job));
    return r.empty() ? std::nullopt : std::optional(r[0][0].as<int>());
  };
  const auto group_of_log = [this](std::int64_t log) -> std::optional<int> {
    const auto r = Exec(fmt::format("SELECT group_id FROM job_log WHERE id = {}", log));
    return r.empty() ? std::nullopt : std::optional(r[0][0].as<int>());
  };
  const auto group_exists = [this](std::int64_t g) {
    return Count(fmt::format("SELECT count(*) FROM job_group WHERE id = {}", g)) == 1;
  };
  // The caller's role in `group` as a rank (VIEWER 0 ... ADMIN 3; a global ADMIN 3), -1 for none.
  const auto role_of = [this](const Actor& a, std::optional<int> group) -> int {
    if (!group) return -1;
    if (a.admin) return 3;
    const auto r = Exec(fmt::format(
        "SELECT array_position(ARRAY['VIEWER','OPERATOR','DEVELOPER','ADMIN'], role) - 1 FROM app_user_group"
        " WHERE user_id = {} AND group_id = {}",
        a.user_id, *group));
    return r.empty() ? -1 : r[0][0].as<int>();
  };
  const auto may_see = [&](const Actor& a, std::optional<int> group) { return role_of(a, group) >= 0; };
  const auto is_script = [this](std::int64_t job) {
    return Count(fmt::format("SELECT count(*) FROM job WHERE id = {} AND glue_type <> 'BEAN'", job)) == 1;
  };
  const auto children_of = [&](std::int64_t job) {
    return all_ids(fmt::format("SELECT unnest(child_job_ids) FROM job WHERE id = {}", job));
  };
  // An id of what the query lists, or one that nothing has.
  const auto some = [&](const std::string& sql) {
    const auto ids = all_ids(sql);
    if (ids.empty() || coin(6)) return std::int64_t{900'000} + pick(1000);
    return ids[pick(ids.size())];
  };
  const auto some_group = [&] { return some("SELECT id FROM job_group ORDER BY id"); };
  const auto some_job = [&] { return some("SELECT id FROM job ORDER BY id"); };
  const auto some_log = [&] { return some("SELECT id FROM job_log ORDER BY id"); };

  // --- one call --------------------------------------------------------------------------------------------
  struct Expect {
    std::set<int> statuses;
    std::function<void(const Reply&)> also = nullptr;  // more checks of an allowed answer
  };
  struct Request {
    std::string target;
    std::string body;
    Expect expect;
  };
  const auto only = [](std::initializer_list<int> s) { return Expect{.statuses = s}; };
  // Roles as ranks: what a route needs in the group it acts on.
  constexpr int kOperate = 1;
  constexpr int kWrite = 2;
  constexpr int kGroupAdmin = 3;
  // What a route on a resource of `group` answers: 404 where the caller has no role there, 403 where its
  // role is less than `needed`, else `allowed`.
  const auto gate = [&](const Actor& a, std::optional<int> group, int needed, Expect allowed) {
    const int role = role_of(a, group);
    if (role < 0) return only({404});
    if (role < needed) return only({403});
    return allowed;
  };
  // A list answer holds only what the caller may see: `group_key` of each item (a group's own id when "id").
  const auto visible_items = [&](const Actor& a, const std::string& key, const std::string& group_key) {
    return Expect{.statuses = {200}, .also = [&, a, key, group_key](const Reply& r) {
                    for (const auto& item : r.body.at(key)) {
                      EXPECT_TRUE(may_see(a, item.at(group_key).get<int>())) << item.dump();
                    }
                  }};
  };
  // The child ids a job body names that the caller may not name: another group's, or no job's.
  const auto hidden_children = [&](const Actor& a, const json& body, const std::vector<std::int64_t>& kept) {
    std::vector<std::int64_t> out;
    for (const auto& c : body.value("child_job_ids", json::array())) {
      const auto child = c.get<std::int64_t>();
      if (std::find(kept.begin(), kept.end(), child) != kept.end()) continue;
      if (role_of(a, group_of_job(child)) < kOperate) out.push_back(child);
    }
    return out;
  };
  const auto child_not_found = [](std::int64_t child, int status) {
    return Expect{
        .statuses = {status}, .also = [child](const Reply& r) {
          bool named = false;
          for (const auto& e : r.body.value("errors", json::array())) {
            named = named || (e.value("field", "") == "child_job_ids" && e.value("code", "") == "not_found" &&
                              e.value("message", "") == fmt::format("job {} not found", child));
          }
          EXPECT_TRUE(named) << "child " << child << " not reported as not found: " << r.body.dump();
        }};
  };
  // A group of the caller's, mostly (so that the checks past the group's are reached), else any.
  const auto group_for = [&](const Actor& a) -> std::int64_t {
    const auto mine = all_ids(fmt::format(
        "SELECT g.id FROM job_group g, app_user u WHERE u.id = {} AND (u.role = 'ADMIN' OR g.id IN (SELECT "
        "group_id FROM app_user_group WHERE user_id = u.id)) ORDER BY g.id",
        a.user_id));
    return mine.empty() || coin(4) ? some_group() : mine[pick(mine.size())];
  };
  const auto job_body = [&](const Actor& a, bool create) {
    json body = json::object();
    if (create || coin(3)) {
      body["group_id"] = group_for(a);
      // A job's group in its tags: GET /api/v1/tags shows a caller only tags of groups it may see.
      body["tags"] = {fmt::format("g{}", body["group_id"].get<int>())};
    }
    if (create) {
      body["description"] = "property";
      body["schedule_type"] = "NONE";
      body["handler"] = "h";
    }
    if (!coin(3)) {
      json children = json::array();
      for (int i = 0, n = 1 + static_cast<int>(pick(2)); i < n; ++i)
        children.push_back(some_job());
      body["child_job_ids"] = children;
    }
    if (coin(4)) {
      body["glue_type"] = "GLUE_SHELL";
      body["glue_source"] = "echo";
    } else if (!create && coin(4)) {
      body["param"] = "p";
    }
    return body;
  };
  std::map<std::string, std::function<Request(const Actor&)>> routes;
  const auto admin_only = [&](const Actor& a, Expect allowed) {
    return a.admin ? std::move(allowed) : only({403});
  };
  routes["GET /api/v1/health"] = [&](const Actor& a) {
    return Request{"/api/v1/health", "", Expect{.statuses = {200}, .also = [a](const Reply& r) {
                                                  EXPECT_EQ(r.body.contains("node_id"), a.admin)
                                                      << r.body.dump();
                                                }}};
  };
  routes["GET /api/v1/openapi.json"] = [&](const Actor&) {
    return Request{"/api/v1/openapi.json", "", only({200})};
  };
  routes["POST /api/v1/auth/login"] = [&](const Actor& a) {
    return Request{"/api/v1/auth/login", json{{"username", a.name}, {"password", "wrong-password"}}.dump(),
                   only({401, 429})};
  };
  routes["POST /api/v1/auth/logout"] = [&](const Actor&) {
    return Request{"/api/v1/auth/logout", "", only({200})};
  };
  routes["GET /api/v1/auth/providers"] = [&](const Actor&) {
    return Request{"/api/v1/auth/providers", "", only({200})};
  };
  routes["GET /api/v1/auth/oidc/{name}/start"] = [&](const Actor&) {
    return Request{"/api/v1/auth/oidc/none/start", "", only({404})};
  };
  routes["GET /api/v1/auth/oidc/{name}/callback"] = [&](const Actor&) {
    return Request{"/api/v1/auth/oidc/none/callback?code=c&state=s", "", only({404})};
  };
  routes["GET /api/v1/auth/policy"] = [&](const Actor& a) {
    return Request{"/api/v1/auth/policy", "", admin_only(a, only({200}))};
  };
  // Without single sign-on configured, requiring it is refused and turning it off changes nothing.
  routes["PUT /api/v1/auth/policy"] = [&](const Actor& a) {
    return Request{"/api/v1/auth/policy", json{{"require_sso", a.admin && a.user_id % 2 == 0}}.dump(),
                   admin_only(a, only({200, 400}))};
  };
  // Approving the CLI's login is a console session's (the walk's callers hold API tokens); trading a code
  // is anyone's, and a code of nothing is refused.
  routes["POST /api/v1/auth/cli/authorize"] = [&](const Actor&) {
    return Request{
        "/api/v1/auth/cli/authorize",
        json{{"port", 9}, {"state", "s"}, {"code_challenge", std::string(43, 'c')}, {"name", "n"}}.dump(),
        only({403})};
  };
  routes["POST /api/v1/auth/cli/token"] = [&](const Actor&) {
    return Request{"/api/v1/auth/cli/token",
                   json{{"code", fmt::format("c{}", rng())}, {"code_verifier", std::string(43, 'v')}}.dump(),
                   only({400})};
  };
  routes["GET /api/v1/auth/me"] = [&](const Actor& a) {
    return Request{"/api/v1/auth/me", "", Expect{.statuses = {200}, .also = [a](const Reply& r) {
                                                   EXPECT_EQ(r.body.at("user").at("id"), a.user_id);
                                                 }}};
  };
  routes["GET /api/v1/groups"] = [&](const Actor& a) {
    return Request{"/api/v1/groups", "", visible_items(a, "items", "id")};
  };
  routes["GET /api/v1/tags"] = [&](const Actor& a) {
    return Request{"/api/v1/tags", "", Expect{.statuses = {200}, .also = [&, a](const Reply& r) {
                                                for (const auto& item : r.body.at("items")) {
                                                  const auto tag = item.at("tag").get<std::string>();
                                                  if (tag.starts_with("g")) {
                                                    EXPECT_TRUE(may_see(a, std::stoi(tag.substr(1)))) << tag;
                                                  }
                                                }
                                              }}};
  };
  routes["POST /api/v1/groups"] = [&](const Actor& a) {
    return Request{"/api/v1/groups",
                   json{{"app_name", fmt::format("made-{}-app", rng() % 1'000'000)}, {"title", "t"}}.dump(),
                   admin_only(a, only({201}))};
  };
  routes["GET /api/v1/groups/{id}"] = [&](const Actor& a) {
    const auto g = some_group();
    return Request{
        "/api/v1/groups/" + id(g), "",
        only({may_see(a, group_exists(g) ? std::optional(static_cast<int>(g)) : std::nullopt) ? 200 : 404})};
  };
  routes["PUT /api/v1/groups/{id}"] = [&](const Actor& a) {
    const auto g = some_group();
    // A group's ADMIN may rename it.
    return Request{"/api/v1/groups/" + id(g), R"({"title":"renamed"})",
                   group_exists(g) ? gate(a, static_cast<int>(g), kGroupAdmin, only({200})) : only({404})};
  };
  routes["DELETE /api/v1/groups/{id}"] = [&](const Actor& a) {
    const auto g = some_group();
    const bool empty = Count(fmt::format("SELECT count(*) FROM job WHERE group_id = {}", g)) == 0;
    return Request{"/api/v1/groups/" + id(g), "",
                   admin_only(a, only({!group_exists(g) ? 404
                                       : empty          ? 200
                                                        : 409}))};
  };
  routes["POST /api/v1/groups/{id}/drain"] = [&](const Actor& a) {
    const auto g = some_group();
    // No group here has that executor online: 400 naming it, for an admin.
    return Request{"/api/v1/groups/" + id(g) + "/drain", R"({"address":"http://127.0.0.1:9999/"})",
                   group_exists(g) ? gate(a, static_cast<int>(g), kGroupAdmin, only({400})) : only({404})};
  };
  routes["GET /api/v1/jobs"] = [&](const Actor& a) {
    return Request{coin(2) ? "/api/v1/jobs" : "/api/v1/jobs?group_id=" + id(some_group()), "",
                   visible_items(a, "items", "group_id")};
  };
  routes["POST /api/v1/jobs"] = [&](const Actor& a) {
    const auto body = job_body(a, true);
    const int g = body.at("group_id");
    Expect e = only({201});
    const auto hidden = hidden_children(a, body, {});
    if (!may_see(a, g) || role_of(a, g) < kWrite) {
      e = only({a.admin ? 400 : 403});
    } else if (!a.admin && body.contains("glue_type")) {
      e = only({403});
    } else if (!group_exists(g)) {
      e = only({400});
    } else if (!hidden.empty()) {
      e = child_not_found(hidden.front(), 400);
    }
    return Request{"/api/v1/jobs", body.dump(), e};
  };
  // What a change of job `job` may answer when the caller may see it: `body` over the stored job.
  const auto job_change = [&](const Actor& a, std::int64_t job, const json& body, bool copy) {
    const auto g =
        body.contains("group_id") ? std::optional(body.at("group_id").get<int>()) : group_of_job(job);
    // A copy is a new job: none of its children is kept from before.
    const auto kept = copy ? std::vector<std::int64_t>{} : children_of(job);
    const bool script = is_script(job) || body.contains("glue_type");
    json named = body;
    if (copy) named["child_job_ids"] = children_of(job);
    const auto hidden = hidden_children(a, named, kept);
    if (!copy && body.contains("group_id") && role_of(a, g) < kWrite) return only({a.admin ? 400 : 403});
    if (!a.admin && script) return only({403});
    if (!copy && body.contains("group_id") && !group_exists(*g)) return only({400});
    if (!hidden.empty()) return child_not_found(hidden.front(), copy ? 409 : 400);
    if (copy) return only({201});
    // Allowed; a child that is the job itself, or closes a cycle, is a 400 of its own kind.
    return Expect{.statuses = {200, 400}, .also = [](const Reply& r) {
                    if (r.status != 400) return;
                    for (const auto& e : r.body.at("errors"))
                      EXPECT_NE(e.value("code", ""), "not_found") << r.body.dump();
                  }};
  };
  // A route on one job, needing `needed` in the job's group.
  const auto on_job = [&](const std::string& suffix, const std::string& body, int needed,
                          const std::function<Expect(const Actor&, std::int64_t)>& allowed) {
    return [&, suffix, body, needed, allowed](const Actor& a) {
      const auto job = some_job();
      const auto g = group_of_job(job);
      return Request{"/api/v1/jobs/" + id(job) + suffix, body,
                     role_of(a, g) >= needed ? allowed(a, job) : gate(a, g, needed, {})};
    };
  };
  routes["GET /api/v1/jobs/{id}"] =
      on_job("", "", 0, [&](const Actor&, std::int64_t) { return only({200}); });
  routes["PUT /api/v1/jobs/{id}"] = [&](const Actor& a) {
    const auto job = some_job();
    const auto body = job_body(a, false);
    const auto g = group_of_job(job);
    return Request{"/api/v1/jobs/" + id(job), body.dump(),
                   role_of(a, g) >= kWrite ? job_change(a, job, body, false) : gate(a, g, kWrite, {})};
  };
  // A job a workflow's node names is not deleted.
  const auto in_workflow = [this](std::int64_t job) {
    return Count(fmt::format("SELECT count(*) FROM workflow WHERE nodes @> '[{{\"job_id\": {}}}]'", job)) > 0;
  };
  routes["DELETE /api/v1/jobs/{id}"] = on_job(
      "", "", kWrite, [&](const Actor&, std::int64_t job) { return only({in_workflow(job) ? 409 : 200}); });
  routes["POST /api/v1/jobs/{id}/start"] = on_job("/start", "", kOperate, [&](const Actor&, std::int64_t) {
    return only({200, 400});
  });
  routes["POST /api/v1/jobs/{id}/stop"] =
      on_job("/stop", "", kOperate, [&](const Actor&, std::int64_t) { return only({200}); });
  routes["POST /api/v1/jobs/{id}/trigger"] =
      on_job("/trigger", "", kOperate, [&](const Actor&, std::int64_t) { return only({202}); });
  // A few jobs, some of them ones the caller may not see or that do not exist: each of those is not found;
  // one where the caller's role is less than the action needs (OPERATOR to start, stop and trigger,
  // DEVELOPER to tag) is refused.
  routes["POST /api/v1/jobs/bulk"] = [&](const Actor& a) {
    static const std::vector<std::string> kActions = {"START", "STOP", "TRIGGER", "TAG", "UNTAG"};
    std::vector<std::int64_t> ids;
    for (int i = 0, n = 1 + pick(4); i < n; ++i) {
      const auto j = some_job();
      if (std::find(ids.begin(), ids.end(), j) == ids.end()) ids.push_back(j);
    }
    const auto& action = kActions[pick(kActions.size())];
    json body{{"action", action}, {"job_ids", ids}};
    if (action == "TAG" || action == "UNTAG") body["tags"] = {"bulk"};
    const int needed = action == "TAG" || action == "UNTAG" ? kWrite : kOperate;
    std::vector<int> refused;  // per job: 404, 403 or 0 (done, or refused for its own reason)
    for (const auto j : ids) {
      const int role = role_of(a, group_of_job(j));
      refused.push_back(role < 0 ? 404 : role < needed ? 403 : 0);
    }
    return Request{"/api/v1/jobs/bulk", body.dump(),
                   Expect{.statuses = {200}, .also = [ids, refused](const Reply& r) {
                            const auto& results = r.body.at("results");
                            ASSERT_EQ(results.size(), ids.size()) << r.body.dump();
                            for (std::size_t i = 0; i < ids.size(); ++i) {
                              if (refused[i] != 0) {
                                EXPECT_EQ(results[i].at("status"), refused[i]) << r.body.dump();
                              }
                            }
                          }}};
  };
  routes["POST /api/v1/jobs/{id}/run-once"] =
      on_job("/run-once", R"({"delay_ms":3600000,"param":"p"})", kOperate,
             [&](const Actor&, std::int64_t) { return only({201}); });
  routes["GET /api/v1/jobs/{id}/run-once"] =
      on_job("/run-once", "", 0, [&](const Actor&, std::int64_t) { return only({200}); });
  // Some of the requests made above, on this job or another: a request of another job is not found through
  // this one; one cancelled before is a conflict.
  routes["DELETE /api/v1/jobs/{id}/run-once/{run_id}"] = [&](const Actor& a) {
    const auto job = some_job();
    return Request{"/api/v1/jobs/" + id(job) + "/run-once/" + std::to_string(1 + pick(20)), "",
                   gate(a, group_of_job(job), kOperate, only({200, 404, 409}))};
  };
  routes["POST /api/v1/jobs/{id}/copy"] = on_job("/copy", "", kWrite, [&](const Actor& a, std::int64_t job) {
    return job_change(a, job, json::object(), true);
  });
  routes["GET /api/v1/jobs/{id}/glue"] =
      on_job("/glue", "", 0, [&](const Actor&, std::int64_t) { return only({200}); });
  routes["GET /api/v1/logs"] = [&](const Actor& a) {
    return Request{coin(2) ? "/api/v1/logs" : "/api/v1/logs?job_id=" + id(some_job()), "",
                   visible_items(a, "items", "group_id")};
  };
  const auto on_log = [&](const std::string& suffix, int needed, std::initializer_list<int> allowed) {
    return [&, suffix, needed, allowed = std::set<int>(allowed)](const Actor& a) {
      const auto log = some_log();
      return Request{"/api/v1/logs/" + id(log) + suffix, "",
                     gate(a, group_of_log(log), needed, Expect{.statuses = allowed})};
    };
  };
  routes["GET /api/v1/logs/{id}"] = on_log("", 0, {200});
  routes["GET /api/v1/logs/{id}/output"] = on_log("/output", 0, {200});
  routes["POST /api/v1/logs/{id}/kill"] = on_log("/kill", kOperate, {200, 409});
  routes["POST /api/v1/logs/clear"] = [&](const Actor& a) {
    if (coin(2)) {
      const auto job = some_job();
      return Request{"/api/v1/logs/clear", json{{"job_id", job}, {"older_than_days", 30}}.dump(),
                     gate(a, group_of_job(job), kWrite, only({200}))};
    }
    const auto g = some_group();
    return Request{"/api/v1/logs/clear", json{{"group_id", g}, {"older_than_days", 30}}.dump(),
                   group_exists(g) ? gate(a, static_cast<int>(g), kWrite, only({200})) : only({404})};
  };
  routes["GET /api/v1/dashboard"] = [&](const Actor&) {
    return Request{"/api/v1/dashboard", "", only({200})};
  };
  routes["POST /api/v1/schedules/preview"] = [&](const Actor&) {
    return Request{"/api/v1/schedules/preview", R"({"schedule_type":"CRON","schedule_conf":"0 * * * * ?"})",
                   only({200})};
  };
  // Alert channels: e-mail ones (no webhook is allowed here); anyone lists them, only admins change them.
  const auto some_channel = [&] { return some("SELECT id FROM alert_channel ORDER BY id"); };
  const auto channel_exists = [this](std::int64_t c) {
    return Count(fmt::format("SELECT count(*) FROM alert_channel WHERE id = {}", c)) == 1;
  };
  const auto no_target_for_users = [](const Actor& a) {
    return [a](const Reply& r) {
      const auto items = r.body.contains("items") ? r.body.at("items") : json::array({r.body});
      for (const auto& c : items)
        EXPECT_EQ(c.contains("target"), a.admin) << c.dump();
    };
  };
  // The alerts of jobs a caller may see only.
  routes["GET /api/v1/alerts"] = [&](const Actor& a) {
    return Request{"/api/v1/alerts", "",
                   Expect{.statuses = {200}, .also = [&, a](const Reply& r) {
                            for (const auto& e : r.body.at("items")) {
                              EXPECT_TRUE(a.admin || may_see(a, group_of_job(e.at("job_id")))) << e.dump();
                            }
                          }}};
  };
  routes["GET /api/v1/alert-channels"] = [&](const Actor& a) {
    return Request{"/api/v1/alert-channels", "", Expect{.statuses = {200}, .also = no_target_for_users(a)}};
  };
  routes["POST /api/v1/alert-channels"] = [&](const Actor& a) {
    return Request{"/api/v1/alert-channels",
                   json{{"name", fmt::format("mail {}", rng() % 1'000'000)},
                        {"kind", "EMAIL"},
                        {"target", "ops@example.com"}}
                       .dump(),
                   admin_only(a, only({201}))};
  };
  routes["GET /api/v1/alert-channels/{id}"] = [&](const Actor& a) {
    const auto c = some_channel();
    return Request{
        "/api/v1/alert-channels/" + id(c), "",
        channel_exists(c) ? Expect{.statuses = {200}, .also = no_target_for_users(a)} : only({404})};
  };
  routes["PUT /api/v1/alert-channels/{id}"] = [&](const Actor& a) {
    const auto c = some_channel();
    return Request{"/api/v1/alert-channels/" + id(c), R"({"target":"dba@example.com"})",
                   admin_only(a, only({channel_exists(c) ? 200 : 404}))};
  };
  routes["DELETE /api/v1/alert-channels/{id}"] = [&](const Actor& a) {
    const auto c = some_channel();
    return Request{"/api/v1/alert-channels/" + id(c), "",
                   admin_only(a, only({channel_exists(c) ? 200 : 404}))};
  };
  // No SMTP server is configured here: a test answers 200 saying the e-mail was not sent.
  routes["POST /api/v1/alert-channels/{id}/test"] = [&](const Actor& a) {
    const auto c = some_channel();
    return Request{"/api/v1/alert-channels/" + id(c) + "/test", "",
                   admin_only(a, only({channel_exists(c) ? 200 : 404}))};
  };
  // Calendars: anyone reads them, only admins change them; one a job keeps is not deleted.
  const auto some_calendar = [&] { return some("SELECT id FROM calendar ORDER BY id"); };
  const auto calendar_state = [this](std::int64_t c) {
    if (Count(fmt::format("SELECT count(*) FROM calendar WHERE id = {}", c)) == 0) return 404;
    return Count(fmt::format("SELECT count(*) FROM job WHERE {} = ANY(calendar_ids)", c)) > 0 ? 409 : 200;
  };
  routes["GET /api/v1/calendars"] = [&](const Actor&) {
    return Request{"/api/v1/calendars", "", only({200})};
  };
  routes["POST /api/v1/calendars"] = [&](const Actor& a) {
    return Request{"/api/v1/calendars",
                   json{{"name", fmt::format("days off {}", rng() % 1'000'000)},
                        {"kind", "BUSINESS_DAYS"},
                        {"time_zone", "Asia/Shanghai"},
                        {"days", {"2026-10-01", "2026-10-02"}}}
                       .dump(),
                   admin_only(a, only({201}))};
  };
  routes["GET /api/v1/calendars/{id}"] = [&](const Actor&) {
    const auto c = some_calendar();
    return Request{"/api/v1/calendars/" + id(c), "", only({calendar_state(c) == 404 ? 404 : 200})};
  };
  routes["PUT /api/v1/calendars/{id}"] = [&](const Actor& a) {
    const auto c = some_calendar();
    return Request{"/api/v1/calendars/" + id(c), R"({"days":["2026-10-01"]})",
                   admin_only(a, only({calendar_state(c) == 404 ? 404 : 200}))};
  };
  routes["DELETE /api/v1/calendars/{id}"] = [&](const Actor& a) {
    const auto c = some_calendar();
    return Request{"/api/v1/calendars/" + id(c), "", admin_only(a, only({calendar_state(c)}))};
  };
  // Workflows: seen, changed and run by the users of their group; every node's job must be one the caller
  // may use (another group's is refused as one that does not exist: 400 naming the node).
  const auto some_workflow = [&] { return some("SELECT id FROM workflow ORDER BY id"); };
  const auto some_run = [&] { return some("SELECT id FROM workflow_run ORDER BY id"); };
  const auto group_of = [this](const std::string& table, std::int64_t row) -> std::optional<int> {
    const auto r = Exec(fmt::format("SELECT group_id FROM {} WHERE id = {}", table, row));
    return r.empty() ? std::nullopt : std::optional(r[0][0].as<int>());
  };
  // Whether the caller may fire every job the workflow's nodes name (OPERATOR in each job's group).
  const auto may_use_nodes = [&](const Actor& a, std::int64_t w) {
    for (const auto& r : Exec(fmt::format(
             "SELECT (n->>'job_id')::int FROM workflow, jsonb_array_elements(nodes) n WHERE id = {}", w))) {
      if (role_of(a, group_of_job(r[0].as<int>())) < kOperate) return false;
    }
    return true;
  };
  const auto on_workflow = [&](const std::string& suffix, const std::string& body, int needed,
                               const std::function<Expect(const Actor&, std::int64_t)>& seen) {
    return [&, suffix, body, needed, seen](const Actor& a) {
      const auto w = some_workflow();
      const auto g = group_of("workflow", w);
      return Request{"/api/v1/workflows/" + id(w) + suffix, body,
                     role_of(a, g) >= needed ? seen(a, w) : gate(a, g, needed, {})};
    };
  };
  const auto run_state = [this](std::int64_t run, const std::string& what) {
    const auto r =
        Exec(fmt::format("SELECT r.state, n.state FROM workflow_run r JOIN workflow_run_node n ON n.run_id = "
                         "r.id AND n.key = 'a' "
                         "WHERE r.id = {}",
                         run));
    return r.empty() ? std::string() : r[0][what == "run" ? 0 : 1].as<std::string>();
  };
  const auto on_run = [&](const std::string& suffix, int needed,
                          const std::function<Expect(const Actor&, std::int64_t)>& seen) {
    return [&, suffix, needed, seen](const Actor& a) {
      const auto r = some_run();
      const auto g = group_of("workflow_run", r);
      return Request{"/api/v1/workflow-runs/" + id(r) + suffix, "",
                     role_of(a, g) >= needed ? seen(a, r) : gate(a, g, needed, {})};
    };
  };
  routes["GET /api/v1/workflows"] = [&](const Actor& a) {
    return Request{"/api/v1/workflows", "", visible_items(a, "items", "group_id")};
  };
  routes["POST /api/v1/workflows"] = [&](const Actor& a) {
    const auto g = group_for(a);
    const auto job = some_job();
    const auto wg = group_exists(g) ? std::optional(static_cast<int>(g)) : std::nullopt;
    // Not seen, no such group or no such job (or one not seen, or not OPERATOR's): 400; seen but less than
    // DEVELOPER there: 403.
    const int status = !may_see(a, wg)                            ? 400
                       : role_of(a, wg) < kWrite                  ? 403
                       : role_of(a, group_of_job(job)) < kOperate ? 400
                                                                  : 201;
    return Request{"/api/v1/workflows",
                   json{{"group_id", g}, {"name", "w"}, {"nodes", {{{"key", "a"}, {"job_id", job}}}}}.dump(),
                   only({status})};
  };
  routes["GET /api/v1/workflows/{id}"] =
      on_workflow("", "", 0, [&](const Actor&, std::int64_t) { return only({200}); });
  routes["PUT /api/v1/workflows/{id}"] =
      on_workflow("", R"({"name":"renamed"})", kWrite,
                  [&](const Actor& a, std::int64_t w) { return only({may_use_nodes(a, w) ? 200 : 400}); });
  routes["DELETE /api/v1/workflows/{id}"] =
      on_workflow("", "", kWrite, [&](const Actor&, std::int64_t) { return only({200}); });
  // A trigger, a re-run and a kill act for the caller on each node's job they reach (security review 2, N4):
  // the first node whose job the caller does not see answers 404, one where its role is less than OPERATOR
  // 403 (code "role").
  const auto node_gate = [&](const Actor& a, const std::vector<std::optional<int>>& node_groups,
                             Expect allowed) {
    for (const auto& g : node_groups) {
      const int role = role_of(a, g);
      if (role < 0) return only({404});
      if (role < kOperate) return only({403});
    }
    return allowed;
  };
  const auto groups_of_jobs = [&](const std::string& sql) {
    std::vector<std::optional<int>> out;
    for (const auto& r : Exec(sql))
      out.push_back(group_of_job(r[0].as<int>()));
    return out;
  };
  routes["POST /api/v1/workflows/{id}/trigger"] =
      on_workflow("/trigger", "", kOperate, [&](const Actor& a, std::int64_t w) {
        return node_gate(a,
                         groups_of_jobs(fmt::format("SELECT (n->>'job_id')::int FROM workflow, "
                                                    "jsonb_array_elements(nodes) n WHERE id = {}",
                                                    w)),
                         only({202}));
      });
  routes["GET /api/v1/workflows/{id}/runs"] =
      on_workflow("/runs", "", 0, [&](const Actor&, std::int64_t) { return only({200}); });
  routes["GET /api/v1/workflow-runs/{id}"] =
      on_run("", 0, [&](const Actor&, std::int64_t) { return only({200}); });
  routes["POST /api/v1/workflow-runs/{id}/kill"] =
      on_run("/kill", kOperate, [&](const Actor& a, std::int64_t r) {
        if (run_state(r, "run") != "RUNNING") return only({409});
        std::vector<std::optional<int>> fire_groups;  // the run's open fires, killed for the caller
        for (const auto& row : Exec(fmt::format("SELECT o.group_id FROM fire_open o JOIN job_log l ON l.id = "
                                                "o.log_id AND l.scheduled_ms = o.scheduled_ms WHERE "
                                                "l.workflow_run_id = {} ORDER BY o.log_id",
                                                r)))
          fire_groups.emplace_back(row[0].as<int>());
        return node_gate(a, fire_groups, only({200}));
      });
  routes["POST /api/v1/workflow-runs/{id}/nodes/{key}/rerun"] = [&](const Actor& a) {
    const auto r = some_run();
    const auto run = run_state(r, "run");
    const auto node = run_state(r, "node");
    const bool may = run != "RUNNING" && (node == "FAILED" || node == "KILLED");
    const auto node_jobs = groups_of_jobs(fmt::format(
        "SELECT (n->>'job_id')::int FROM workflow_run, jsonb_array_elements(graph->'nodes') n WHERE id = {}",
        r));
    return Request{"/api/v1/workflow-runs/" + id(r) + "/nodes/a/rerun", "",
                   gate(a, group_of("workflow_run", r), kOperate,
                        may ? node_gate(a, node_jobs, only({200})) : only({409}))};
  };
  routes["GET /api/v1/users"] = [&](const Actor& a) {
    return Request{"/api/v1/users", "", admin_only(a, only({200}))};
  };
  routes["POST /api/v1/users"] = [&](const Actor& a) {
    return Request{
        "/api/v1/users",
        json{{"username", fmt::format("made{}", rng() % 1'000'000)}, {"password", kUserPassword}}.dump(),
        admin_only(a, only({201}))};
  };
  const auto some_victim = [&] {
    return coin(4) ? 900'000 + static_cast<int>(pick(1000)) : victims[pick(victims.size())];
  };
  const auto user_exists = [this](int user) {
    return Count(fmt::format("SELECT count(*) FROM app_user WHERE id = {}", user)) == 1;
  };
  routes["GET /api/v1/users/{id}"] = [&](const Actor& a) {
    const int user = coin(2) ? some_victim() : actors[pick(actors.size() - 1)].user_id;
    return Request{"/api/v1/users/" + id(user), "", admin_only(a, only({user_exists(user) ? 200 : 404}))};
  };
  // No single sign-on is configured here: every source is unknown (400); the victims are local (400).
  routes["PUT /api/v1/users/{id}/identity"] = [&](const Actor& a) {
    const int user = some_victim();
    return Request{"/api/v1/users/" + id(user) + "/identity",
                   json{{"source", "ldap"}, {"subject", "x"}}.dump(), admin_only(a, only({400}))};
  };
  routes["DELETE /api/v1/users/{id}/identity"] = [&](const Actor& a) {
    const int user = some_victim();
    return Request{"/api/v1/users/" + id(user) + "/identity", "",
                   admin_only(a, only({user_exists(user) ? 400 : 404}))};
  };
  routes["PUT /api/v1/users/{id}"] = [&](const Actor& a) {
    const int user = some_victim();
    const auto body = coin(2) ? json{{"permitted_group_ids", {some_group()}}}.dump()
                              : json{{"password", "victim-password-2"}}.dump();
    const bool unknown_group =
        body.find("permitted") != std::string::npos &&
        !group_exists(json::parse(body).at("permitted_group_ids")[0].get<std::int64_t>());
    return Request{"/api/v1/users/" + id(user), body,
                   admin_only(a, only({!user_exists(user) ? 404
                                       : unknown_group    ? 400
                                                          : 200}))};
  };
  routes["DELETE /api/v1/users/{id}"] = [&](const Actor& a) {
    const int user = some_victim();
    return Request{"/api/v1/users/" + id(user), "", admin_only(a, only({user_exists(user) ? 200 : 404}))};
  };
  routes["POST /api/v1/users/me/password"] = [&](const Actor&) {
    return Request{"/api/v1/users/me/password",
                   json{{"old_password", "wrong-password"}, {"new_password", "never-set-password"}}.dump(),
                   only({400, 429})};
  };
  routes["GET /api/v1/tokens"] = [&](const Actor& a) {
    if (coin(2)) return Request{"/api/v1/tokens?all=true", "", admin_only(a, only({200}))};
    return Request{"/api/v1/tokens", "", Expect{.statuses = {200}, .also = [a](const Reply& r) {
                                                  for (const auto& t : r.body.at("items"))
                                                    EXPECT_EQ(t.at("user_id"), a.user_id) << t.dump();
                                                }}};
  };
  routes["POST /api/v1/tokens"] = [&](const Actor&) {
    return Request{"/api/v1/tokens", R"({"name":"made"})", only({201})};
  };
  routes["DELETE /api/v1/tokens/{id}"] = [&](const Actor& a) {
    std::string callers = "0";
    for (const auto& other : actors)
      callers += "," + id(other.token_id);
    const auto token =
        some(fmt::format("SELECT id FROM api_token WHERE id NOT IN ({}) ORDER BY id", callers));
    const auto owner = Exec(fmt::format("SELECT user_id FROM api_token WHERE id = {}", token));
    const bool mine = !owner.empty() && (a.admin || owner[0][0].as<int>() == a.user_id);
    return Request{"/api/v1/tokens/" + id(token), "", only({mine ? 200 : 404})};
  };
  routes["GET /api/v1/audit"] = [&](const Actor& a) {
    return Request{"/api/v1/audit", "", admin_only(a, only({200}))};
  };

  // Every registered route has its rule here: a new route must be added.
  std::vector<std::pair<std::string, std::string>> served;  // method, path
  for (const auto& route : console_->routes) {
    const auto key = route.method + " " + route.path;
    EXPECT_TRUE(routes.contains(key)) << key << " has no rule in this test";
    if (routes.contains(key)) served.emplace_back(route.method, route.path);
  }
  const std::set<std::string> public_routes = {"GET /api/v1/health",
                                               "GET /api/v1/openapi.json",
                                               "POST /api/v1/auth/login",
                                               "POST /api/v1/auth/cli/token",
                                               "GET /api/v1/auth/providers",
                                               "GET /api/v1/auth/oidc/{name}/start",
                                               "GET /api/v1/auth/oidc/{name}/callback"};
  // --- the walk: every route, in random order, a random caller each, for a number of rounds -------------
  // Each route meets each kind of caller (ADMIN, USER, none) in turn; which one of that kind is random.
  const std::vector<std::vector<std::size_t>> kinds = {{0, 1}, {2, 3, 4}, {5}};
  // The routes whose bodies name other objects (a job's group and child jobs) are called more often.
  const std::set<std::string> naming = {"POST /api/v1/jobs", "PUT /api/v1/jobs/{id}",
                                        "POST /api/v1/jobs/{id}/copy"};
  std::map<std::string, std::set<std::string>> callers_seen;  // route -> ADMIN, USER, nobody
  const auto started = std::chrono::steady_clock::now();
  int calls = 0;
  std::vector<std::size_t> visits(served.size(), 0);
  std::map<int, int> answered;  // status -> how many, as printed
  for (std::size_t round = 0; round < 12; ++round) {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < served.size(); ++i) {
      const auto key = fmt::format("{} {}", served[i].first, served[i].second);
      order.insert(order.end(), naming.contains(key) ? 6 : 1, i);
    }
    std::shuffle(order.begin(), order.end(), rng);
    for (const auto i : order) {
      const auto& [method, path] = served[i];
      const auto key = fmt::format("{} {}", method, path);
      const auto& kind = kinds[(i + visits[i]++) % kinds.size()];
      const auto& a = actors[kind[pick(kind.size())]];
      auto req = routes.at(key)(a);
      if (a.name == "nobody" && !public_routes.contains(key)) req.expect = only({401});
      const auto r = Call(method, req.target, a.caller, req.body);
      ++calls;
      ++answered[r.status];
      SCOPED_TRACE(fmt::format("call {}: {} as {} ({}): {} {} {}", calls, a.name,
                               a.admin              ? "ADMIN"
                               : a.name == "nobody" ? "no credentials"
                                                    : "USER",
                               key, method, req.target, req.body));
      EXPECT_TRUE(req.expect.statuses.contains(r.status))
          << "answered " << r.status << ", expected one of "
          << fmt::format("{}", fmt::join(req.expect.statuses, ", ")) << ": " << r.body.dump();
      if (req.expect.statuses.contains(r.status) && req.expect.also) req.expect.also(r);
      callers_seen[key].insert(a.admin ? "ADMIN" : a.name == "nobody" ? "nobody" : "USER");
    }
  }
  for (const auto& [method, path] : served) {
    EXPECT_EQ(callers_seen[fmt::format("{} {}", method, path)].size(), 3u)
        << method << " " << path << " was not called by every kind";
  }
  const auto took = std::chrono::steady_clock::now() - started;
  std::string tally;
  for (const auto& [status, n] : answered)
    tally += fmt::format(" {}x{}", n, status);
  std::printf("[property] %d calls in %lld ms (seed %u); answers:%s\n", calls,
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()),
              seed, tally.c_str());
}

// Security review 2, N4. A user who is DEVELOPER in group 1 and OPERATOR in group 2 saves a group-1 workflow
// whose node b is group 2's job, fed {{workflow.param}}. An OPERATOR of group 1 alone, who gets 404 for that
// job, could run it with a parameter of their own, re-run it and kill it, and the first user could still run
// it after losing the group-2 role. Now every trigger, re-run, kill and scheduled run is checked against the
// person it acts for, as they are then; and a kill ends the run's own fires, not another fire of the job.
TEST_F(ConsoleTest, N4_WorkflowNodesAreAuthorisedAtEveryTriggerRerunKillAndScheduledRun) {
  const int g1 = CreateGroup("wf-one-app");
  const int g2 = CreateGroup("wf-two-app");
  const int job1 = CreateJob(g1, "first");
  const int job2 = CreateJob(g2, "second");
  ASSERT_EQ(
      Call("PUT", fmt::format("/api/v1/jobs/{}", job2), json{{"param", "{{workflow.param}}"}}.dump()).status,
      200);
  const int dev_id = CreateUserWithRoles("dev", {{g1, "DEVELOPER"}, {g2, "OPERATOR"}});
  CreateUserWithRoles("ops", {{g1, "OPERATOR"}});
  const auto dev = Login("dev", kUserPassword);
  const auto ops = Login("ops", kUserPassword);
  auto r = Call("POST", "/api/v1/workflows", dev,
                json{{"group_id", g1},
                     {"name", "cross"},
                     {"nodes", {{{"key", "a"}, {"job_id", job1}}, {{"key", "b"}, {"job_id", job2}}}},
                     {"edges", {{{"from", "a"}, {"to", "b"}}}}}
                    .dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  const int wf = r.body.at("id");
  EXPECT_EQ(r.body.at("run_as"), "dev");
  const auto trigger = fmt::format("/api/v1/workflows/{}/trigger", wf);
  const auto runs = [&] {
    return Count(fmt::format("SELECT count(*) FROM workflow_run WHERE workflow_id = {}", wf));
  };

  // ops does not see job 2, and may not run it through the workflow: 404 naming the node and the job, and
  // nothing is written.
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/jobs/{}", job2), ops).status, 404);
  r = Call("POST", trigger, ops, json{{"param", "ops's own"}}.dump());
  EXPECT_EQ(r.status, 404) << r.body.dump();
  EXPECT_THAT(r.body.value("error", ""), HasSubstr(fmt::format("node 'b': job {} not found", job2)));
  EXPECT_EQ(runs(), 0);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM job_log WHERE job_id IN ({}, {})", job1, job2)), 0);

  // dev may: a's fire is written; when it succeeds, b fires with dev's parameter.
  r = Call("POST", trigger, dev, json{{"param", "dev-param"}}.dump());
  ASSERT_EQ(r.status, 202) << r.body.dump();
  const std::int64_t run = r.body.at("run_id");
  const auto node_fire = [&](std::int64_t run_id, const std::string& key) {
    return Exec(fmt::format(
        "SELECT log_ids[cardinality(log_ids)] FROM workflow_run_node WHERE run_id = {} AND "
        "key = '{}'",
        run_id, key))[0][0]
        .as<std::int64_t>();
  };
  const auto a_fire = node_fire(run, "a");
  const auto b_fires = result_store_->RecordCallbacks(
      std::vector<HandleResult>{{.log_id = a_fire, .handle_code = 200, .handle_msg = "ok"}}, "node-a",
      clock_->NowMs());
  ASSERT_EQ(b_fires.children.size(), 1u);
  EXPECT_EQ(b_fires.children[0].param, "dev-param");
  const auto b_fire = b_fires.children[0].log_id;
  // b runs on an executor that also runs an unrelated fire of job 2 (its own schedule's).
  const std::string address = "http://127.0.0.1:9999/";
  Exec(fmt::format("UPDATE fire_open SET trigger_ms = {}, executor_address = '{}' WHERE log_id = {}",
                   clock_->NowMs(), address, b_fire));
  const auto unrelated = AddRunningFire(job2, g2, address);

  // ops may not kill b's fire (job 2's): 404 naming it, and nothing changes.
  r = Call("POST", fmt::format("/api/v1/workflow-runs/{}/kill", run), ops);
  EXPECT_EQ(r.status, 404) << r.body.dump();
  EXPECT_THAT(r.body.value("error", ""), HasSubstr(fmt::format("node 'b': job {} not found", job2)));
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/workflow-runs/{}", run), dev).body.at("state"), "RUNNING");
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM fire_open WHERE log_id = {}", b_fire)), 1);
  // dev kills the run: b's fire only. An executor that kills single fires is asked for b's; one that cannot
  // (XXL-JOB's /kill ends the job's every fire there) is not asked at all, since the unrelated fire runs
  // there.
  r = Call("POST", fmt::format("/api/v1/workflow-runs/{}/kill", run), dev);
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_TRUE(executors_.kills.empty()) << fmt::format("{}", fmt::join(executors_.kills, "; "));
  ASSERT_EQ(r.body.at("kill_notes").size(), 1u) << r.body.dump();
  EXPECT_THAT(r.body.at("kill_notes")[0].get<std::string>(),
              HasSubstr(fmt::format("would also end fire(s) {} of job {}", unrelated, job2)));
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM fire_open WHERE log_id = {}", unrelated)), 1);
  EXPECT_EQ(Count(fmt::format("SELECT handle_code FROM job_log WHERE id = {}", unrelated)), 0);

  // Re-running b (KILLED) is firing job 2: not for ops; for dev, yes.
  r = Call("POST", fmt::format("/api/v1/workflow-runs/{}/nodes/b/rerun", run), ops);
  EXPECT_EQ(r.status, 404) << r.body.dump();
  EXPECT_EQ(Call("GET", fmt::format("/api/v1/workflow-runs/{}", run), dev).body.at("state"), "KILLED");
  r = Call("POST", fmt::format("/api/v1/workflow-runs/{}/nodes/b/rerun", run), dev);
  ASSERT_EQ(r.status, 200) << r.body.dump();
  // A cronwheel executor is asked to kill the run's fire by its id, and nothing else.
  executors_.kill_fires = true;
  const auto b_again = node_fire(run, "b");
  Exec(fmt::format("UPDATE fire_open SET trigger_ms = {}, executor_address = '{}' WHERE log_id = {}",
                   clock_->NowMs(), address, b_again));
  r = Call("POST", fmt::format("/api/v1/workflow-runs/{}/kill", run), dev);
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(executors_.fire_kills,
            std::vector<std::string>{fmt::format("{} {} {}", address, kToken, b_again)});
  EXPECT_TRUE(executors_.kills.empty());
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM fire_open WHERE log_id = {}", unrelated)), 1);

  // dev schedules it every second while still OPERATOR in group 2: the scan writes its runs.
  r = Call("PUT", fmt::format("/api/v1/workflows/{}", wf), dev,
           json{{"schedule_type", "CRON"}, {"schedule_conf", "* * * * * ?"}, {"enabled", true}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  clock_->AdvanceToWallMs(r.body.at("next_fire_ms").get<std::int64_t>() - 3000);
  ScanPlanner planner;
  const auto scheduled = runs();
  const auto first = store_->Scan("node-a", 100, *clock_, planner);
  EXPECT_TRUE(std::any_of(first.fires.begin(), first.fires.end(),
                          [](const auto& f) { return f.type == TriggerType::kWorkflow; }));
  EXPECT_GT(runs(), scheduled);
  // dev loses the group-2 role: dev's own trigger is refused (404: job 2 is not seen; 403 with a lesser
  // role), and the scan stops the workflow instead of running it for dev: one FAILED run, alarmed.
  ASSERT_EQ(Call("PUT", fmt::format("/api/v1/users/{}", dev_id),
                 json{{"group_roles", {{{"group_id", g1}, {"role", "DEVELOPER"}}}}}.dump())
                .status,
            200);
  EXPECT_EQ(Call("POST", trigger, dev, json{{"param", "again"}}.dump()).status, 404);
  ASSERT_EQ(Call("PUT", fmt::format("/api/v1/users/{}", dev_id),
                 json{{"group_roles",
                       {{{"group_id", g1}, {"role", "DEVELOPER"}}, {{"group_id", g2}, {"role", "VIEWER"}}}}}
                     .dump())
                .status,
            200);
  r = Call("POST", trigger, dev, json{{"param", "again"}}.dump());
  EXPECT_EQ(r.status, 403) << r.body.dump();
  EXPECT_EQ(r.body.at("errors")[0].value("code", ""), "role");
  EXPECT_EQ(r.body.at("errors")[0].at("params"),
            (json{{"role", "OPERATOR"}, {"group_id", g2}, {"job_id", job2}, {"node", "b"}}));
  const auto before = runs();
  clock_->AdvanceToWallMs(clock_->NowMs() + 10'000);
  ScanPlanner later;
  const auto after = store_->Scan("node-a", 100, *clock_, later);
  for (const auto& f : after.fires) {
    EXPECT_NE(f.type, TriggerType::kWorkflow) << "a scheduled run of the workflow was written for dev";
  }
  EXPECT_EQ(runs(), before + 1);
  const auto w = Call("GET", fmt::format("/api/v1/workflows/{}", wf), dev).body;
  EXPECT_EQ(w.at("enabled"), false);
  EXPECT_THAT(
      w.at("stop_reason").get<std::string>(),
      HasSubstr(fmt::format("fire its nodes for dev, who saved it last, and node 'b': job {} is in job "
                            "group {}, where the role of dev is VIEWER",
                            job2, g2)));
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM workflow_run WHERE workflow_id = {} AND state = 'FAILED' "
                              "AND alarm_status = 1",
                              wf)),
            1);
}

TEST_F(ConsoleTest, BadInputIsA4xxNamingTheFieldNeverA5xx) {
  const int g = CreateGroup("sample-app");
  const int job = CreateJob(g);
  const std::vector<std::pair<std::string, std::string>> posts = {
      {"/api/v1/auth/login", R"({"username":1})"},
      {"/api/v1/users", R"([1,2])"},
      {"/api/v1/users", R"({"username":"x","password":"0123456789","permitted_group_ids":[-1]})"},
      {"/api/v1/users/me/password", R"({"old_password":null})"},
      {"/api/v1/tokens", R"({"name":7})"},
      {"/api/v1/schedules/preview", R"({"schedule_type":"HOURLY"})"},
      {"/api/v1/schedules/preview", R"({"schedule_type":"CRON","from_ms":-5})"},
      {"/api/v1/logs/clear", R"({"job_id":"x","keep_last":1})"},
      {"/api/v1/logs/clear", R"({"older_than_days":99999999999999999999})"},
      {"/api/v1/users", "{not json"},
  };
  for (const auto& [path, body] : posts) {
    const auto r = Call("POST", path, admin_, body);
    EXPECT_GE(r.status, 400) << path << " " << body;
    EXPECT_LT(r.status, 500) << path << " " << body << " " << r.body.dump();
    EXPECT_TRUE(r.body.contains("error")) << path;
  }
  for (const char* path : {"/api/v1/audit?limit=0", "/api/v1/dashboard?days=x", "/api/v1/tokens?all=yes",
                           "/api/v1/users/abc", "/api/v1/jobs/abc/glue", "/api/v1/logs/1e3/output"}) {
    const auto r = Call("GET", path);
    EXPECT_GE(r.status, 400) << path;
    EXPECT_LT(r.status, 500) << path;
  }
  EXPECT_EQ(Call("POST", fmt::format("/api/v1/jobs/{}/copy", job + 1000)).status, 404);
}

}  // namespace
