#include "cronwheel/config.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace {

using namespace std::chrono_literals;

struct Fixture {
  std::string listen = "127.0.0.1:8080";
  int threads = 200;
  bool scripts = false;
  std::chrono::seconds beat = 30s;
  std::vector<std::string> admins;
  std::string token;
  std::map<std::string, std::string> env;
  cronwheel::ConfigLoader settings{"prog", "test"};

  Fixture() {
    settings.Add("listen", &listen, "address")
        .Add("fast_pool_threads", &threads, "threads", 1, 1000)
        .Add("enable_scripts", &scripts, "scripts")
        .Add("heartbeat_interval_s", &beat, "beat", 1s, 300s)
        .Add("admin_addresses", &admins, "admins")
        .AddSecret("access_token", &token, "token");
  }
  std::optional<int> Parse(std::vector<const char*> args) {
    args.insert(args.begin(), "prog");
    return settings.Parse(static_cast<int>(args.size()), args.data(), [this](const char* n) -> const char* {
      auto it = env.find(n);
      return it == env.end() ? nullptr : it->second.c_str();
    });
  }
};

TEST(ConfigLoader, NamesFollowTheKey) {
  EXPECT_EQ(cronwheel::ConfigLoader::EnvName("fast_pool_threads"), "CRONWHEEL_FAST_POOL_THREADS");
  EXPECT_EQ(cronwheel::ConfigLoader::FlagName("fast_pool_threads"), "--fast-pool-threads");
}

TEST(ConfigLoader, DefaultsStayWithoutAnyInput) {
  Fixture f;
  EXPECT_EQ(f.Parse({}), std::nullopt);
  EXPECT_EQ(f.listen, "127.0.0.1:8080");
  EXPECT_EQ(f.threads, 200);
  EXPECT_EQ(f.settings.SourceOf("listen"), "default");
}

TEST(ConfigLoader, FlagBeatsEnvironmentBeatsFile) {
  const auto path = std::filesystem::temp_directory_path() / "cronwheel_settings_test.toml";
  {
    std::ofstream out(path);
    out << "listen = \"0.0.0.0:1\"\nfast_pool_threads = 7\nenable_scripts = true\n"
           "admin_addresses = [\"http://a:1\", \"http://b:2\"]\nheartbeat_interval_s = 9\n";
  }
  Fixture f;
  f.env["CRONWHEEL_CONFIG"] = path.string();
  f.env["CRONWHEEL_LISTEN"] = "0.0.0.0:2";
  f.env["CRONWHEEL_FAST_POOL_THREADS"] = "8";
  EXPECT_EQ(f.Parse({"--fast-pool-threads", "9"}), std::nullopt);
  EXPECT_EQ(f.threads, 9);
  EXPECT_EQ(f.settings.SourceOf("fast_pool_threads"), "flag");
  EXPECT_EQ(f.listen, "0.0.0.0:2");
  EXPECT_EQ(f.settings.SourceOf("listen"), "env");
  EXPECT_TRUE(f.scripts);
  EXPECT_EQ(f.settings.SourceOf("enable_scripts"), "file");
  EXPECT_EQ(f.beat, 9s);
  EXPECT_EQ(f.admins, (std::vector<std::string>{"http://a:1", "http://b:2"}));
  std::filesystem::remove(path);
}

TEST(ConfigLoader, CommaSeparatedListFromEnvironment) {
  Fixture f;
  f.env["CRONWHEEL_ADMIN_ADDRESSES"] = " http://a:1 ,http://b:2,, ";
  EXPECT_EQ(f.Parse({}), std::nullopt);
  EXPECT_EQ(f.admins, (std::vector<std::string>{"http://a:1", "http://b:2"}));
}

TEST(ConfigLoader, InvalidValuesAreErrorsNamingTheSourceAndTheRange) {
  Fixture f;
  f.env["CRONWHEEL_FAST_POOL_THREADS"] = "lots";
  testing::internal::CaptureStderr();
  EXPECT_EQ(f.Parse({}), 2);
  const auto err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("CRONWHEEL_FAST_POOL_THREADS"), std::string::npos) << err;
  EXPECT_NE(err.find("'lots'"), std::string::npos) << err;
  EXPECT_NE(err.find("from 1 to 1000"), std::string::npos) << err;
  EXPECT_EQ(f.threads, 200);
}

TEST(ConfigLoader, OutOfRangeAndBadBooleanAreRefused) {
  {
    Fixture f;
    testing::internal::CaptureStderr();
    EXPECT_EQ(f.Parse({"--heartbeat-interval-s", "0"}), 2);
    EXPECT_NE(testing::internal::GetCapturedStderr().find("seconds from 1 to 300"), std::string::npos);
  }
  {
    Fixture f;
    testing::internal::CaptureStderr();
    EXPECT_EQ(f.Parse({"--enable-scripts", "maybe"}), 2);
    EXPECT_NE(testing::internal::GetCapturedStderr().find("expected true or false"), std::string::npos);
  }
}

// A switch whose default depends on other settings (the admin's cookie_secure): unset until a source sets
// it, from a flag, the environment or a TOML boolean; --help names what unset means.
TEST(ConfigLoader, AnOptionalSwitchStaysUnsetUntilASourceSetsIt) {
  const auto parse = [](std::vector<const char*> args, std::map<std::string, std::string> env,
                        std::optional<bool>& value, std::string* out = nullptr) {
    cronwheel::ConfigLoader settings{"prog", "test"};
    settings.Add("cookie_secure", &value, "secure cookie", "true in production mode, false in dev");
    args.insert(args.begin(), "prog");
    if (out != nullptr) testing::internal::CaptureStdout();
    const auto code =
        settings.Parse(static_cast<int>(args.size()), args.data(), [&env](const char* n) -> const char* {
          auto it = env.find(n);
          return it == env.end() ? nullptr : it->second.c_str();
        });
    if (out != nullptr) *out = testing::internal::GetCapturedStdout();
    return code;
  };
  std::optional<bool> v;
  EXPECT_EQ(parse({}, {}, v), std::nullopt);
  EXPECT_FALSE(v.has_value());
  EXPECT_EQ(parse({"--cookie-secure", "false"}, {}, v), std::nullopt);
  EXPECT_EQ(v, std::optional(false));
  v.reset();
  EXPECT_EQ(parse({}, {{"CRONWHEEL_COOKIE_SECURE", "on"}}, v), std::nullopt);
  EXPECT_EQ(v, std::optional(true));
  const auto path = std::filesystem::temp_directory_path() / "cronwheel_settings_optional.toml";
  { std::ofstream(path) << "cookie_secure = false\n"; }
  v.reset();
  EXPECT_EQ(parse({"--config", path.c_str()}, {}, v), std::nullopt);
  EXPECT_EQ(v, std::optional(false));
  std::filesystem::remove(path);
  v.reset();
  testing::internal::CaptureStderr();
  EXPECT_EQ(parse({"--cookie-secure", "maybe"}, {}, v), 2);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("expected true or false"), std::string::npos);
  EXPECT_FALSE(v.has_value());
  std::string help;
  EXPECT_EQ(parse({"--help"}, {}, v, &help), 0);
  EXPECT_NE(help.find("[default: true in production mode, false in dev]"), std::string::npos) << help;
}

TEST(ConfigLoader, SecretsAreNeverEchoed) {
  Fixture f;
  f.token = "default-secret";
  testing::internal::CaptureStdout();
  EXPECT_EQ(f.Parse({"--help"}), 0);
  const auto help = testing::internal::GetCapturedStdout();
  EXPECT_EQ(help.find("default-secret"), std::string::npos);
  EXPECT_NE(help.find("CRONWHEEL_ACCESS_TOKEN"), std::string::npos);
  EXPECT_NE(help.find("--heartbeat-interval-s"), std::string::npos);
}

TEST(ConfigLoader, UnknownFileKeyIsAnError) {
  const auto path = std::filesystem::temp_directory_path() / "cronwheel_settings_typo.toml";
  { std::ofstream(path) << "lisen = \"x\"\n"; }
  Fixture f;
  testing::internal::CaptureStderr();
  EXPECT_EQ(f.Parse({"--config", path.c_str()}), 2);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("unknown key 'lisen'"), std::string::npos);
  std::filesystem::remove(path);
}

}  // namespace
