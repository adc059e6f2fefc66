// cronwheel-executor's settings (executor/executor_config.hpp): keys read from flags and an injected
// environment, the checks that span keys (each error naming the key, the value and what is valid, and
// leaving the library's settings as they were), and what they fill in Executor::Settings.
#include "executor/executor_config.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace {

using cronwheel::executor::ExecutorConfig;
using ::testing::HasSubstr;

// Parses `flags` and `env` into a fresh config; returns the exit code Parse asked for (nullopt: go on).
std::optional<int> Load(ExecutorConfig& config, std::vector<const char*> flags,
                        const std::map<std::string, std::string>& env = {}) {
  cronwheel::ConfigLoader loader("cronwheel-executor", "test");
  config.Declare(loader);
  flags.insert(flags.begin(), "cronwheel-executor");
  return loader.Parse(static_cast<int>(flags.size()), flags.data(), [&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

// The message of the status Validate returns ("" when it is OK); a refusal is InvalidArgument.
std::string ValidateError(ExecutorConfig& config) {
  const absl::Status valid = config.Validate();
  if (valid.ok()) return "";
  EXPECT_EQ(valid.code(), absl::StatusCode::kInvalidArgument) << valid;
  return std::string(valid.message());
}

TEST(ExecutorConfig, FlagsAndTheEnvironmentFillTheLibrarysSettings) {
  ExecutorConfig config;
  ASSERT_EQ(Load(config, {"--listen", "0.0.0.0:0", "--log-dir", "/tmp/x", "--callback-batch-size", "7"},
                 {{"CRONWHEEL_ACCESS_TOKEN", "secret"}, {"CRONWHEEL_APP_NAME", "billing"}}),
            std::nullopt);
  ASSERT_EQ(ValidateError(config), "");
  EXPECT_EQ(config.settings.app_name, "billing");
  EXPECT_EQ(config.settings.access_token, "secret");
  EXPECT_EQ(config.settings.listen_host, "0.0.0.0");
  EXPECT_EQ(config.settings.listen_port, 0);
  EXPECT_EQ(config.settings.log_dir, "/tmp/x");
  EXPECT_EQ(config.settings.callback_batch_size, 7u);
  // A wildcard listen address without advertise_address registers 127.0.0.1: said before the start.
  EXPECT_THAT(config.Warnings(), ::testing::ElementsAre(HasSubstr("advertise_address is not set")));
}

TEST(ExecutorConfig, TheDefaultsAreAProductionExecutorOnLoopbackThatNeedsAToken) {
  ExecutorConfig config;
  ASSERT_EQ(Load(config, {}), std::nullopt);
  EXPECT_EQ(config.settings.app_name, "cronwheel-executor");
  const auto error = ValidateError(config);
  EXPECT_THAT(error, HasSubstr("access_token is empty"));
  EXPECT_THAT(error, HasSubstr("CRONWHEEL_ACCESS_TOKEN"));

  ExecutorConfig dev;
  ASSERT_EQ(Load(dev, {"--mode", "dev"}), std::nullopt);
  ASSERT_EQ(ValidateError(dev), "");
  EXPECT_EQ(dev.settings.listen_host, "127.0.0.1");
  EXPECT_THAT(dev.Warnings(), ::testing::ElementsAre(HasSubstr("dev mode without an access token")));
}

TEST(ExecutorConfig, EachInvalidValueIsNamedWithWhatIsValidAndFillsNothing) {
  const struct {
    std::vector<const char*> flags;
    const char* key;
    const char* valid;
  } cases[] = {
      {{"--listen", "localhost"}, "listen", "host:port"},
      {{"--listen", "127.0.0.1:70000"}, "listen", "port"},
      {{"--mode", "staging"}, "mode = 'staging'", "production or dev"},
      {{"--log-level", "loud"}, "log_level = 'loud'", "trace, debug, info, warn or error"},
      {{"--callback-log-max-bytes", "100"}, "callback_log_max_bytes = 100", "0 (send no job log) or 1024 to"},
  };
  for (const auto& c : cases) {
    ExecutorConfig config;
    auto flags = c.flags;
    flags.insert(flags.end(), {"--access-token", "t", "--log-dir", "/tmp/other"});
    if (std::string(c.key) != "listen") flags.insert(flags.end(), {"--listen", "127.0.0.1:1234"});
    ASSERT_EQ(Load(config, flags), std::nullopt) << c.key;
    const auto error = ValidateError(config);
    EXPECT_THAT(error, HasSubstr(c.key));
    EXPECT_THAT(error, HasSubstr(c.valid)) << error;
    EXPECT_EQ(config.settings.listen_port, 9999) << c.key << ": nothing filled";
    EXPECT_NE(config.settings.log_dir, "/tmp/other") << c.key << ": nothing filled";
  }
}

TEST(ExecutorConfig, ARangeCheckedKeyOutOfRangeStopsTheParseWithExitCodeTwo) {
  ExecutorConfig config;
  EXPECT_EQ(Load(config, {"--server-threads", "65"}), 2);
  EXPECT_EQ(Load(config, {"--callback-batch-size", "0"}), 2);
  EXPECT_EQ(Load(config, {"--callback-log-max-bytes", "4194305"}), 2) << "over 4 MiB";
}

// The fire output archive: each fire's log goes with its result, at most 1 MiB by default; 0 sends none.
TEST(ExecutorConfig, TheCallbacksJobLogIsOneMebibyteByDefaultAndZeroSendsNone) {
  ExecutorConfig config;
  ASSERT_EQ(Load(config, {"--mode", "dev"}), std::nullopt);
  ASSERT_EQ(ValidateError(config), "");
  EXPECT_EQ(config.settings.callback_log_max_bytes, 1024U * 1024U);
  ExecutorConfig off;
  ASSERT_EQ(Load(off, {"--mode", "dev", "--callback-log-max-bytes", "0"}), std::nullopt);
  ASSERT_EQ(ValidateError(off), "");
  EXPECT_EQ(off.settings.callback_log_max_bytes, 0U);
}

}  // namespace
