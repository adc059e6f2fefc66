// End-to-end single sign-on (admin/auth/sso_service.hpp; docs/operations.md, "Single sign-on") against
// servers cronwheel did not write:
// - OpenID Connect: the npm package oidc-provider 8.8.1 (a certified OpenID provider), run by
//   tests/e2e/oidc_provider/server.mjs on loopback with its own development login page. A "browser" here is
//   libcurl with its cookie engine, following redirects as a browser does: the admin's start URL, the
//   provider's login form (posted with the account's id), the provider's redirect back to the admin's
//   callback, and the admin's redirect into the console. The provider's test hook alters the next ID token
//   (signature, audience, nonce, expiry, issuer, alg "none"): each is refused, with the reason on the login
//   page and in the audit log, and no session starts.
// - LDAP: Debian's OpenLDAP server (slapd), started by tests/tools/slapd_server.py with a throwaway CA, over
//   ldaps:// and over ldap:// with StartTLS, both directory layouts (bind as the user, search then bind).
//
// node with the package (`scripts/setup --web`) and slapd (`scripts/setup`) must be installed; without them
// the tests fail and say which setup command installs them.
#include <curl/curl.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "cluster.hpp"
#include "cwtest/process.hpp"
#include "http_client.hpp"

namespace {

using namespace std::chrono_literals;
using namespace cwtest;
using ::testing::HasSubstr;
using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kAdminPassword = "sso-e2e-admin-password";
constexpr const char* kClientSecret = "sso-e2e-client-secret-0123456789";

// Waits (up to 30 s) for a line of `log` that parses as a JSON object holding `key`; the object, or nullopt.
std::optional<json> AwaitJsonLine(ChildProcess& process, const fs::path& log, const std::string& key) {
  const auto give_up = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < give_up && process.running()) {
    std::istringstream lines(ReadWholeFile(log));
    for (std::string line; std::getline(lines, line);) {
      auto j = json::parse(line, nullptr, false);
      if (j.is_object() && j.contains(key)) return j;
    }
    std::this_thread::sleep_for(100ms);
  }
  return std::nullopt;
}

// A browser: libcurl with its cookie engine, following redirects (a 303 becomes a GET), recording every
// Location it was sent to.
class Browser {
 public:
  Browser() : curl_(curl_easy_init()) {
    curl_easy_setopt(curl_, CURLOPT_COOKIEFILE, "");  // the cookie engine, in memory
    curl_easy_setopt(curl_, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(curl_, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(curl_, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl_, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, &Browser::Body);
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &body_);
    curl_easy_setopt(curl_, CURLOPT_HEADERFUNCTION, &Browser::Header);
    curl_easy_setopt(curl_, CURLOPT_HEADERDATA, &locations_);
  }
  ~Browser() { curl_easy_cleanup(curl_); }
  Browser(const Browser&) = delete;
  Browser& operator=(const Browser&) = delete;

  // GETs `url` (following redirects); the final status.
  long Get(const std::string& url, bool follow = true) {
    curl_easy_setopt(curl_, CURLOPT_HTTPGET, 1L);
    return Perform(url, follow);
  }
  // POSTs a form to `url` (following redirects as GETs).
  long PostForm(const std::string& url, const std::string& form) {
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, form.c_str());
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE, static_cast<long>(form.size()));
    curl_easy_setopt(curl_, CURLOPT_POSTREDIR, 0L);
    return Perform(url, true);
  }
  [[nodiscard]] std::string EffectiveUrl() const {
    char* url = nullptr;
    curl_easy_getinfo(curl_, CURLINFO_EFFECTIVE_URL, &url);
    return url != nullptr ? url : "";
  }
  // The value of cookie `name` in the jar ("" when absent).
  [[nodiscard]] std::string Cookie(const std::string& name) const {
    curl_slist* list = nullptr;
    curl_easy_getinfo(curl_, CURLINFO_COOKIELIST, &list);
    std::string value;
    for (auto* l = list; l != nullptr; l = l->next) {
      // Netscape format: domain, tailmatch, path, secure, expires, name, value (tab-separated).
      std::vector<std::string> f;
      std::istringstream line(l->data);
      for (std::string part; std::getline(line, part, '\t');)
        f.push_back(part);
      if (f.size() >= 7 && f[5] == name) value = f[6];
    }
    curl_slist_free_all(list);
    return value;
  }
  [[nodiscard]] const std::string& body() const { return body_; }
  [[nodiscard]] const std::vector<std::string>& locations() const { return locations_; }
  // Signs in at the provider's login page the browser is on, as `account`; the final status.
  long SignInAtProvider(const std::string& account) {
    return PostForm(EffectiveUrl(), fmt::format("prompt=login&login={}&password=any-password", account));
  }

 private:
  long Perform(const std::string& url, bool follow) {
    body_.clear();
    locations_.clear();
    curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl_, CURLOPT_FOLLOWLOCATION, follow ? 1L : 0L);
    if (curl_easy_perform(curl_) != CURLE_OK) return 0;
    long status = 0;
    curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &status);
    return status;
  }
  static std::size_t Body(char* data, std::size_t size, std::size_t n, void* out) {
    static_cast<std::string*>(out)->append(data, size * n);
    return size * n;
  }
  static std::size_t Header(char* data, std::size_t size, std::size_t n, void* out) {
    std::string line(data, size * n);
    if (line.size() > 9 && strncasecmp(line.c_str(), "location:", 9) == 0) {
      auto value = line.substr(9);
      while (!value.empty() && (value.front() == ' '))
        value.erase(0, 1);
      while (!value.empty() && (value.back() == '\r' || value.back() == '\n'))
        value.pop_back();
      static_cast<std::vector<std::string>*>(out)->push_back(value);
    }
    return size * n;
  }

  CURL* curl_;
  std::string body_;
  std::vector<std::string> locations_;
};

// The percent-decoded `error` of the console's login page the admin redirected to ("" when none).
std::string LoginPageError(const Browser& b) {
  for (const auto& l : b.locations()) {
    const auto at = l.find("#/login?error=");
    if (at == std::string::npos) continue;
    const std::string encoded = l.substr(at + 14);
    std::string out;
    for (std::size_t i = 0; i < encoded.size(); ++i) {
      if (encoded[i] == '%' && i + 2 < encoded.size()) {
        out += static_cast<char>(std::stoi(encoded.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        out += encoded[i];
      }
    }
    return out;
  }
  return "";
}

class SsoE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    dir_ = new fs::path(fs::temp_directory_path() / fmt::format("cronwheel-sso-{}", ::getpid()));
    fs::create_directories(*dir_);
  }
  static void TearDownTestSuite() {
    provider_.reset();
    slapd_.reset();
    fs::remove_all(*dir_);
    delete dir_;
  }

  // Starts the OpenID provider (once) for an admin that will listen on `admin_port`.
  static void StartProvider(int admin_port) {
    const auto node = FindInPath("node");
    const auto program = fs::path(CRONWHEEL_SOURCE_DIR) / "tests/e2e/oidc_provider/server.mjs";
    ASSERT_FALSE(node.empty()) << "node is not in PATH: run scripts/setup --web";
    ASSERT_TRUE(fs::exists(program.parent_path() / "node_modules/oidc-provider/package.json"))
        << "the npm oidc-provider is not installed: run scripts/setup --web";
    const json config{
        {"clients",
         {{{"client_id", "cronwheel"},
           {"client_secret", kClientSecret},
           {"redirect_uris",
            {fmt::format("http://127.0.0.1:{}/api/v1/auth/oidc/test/callback", admin_port),
             fmt::format("http://127.0.0.1:{}/api/v1/auth/oidc/mail/callback", admin_port)}}}}},
        {"accounts",
         {{"alice", {{"email", "alice@example.org"}, {"name", "Alice"}, {"groups", {"cw-admins"}}}},
          {"bob", {{"email", "bob@example.org"}, {"name", "Bob"}, {"groups", {"staff", "e2e-operators"}}}},
          {"carol", {{"email", "carol@example.org"}, {"name", "Carol"}, {"groups", {"staff"}}}},
          {"dave", {{"email", "dave@example.org"}, {"name", "Dave"}, {"groups", {"cw-admins"}}}},
          // Security review 2, N2: another account of the provider that calls itself bob (providers let
          // users choose their preferred_username), and one whose e-mail address is not verified.
          {"mallory",
           {{"email", "mallory@example.org"},
            {"name", "Mallory"},
            {"preferred_username", "bob"},
            {"groups", {"cw-admins"}}}},
          {"frank",
           {{"email", "frank@example.org"},
            {"name", "Frank"},
            {"email_verified", false},
            {"groups", {"cw-admins"}}}}}},
        {"max_seconds", 600},
        {"parent_pid", ::getpid()}};
    const auto config_path = *dir_ / "provider.json";
    std::ofstream(config_path) << config.dump();
    const auto log = *dir_ / "provider.log";
    provider_ = std::make_unique<ChildProcess>(ChildProcess::Options{
        .program = node, .args = {program.string(), config_path.string()}, .log_path = log.string()});
    const auto ready = AwaitJsonLine(*provider_, log, "issuer");
    ASSERT_TRUE(ready) << "the OpenID provider did not start: " << provider_->LogTail();
    issuer_ = ready->at("issuer").get<std::string>();
  }

  // Starts the LDAP server (once); its JSON line (ldap_url, ldaps_url, ca_file, reader_dn, ...).
  static const json& StartSlapd() {
    if (!slapd_) {
      const auto python = FindInPath("python3");
      EXPECT_FALSE(python.empty()) << "python3 is not in PATH: run scripts/setup";
      EXPECT_TRUE(fs::exists("/usr/sbin/slapd")) << "slapd is not installed: run scripts/setup";
      const auto log = *dir_ / "slapd.log";
      slapd_ = std::make_unique<ChildProcess>(ChildProcess::Options{
          .program = python,
          .args = {(fs::path(CRONWHEEL_SOURCE_DIR) / "tests/tools/slapd_server.py").string(), "--max-seconds",
                   "600", "--parent-pid", std::to_string(::getpid())},
          .log_path = log.string()});
      const auto ready = AwaitJsonLine(*slapd_, log, "ldaps_url");
      EXPECT_TRUE(ready) << "slapd did not start: " << slapd_->LogTail();
      slapd_info_ = ready.value_or(json::object());
    }
    return slapd_info_;
  }

  // The [ldap] table of an SSO file for the test directory: over ldaps:// and binding as the user's DN, or
  // over ldap:// with StartTLS, searching for the user as the reader first.
  static std::string LdapTable(bool search_first) {
    const auto& d = StartSlapd();
    std::string table = fmt::format(R"toml(
[ldap]
url = "{}"
start_tls = {}
ca_file = "{}"
group_base = "ou=groups,dc=example,dc=org"
group_filter = "(member={{dn}})"
group_attribute = "cn"
timeout_s = 5
)toml",
                                    d.value(search_first ? "ldap_url" : "ldaps_url", ""), search_first,
                                    d.value("ca_file", ""));
    table +=
        search_first
            ? fmt::format(
                  "bind_dn = \"{}\"\nbind_password = \"{}\"\nuser_base = \"ou=people,dc=example,dc=org\"\n"
                  "user_filter = \"(uid={{username}})\"\n",
                  d.value("reader_dn", ""), d.value("reader_password", ""))
            : "user_dn = \"uid={username},ou=people,dc=example,dc=org\"\n";
    table += R"toml(
[[ldap.roles]]
value = "cronwheel-admins"
admin = true
[[ldap.roles]]
value = "payroll-operators"
group = "e2e-app"
role = "OPERATOR"
)toml";
    return table;
  }

  // An admin whose SSO file names the provider (and `ldap_table` when given).
  // Every test's admin listens on the one port the provider's redirect URI names (one cluster at a time).
  static std::unique_ptr<Cluster> StartAdmin(const std::string& ldap_table = "") {
    if (admin_port_ == 0) admin_port_ = FreeTcpPort();
    const int port = admin_port_;
    if (!provider_) StartProvider(port);
    const auto sso = *dir_ / fmt::format("sso-{}.toml", port);
    std::ofstream(sso) << fmt::format(R"toml(
[[oidc]]
name = "test"
title = "Test provider"
issuer = "{}"
client_id = "cronwheel"
client_secret = "{}"
redirect_url = "http://127.0.0.1:{}/api/v1/auth/oidc/test/callback"
scopes = ["openid", "profile", "email", "groups"]
[[oidc.roles]]
value = "cw-admins"
admin = true
[[oidc.roles]]
value = "e2e-operators"
group = "e2e-app"
role = "OPERATOR"
[[oidc.roles]]
value = "e2e-operators"
group = "no-such-app"
role = "VIEWER"
[[oidc]]
name = "mail"
title = "Test provider by e-mail"
issuer = "{}"
client_id = "cronwheel"
client_secret = "{}"
redirect_url = "http://127.0.0.1:{}/api/v1/auth/oidc/mail/callback"
scopes = ["openid", "profile", "email", "groups"]
username_claim = "email"
[[oidc.roles]]
value = "cw-admins"
admin = true
{}
)toml",
                                      issuer_, kClientSecret, port, issuer_, kClientSecret, port, ldap_table);
    return std::make_unique<Cluster>(Cluster::Options{
        .admins = 1,
        .executors = 0,
        // More failed logins than the throttle's default 5 from one address come from the bad-input cases.
        .admin_args = {"--sso-config", sso.string(), "--cookie-secure", "false", "--login-max-failures",
                       "50"},
        .admin_env = {{"CRONWHEEL_ADMIN_PASSWORD", kAdminPassword}},
        .first_admin_port = port});
  }

  // A new "browser" signs in through the provider as `account`; returns it (its jar holds the session).
  static std::unique_ptr<Browser> SignIn(const Cluster& c, const std::string& account,
                                         const std::string& return_to = "", const std::string& via = "test") {
    auto b = std::make_unique<Browser>();
    const auto start = fmt::format("http://127.0.0.1:{}/api/v1/auth/oidc/{}/start{}", c.admin_port(0), via,
                                   return_to.empty() ? "" : "?return_to=" + return_to);
    EXPECT_EQ(b->Get(start), 200) << b->body();
    EXPECT_THAT(b->EffectiveUrl(), HasSubstr(issuer_ + "/interaction/")) << "the provider's login page";
    EXPECT_EQ(b->SignInAtProvider(account), 200);
    return b;
  }

  static json Me(const Cluster& c, const Browser& b, int* status = nullptr) {
    HttpCaller http(c.admin_port(0));
    const auto r = http.Send("GET", "/api/v1/auth/me", {{"Cookie", "cw_session=" + b.Cookie("cw_session")}});
    if (status != nullptr) *status = r.status;
    return r.Json().value_or(json());
  }

  static void Tamper(const std::string& kind) {
    const auto port = std::stoi(issuer_.substr(issuer_.rfind(':') + 1));
    HttpCaller http(port);
    ASSERT_EQ(http.Send("POST", "/__test/tamper", {}, json{{"kind", kind}}.dump()).status, 204);
  }

  static fs::path* dir_;
  static std::unique_ptr<ChildProcess> provider_;
  static std::string issuer_;
  static std::unique_ptr<ChildProcess> slapd_;
  static json slapd_info_;
  static int admin_port_;
};

fs::path* SsoE2E::dir_ = nullptr;
std::unique_ptr<ChildProcess> SsoE2E::provider_;
std::string SsoE2E::issuer_;
std::unique_ptr<ChildProcess> SsoE2E::slapd_;
json SsoE2E::slapd_info_;
int SsoE2E::admin_port_ = 0;

TEST_F(SsoE2E, OpenIdSignInCreatesTheUserWithTheRolesItsGroupsMapTo) {
  auto cluster = StartAdmin();
  const int group = cluster->AddGroup();  // app_name e2e-app

  // The login page's offer.
  HttpCaller http(cluster->admin_port(0));
  const auto offer = http.Send("GET", "/api/v1/auth/providers").Json();
  ASSERT_TRUE(offer);
  EXPECT_EQ((*offer)["oidc"][0]["name"], "test");
  EXPECT_EQ((*offer)["oidc"][0]["title"], "Test provider");

  // alice is in cw-admins: a global ADMIN, back on the console page she asked for.
  auto alice = SignIn(*cluster, "alice", "%23%2Fjobs");
  ASSERT_FALSE(alice->Cookie("cw_session").empty())
      << "no session; locations: " << ::testing::PrintToString(alice->locations());
  EXPECT_EQ(alice->locations().back(), "/#/jobs");
  int status = 0;
  auto me = Me(*cluster, *alice, &status);
  ASSERT_EQ(status, 200) << me.dump();
  EXPECT_EQ(me["user"]["username"], "alice");
  EXPECT_EQ(me["user"]["role"], "ADMIN");

  // bob is in e2e-operators: OPERATOR in the group of app_name e2e-app; the rule naming an app no group has
  // is skipped (and the audit log says so).
  auto bob = SignIn(*cluster, "bob");
  me = Me(*cluster, *bob, &status);
  ASSERT_EQ(status, 200) << me.dump();
  EXPECT_EQ(me["user"]["role"], "USER");
  ASSERT_EQ(me["user"]["group_roles"].size(), 1U) << me.dump();
  EXPECT_EQ(me["user"]["group_roles"][0]["group_id"], group);
  EXPECT_EQ(me["user"]["group_roles"][0]["role"], "OPERATOR");
  EXPECT_EQ(
      cluster->Scalar("SELECT count(*) FROM app_user WHERE username = 'bob' AND login_source = 'oidc:test' "
                      "AND external_subject = 'bob' AND password_hash = '!'"),
      1);
  EXPECT_EQ(
      cluster->Scalar("SELECT count(*) FROM audit_log WHERE action = 'user.login' AND via = 'oidc:test' "
                      "AND after->'skipped_groups' ? 'no-such-app'"),
      1);

  // A second sign-in finds the same user (by the token's subject), and its roles follow the provider.
  cluster->Exec(
      "UPDATE app_user_group SET role = 'ADMIN' WHERE user_id = (SELECT id FROM app_user WHERE username = "
      "'bob')");
  auto bob_again = SignIn(*cluster, "bob");
  me = Me(*cluster, *bob_again, &status);
  EXPECT_EQ(me["user"]["group_roles"][0]["role"], "OPERATOR");
  EXPECT_EQ(cluster->Scalar("SELECT count(*) FROM app_user WHERE username = 'bob'"), 1);

  // What bob does is audited as done through his provider's session; what his role does not allow is refused.
  const int job = cluster->AddJob(group, "0 0 0 1 1 ? 2099");
  const httplib::Headers bob_headers{{"Cookie", "cw_session=" + bob_again->Cookie("cw_session")},
                                     {"X-CSRF-Token", me["csrf_token"].get<std::string>()}};
  const auto trigger = http.Send("POST", fmt::format("/api/v1/jobs/{}/trigger", job), bob_headers, "{}");
  EXPECT_EQ(trigger.status, 202) << trigger.body;
  EXPECT_EQ(cluster->Scalar(
                fmt::format("SELECT count(*) FROM audit_log WHERE username = 'bob' AND entity_id = '{}' "
                            "AND via = 'session (oidc:test)'",
                            job)),
            1);
  const auto drain = http.Send("POST", fmt::format("/api/v1/groups/{}/drain", group), bob_headers, "{}");
  EXPECT_EQ(drain.status, 403) << "an OPERATOR may not drain: " << drain.body;

  // carol's groups map to nothing: refused, and no user is written.
  auto carol = SignIn(*cluster, "carol");
  EXPECT_TRUE(carol->Cookie("cw_session").empty());
  EXPECT_THAT(LoginPageError(*carol), HasSubstr("give it no role in cronwheel"));
  EXPECT_EQ(cluster->Scalar("SELECT count(*) FROM app_user WHERE username = 'carol'"), 0);

  // A local account is never taken over: "dave" exists here with a password.
  HttpCaller admin_http(cluster->admin_port(0));
  const auto admin = cwtest::Login(admin_http, "admin", kAdminPassword);
  ASSERT_TRUE(admin);
  ASSERT_EQ(
      admin_http
          .Send("POST", "/api/v1/users", SessionHeaders(*admin),
                json{{"username", "dave"}, {"password", "dave-local-password"}, {"role", "USER"}}.dump())
          .status,
      201);
  auto dave = SignIn(*cluster, "dave");
  EXPECT_TRUE(dave->Cookie("cw_session").empty());
  EXPECT_THAT(LoginPageError(*dave), HasSubstr("is already a local user"));
  EXPECT_THAT(LoginPageError(*dave), HasSubstr("subject 'dave'"));
  // An ADMIN links dave's identity to the local user explicitly: then the provider's dave is that user.
  const int dave_id = static_cast<int>(cluster->Scalar("SELECT id FROM app_user WHERE username = 'dave'"));
  const auto link =
      admin_http.Send("PUT", fmt::format("/api/v1/users/{}/identity", dave_id), SessionHeaders(*admin),
                      json{{"source", "oidc:test"}, {"subject", "dave"}}.dump());
  ASSERT_EQ(link.status, 200) << link.body;
  EXPECT_EQ(link.Json()->at("login_source"), "oidc:test");
  EXPECT_EQ(link.Json()->at("external_subject"), "dave");
  auto dave_linked = SignIn(*cluster, "dave");
  me = Me(*cluster, *dave_linked, &status);
  ASSERT_EQ(status, 200) << me.dump();
  EXPECT_EQ(me["user"]["id"], dave_id);

  // Logout ends the cronwheel session and names the provider's logout.
  const auto logout = http.Send("POST", "/api/v1/auth/logout",
                                {{"Cookie", "cw_session=" + alice->Cookie("cw_session")},
                                 {"X-CSRF-Token", Me(*cluster, *alice)["csrf_token"].get<std::string>()}},
                                "{}");
  ASSERT_EQ(logout.status, 200) << logout.body;
  EXPECT_THAT(logout.Json()->value("provider_logout_url", ""), HasSubstr(issuer_));
  Me(*cluster, *alice, &status);
  EXPECT_EQ(status, 401);
}

// Security review 2, N2: a second account of the same provider (another `sub`) whose preferred_username was
// an existing user's signed in as that user, and a token it made acted as global ADMIN once the real user
// signed in again. A user is found by its (provider, subject) link alone now; the name is refused.
TEST_F(SsoE2E, N2_ASecondAccountWithTheSameUserNameDoesNotBecomeTheFirstUser) {
  auto cluster = StartAdmin();
  cluster->AddGroup();  // app_name e2e-app
  auto bob = SignIn(*cluster, "bob");
  int status = 0;
  auto me = Me(*cluster, *bob, &status);
  ASSERT_EQ(status, 200) << me.dump();
  const auto bob_id = me["user"]["id"].get<int>();

  // mallory's ID token says preferred_username "bob" (and cw-admins): refused, no session, bob untouched.
  auto mallory = SignIn(*cluster, "mallory");
  EXPECT_TRUE(mallory->Cookie("cw_session").empty()) << "mallory signed in";
  EXPECT_THAT(LoginPageError(*mallory), HasSubstr("the username 'bob' is already a oidc:test user"));
  EXPECT_THAT(LoginPageError(*mallory), HasSubstr("subject 'mallory'"));
  EXPECT_EQ(cluster->Scalar("SELECT count(*) FROM app_user WHERE login_source = 'oidc:test' AND "
                            "external_subject = 'mallory'"),
            0);
  EXPECT_EQ(cluster->Scalar(fmt::format("SELECT count(*) FROM app_user WHERE id = {} AND username = 'bob' "
                                        "AND role = 'USER' AND external_subject = 'bob'",
                                        bob_id)),
            1);
  EXPECT_EQ(cluster->Scalar("SELECT count(*) FROM audit_log WHERE action = 'user.login_failed' AND via = "
                            "'oidc:test' AND after->>'reason' LIKE '%subject ''mallory''%'"),
            1);
  // bob still signs in as himself, with his own roles.
  auto bob_again = SignIn(*cluster, "bob");
  me = Me(*cluster, *bob_again, &status);
  ASSERT_EQ(status, 200) << me.dump();
  EXPECT_EQ(me["user"]["id"], bob_id);
  EXPECT_EQ(me["user"]["role"], "USER");

  // The link is an ADMIN's to make: an unknown source or an empty subject is refused, naming the field.
  HttpCaller http(cluster->admin_port(0));
  const auto admin = cwtest::Login(http, "admin", kAdminPassword);
  ASSERT_TRUE(admin);
  const auto path = fmt::format("/api/v1/users/{}/identity", bob_id);
  auto r =
      http.Send("PUT", path, SessionHeaders(*admin), json{{"source", "oidc:nope"}, {"subject", "x"}}.dump());
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_THAT(r.body, HasSubstr("valid: oidc:test, oidc:mail"));
  r = http.Send("PUT", path, SessionHeaders(*admin), json{{"source", "oidc:test"}, {"subject", ""}}.dump());
  EXPECT_EQ(r.status, 400) << r.body;
  // A USER may not link anything.
  r = http.Send("PUT", path,
                {{"Cookie", "cw_session=" + bob_again->Cookie("cw_session")},
                 {"X-CSRF-Token", me["csrf_token"].get<std::string>()}},
                json{{"source", "oidc:test"}, {"subject", "mallory"}}.dump());
  EXPECT_EQ(r.status, 403) << r.body;
  // Unlinking: bob's sessions end, and the provider's bob is refused (the name is a local user's now).
  r = http.Send("DELETE", path, SessionHeaders(*admin));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()->at("login_source"), "local");
  Me(*cluster, *bob_again, &status);
  EXPECT_EQ(status, 401);
  auto bob_unlinked = SignIn(*cluster, "bob");
  EXPECT_TRUE(bob_unlinked->Cookie("cw_session").empty());
  EXPECT_THAT(LoginPageError(*bob_unlinked), HasSubstr("is already a local user"));
}

// Security review 2, N2: an e-mail address names a user only when the provider says it is verified
// (email_verified true; before, only an explicit false was refused).
TEST_F(SsoE2E, N2_AnUnverifiedEmailAddressDoesNotNameAUser) {
  auto cluster = StartAdmin();
  auto frank = SignIn(*cluster, "frank", "", "mail");
  EXPECT_TRUE(frank->Cookie("cw_session").empty());
  EXPECT_THAT(LoginPageError(*frank), HasSubstr("email_verified is false, must be true"));
  EXPECT_EQ(cluster->Scalar("SELECT count(*) FROM app_user WHERE username = 'frank@example.org'"), 0);
  // A verified one does.
  auto alice = SignIn(*cluster, "alice", "", "mail");
  int status = 0;
  const auto me = Me(*cluster, *alice, &status);
  ASSERT_EQ(status, 200) << me.dump();
  EXPECT_EQ(me["user"]["username"], "alice@example.org");
  EXPECT_EQ(me["user"]["login_source"], "oidc:mail");
}

TEST_F(SsoE2E, ATamperedIdTokenIsRefusedWithItsReason) {
  auto cluster = StartAdmin();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"signature", "signature does not verify"}, {"audience", "audience"},
      {"nonce", "nonce is not the one"},          {"expiry", "expired at"},
      {"issuer", "issuer 'http://evil.example'"}, {"alg_none", "algorithm 'none' is not accepted"},
  };
  for (const auto& [kind, reason] : cases) {
    SCOPED_TRACE(kind);
    Tamper(kind);
    auto b = SignIn(*cluster, "alice");
    EXPECT_TRUE(b->Cookie("cw_session").empty()) << "a session started";
    EXPECT_THAT(LoginPageError(*b), HasSubstr(reason));
  }
  EXPECT_EQ(cluster->Scalar("SELECT count(*) FROM app_user WHERE username = 'alice'"), 0);
  EXPECT_EQ(cluster->Scalar(
                "SELECT count(*) FROM audit_log WHERE action = 'user.login_failed' AND via = 'oidc:test'"),
            static_cast<std::int64_t>(cases.size()));
  // The next, untouched token signs in.
  auto b = SignIn(*cluster, "alice");
  EXPECT_FALSE(b->Cookie("cw_session").empty()) << LoginPageError(*b);
}

TEST_F(SsoE2E, ASignInIsFinishedOnlyOnceAndOnlyByTheBrowserThatBeganIt) {
  auto cluster = StartAdmin();
  // The attacker begins a sign-in and hands its provider URL to the victim's browser (login CSRF).
  Browser attacker;
  ASSERT_EQ(
      attacker.Get(fmt::format("http://127.0.0.1:{}/api/v1/auth/oidc/test/start", cluster->admin_port(0)),
                   false),
      303);
  ASSERT_FALSE(attacker.locations().empty());
  Browser victim;
  ASSERT_EQ(victim.Get(attacker.locations().front()), 200);
  ASSERT_EQ(victim.SignInAtProvider("alice"), 200);
  EXPECT_TRUE(victim.Cookie("cw_session").empty());
  EXPECT_THAT(LoginPageError(victim), HasSubstr("begun in another browser"));

  // A callback URL replayed: its state was taken by the first use.
  auto b = std::make_unique<Browser>();
  ASSERT_EQ(b->Get(fmt::format("http://127.0.0.1:{}/api/v1/auth/oidc/test/start", cluster->admin_port(0))),
            200);
  ASSERT_EQ(b->SignInAtProvider("alice"), 200);
  ASSERT_FALSE(b->Cookie("cw_session").empty());
  std::string callback;
  for (const auto& l : b->locations()) {
    if (l.find("/api/v1/auth/oidc/test/callback?") != std::string::npos) callback = l;
  }
  ASSERT_FALSE(callback.empty());
  b->Get(callback);
  EXPECT_THAT(LoginPageError(*b), HasSubstr("unknown, used or older than ten minutes"));

  // An unknown provider is a 404, not a redirect.
  HttpCaller http(cluster->admin_port(0));
  EXPECT_EQ(http.Send("GET", "/api/v1/auth/oidc/nope/start").status, 404);
}

TEST_F(SsoE2E, RequiringSsoLeavesLocalPasswordsToGlobalAdminsOnly) {
  auto cluster = StartAdmin();
  HttpCaller http(cluster->admin_port(0));
  const auto admin = cwtest::Login(http, "admin", kAdminPassword);
  ASSERT_TRUE(admin);
  ASSERT_EQ(
      http.Send("POST", "/api/v1/users", SessionHeaders(*admin),
                json{{"username", "erin"}, {"password", "erin-local-password"}, {"role", "USER"}}.dump())
          .status,
      201);
  const auto erin = cwtest::Login(http, "erin", "erin-local-password");
  ASSERT_TRUE(erin);

  // Only a global ADMIN sets the policy; a body other than {"require_sso": bool} is refused and changes
  // nothing.
  EXPECT_EQ(http.Send("PUT", "/api/v1/auth/policy", SessionHeaders(*erin), R"({"require_sso":true})").status,
            403);
  const auto bad =
      http.Send("PUT", "/api/v1/auth/policy", SessionHeaders(*admin), R"({"require_sso":"yes"})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_THAT(bad.body, HasSubstr("require_sso"));
  const auto on = http.Send("PUT", "/api/v1/auth/policy", SessionHeaders(*admin), R"({"require_sso":true})");
  ASSERT_EQ(on.status, 200) << on.body;
  EXPECT_EQ(on.Json()->at("sessions_ended"), 1) << "erin's session";

  // erin's session ended and her password no longer signs her in; the admin's still does.
  EXPECT_EQ(http.Send("GET", "/api/v1/auth/me", SessionHeaders(*erin, false)).status, 401);
  HttpReply refused;
  EXPECT_FALSE(cwtest::Login(http, "erin", "erin-local-password", &refused));
  EXPECT_EQ(refused.status, 403);
  EXPECT_THAT(refused.body, HasSubstr("requires single sign-on"));
  EXPECT_TRUE(cwtest::Login(http, "admin", kAdminPassword));
  EXPECT_EQ(http.Send("GET", "/api/v1/auth/providers").Json()->at("require_sso"), true);
  // A wrong password is still just wrong (the policy tells nobody which local users exist).
  EXPECT_FALSE(cwtest::Login(http, "erin", "not-erins-password", &refused));
  EXPECT_EQ(refused.status, 401);
  // Single sign-on still works.
  auto alice = SignIn(*cluster, "alice");
  EXPECT_FALSE(alice->Cookie("cw_session").empty()) << LoginPageError(*alice);

  ASSERT_EQ(
      http.Send("PUT", "/api/v1/auth/policy", SessionHeaders(*admin), R"({"require_sso":false})").status,
      200);
  EXPECT_TRUE(cwtest::Login(http, "erin", "erin-local-password"));
}

TEST_F(SsoE2E, LdapLoginsBindAsTheUserAndMapTheirDirectoryGroups) {
  for (const bool search_first : {false, true}) {
    SCOPED_TRACE(search_first ? "ldap:// + StartTLS, search as the reader, then bind"
                              : "ldaps://, bind as the user's DN");
    auto cluster = StartAdmin(LdapTable(search_first));
    const int group = cluster->AddGroup();
    HttpCaller http(cluster->admin_port(0));
    EXPECT_EQ(http.Send("GET", "/api/v1/auth/providers").Json()->at("ldap"), true);

    // alice is in cronwheel-admins: a global ADMIN, created on her first login.
    HttpReply reply;
    const auto alice = cwtest::Login(http, "alice", "alice-pass", &reply);
    ASSERT_TRUE(alice) << reply.status << " " << reply.body;
    EXPECT_EQ(reply.Json()->at("user").at("role"), "ADMIN");
    EXPECT_EQ(reply.Json()->at("user").at("login_source"), "ldap");
    // Linked by the entry's entryUUID (RFC 4530), which neither a rename nor a reused uid gives again
    // (security review 2, N2).
    EXPECT_EQ(cluster->Scalar(
                  "SELECT count(*) FROM app_user WHERE username = 'alice' AND login_source = 'ldap' AND "
                  "external_subject ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'"),
              1);
    // bob is in payroll-operators: OPERATOR of the e2e-app group.
    const auto bob = cwtest::Login(http, "bob", "bob-pass", &reply);
    ASSERT_TRUE(bob) << reply.body;
    const auto roles = reply.Json()->at("user").at("group_roles");
    ASSERT_EQ(roles.size(), 1U) << roles.dump();
    EXPECT_EQ(roles[0]["group_id"], group);
    EXPECT_EQ(roles[0]["role"], "OPERATOR");
    // carol's only group, everyone, maps to nothing: 403, no user.
    EXPECT_FALSE(cwtest::Login(http, "carol", "carol-pass", &reply));
    EXPECT_EQ(reply.status, 403);
    EXPECT_THAT(reply.body, HasSubstr("give it no role in cronwheel"));
    EXPECT_EQ(cluster->Scalar("SELECT count(*) FROM app_user WHERE username = 'carol'"), 0);
    // A wrong password, an empty one (LDAP's anonymous bind), an unknown user and a filter injection: 401.
    for (const auto& [user, password] :
         std::vector<std::pair<std::string, std::string>>{{"alice", "wrong-pass"},
                                                          {"alice", ""},
                                                          {"nobody", "x-pass"},
                                                          {"*", "alice-pass"},
                                                          {"a*)(uid=*", "alice-pass"}}) {
      EXPECT_FALSE(cwtest::Login(http, user, password, &reply)) << user;
      EXPECT_TRUE(reply.status == 401 || reply.status == 400)
          << user << ": " << reply.status << " " << reply.body;
    }
    // The local admin still signs in with its own password; the audit log says how each login came.
    EXPECT_TRUE(cwtest::Login(http, "admin", kAdminPassword));
    EXPECT_EQ(cluster->Scalar("SELECT count(*) FROM audit_log WHERE action = 'user.login' AND via = 'ldap'"),
              2);
    EXPECT_EQ(
        cluster->Scalar("SELECT count(*) FROM audit_log WHERE action = 'user.login' AND via = 'password'"),
        1);
    // An LDAP user's password is the directory's: an ADMIN cannot set one here.
    const auto set = http.Send("PUT", fmt::format("/api/v1/users/{}", bob->user_id), SessionHeaders(*alice),
                               json{{"password", "a-new-local-password"}}.dump());
    EXPECT_EQ(set.status, 400);
    EXPECT_THAT(set.body, HasSubstr("signs in through ldap"));
  }
}

// Security review 2, N2, for the directory: users are linked by the entry's entryUUID, which a rename does
// not change and a reused uid does not give again. A user an earlier version linked by its DN is re-linked
// to the entryUUID at its first sign-in, and stays the same user.
TEST_F(SsoE2E, N2_AnLdapUserLinkedByItsDnIsRelinkedToItsEntryUuid) {
  auto cluster = StartAdmin(LdapTable(false));
  cluster->AddGroup();
  cluster->Exec(
      "INSERT INTO app_user (username, password_hash, role, login_source, external_subject, created_ms, "
      "updated_ms) VALUES ('bob', '!', 'USER', 'ldap', 'uid=bob,ou=people,dc=example,dc=org', 1, 1)");
  const auto before = cluster->Scalar("SELECT id FROM app_user WHERE username = 'bob'");
  HttpCaller http(cluster->admin_port(0));
  HttpReply reply;
  ASSERT_TRUE(cwtest::Login(http, "bob", "bob-pass", &reply)) << reply.status << " " << reply.body;
  EXPECT_EQ(reply.Json()->at("user").at("id"), before);
  EXPECT_EQ(
      cluster->Scalar(fmt::format(
          "SELECT count(*) FROM app_user WHERE id = {} AND external_subject ~ '^[0-9a-f]{{8}}-'", before)),
      1);
  // A second sign-in finds bob by the entryUUID.
  ASSERT_TRUE(cwtest::Login(http, "bob", "bob-pass", &reply)) << reply.body;
  EXPECT_EQ(reply.Json()->at("user").at("id"), before);
  EXPECT_EQ(cluster->Scalar("SELECT count(*) FROM app_user WHERE login_source = 'ldap'"), 1);
}

TEST_F(SsoE2E, AnUnreachableOrUntrustedDirectoryIsA503NamingIt) {
  const auto& d = StartSlapd();
  // The directory's certificate checked against a CA that did not sign it.
  std::string table = LdapTable(false);
  const auto ca = d.value("ca_file", "");
  table.replace(table.find(ca), ca.size(), "/etc/ssl/certs/ca-certificates.crt");
  auto cluster = StartAdmin(table);
  HttpCaller http(cluster->admin_port(0));
  HttpReply reply;
  EXPECT_FALSE(cwtest::Login(http, "alice", "alice-pass", &reply));
  EXPECT_EQ(reply.status, 503) << reply.body;
  EXPECT_THAT(reply.body, HasSubstr(d.value("ldaps_url", "")));
  EXPECT_EQ(cluster->Scalar("SELECT count(*) FROM app_user WHERE username = 'alice'"), 0);
}

}  // namespace
