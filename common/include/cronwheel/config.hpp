#pragma once
// The configuration of cronwheel's binaries: one TOML file, each key overridable by an environment variable
// and a command-line flag. For a key `fast_pool_threads`:
//   TOML   fast_pool_threads = 200          (file given by --config or CRONWHEEL_CONFIG; optional)
//   env    CRONWHEEL_FAST_POOL_THREADS=200
//   flag   --fast-pool-threads 200
// Precedence: flag > environment > file > built-in default. `--help` lists every key with its default,
// unit, environment variable and flag. An invalid value anywhere is an error naming the source, the key,
// the value and what is valid; unknown keys in the file are errors too (a typo must not be ignored).
// Units live in the key name (`_s`, `_ms`) and in the help text.
//
// Used by cronwheel-admin and cronwheel-executor (their main.cpp declare the keys). Not thread-safe:
// declare and parse on one thread before starting anything.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cronwheel {

class ConfigLoader final {
 public:
  // Reads an environment variable; returns nullptr when unset. Injected so tests need no real env.
  using EnvLookup = std::function<const char*(const char*)>;

  ConfigLoader(std::string program, std::string description);
  ~ConfigLoader();
  ConfigLoader(const ConfigLoader&) = delete;
  ConfigLoader& operator=(const ConfigLoader&) = delete;

  // Each Add binds a key to a variable whose current value is the default. `key` is lower_snake_case.
  ConfigLoader& Add(std::string_view key, std::string* value, std::string_view help);
  // A secret: the default is never printed by --help.
  ConfigLoader& AddSecret(std::string_view key, std::string* value, std::string_view help);
  ConfigLoader& Add(std::string_view key, std::int64_t* value, std::string_view help, std::int64_t min,
                    std::int64_t max);
  ConfigLoader& Add(std::string_view key, int* value, std::string_view help, int min, int max);
  ConfigLoader& Add(std::string_view key, bool* value, std::string_view help);
  // A switch whose default depends on other settings: nullopt until a source sets it; --help shows
  // `unset_text` as its default (e.g. "on in production mode, off in dev").
  ConfigLoader& Add(std::string_view key, std::optional<bool>* value, std::string_view help,
                    std::string_view unset_text);
  // Whole seconds / milliseconds; the key should end in _s / _ms.
  ConfigLoader& Add(std::string_view key, std::chrono::seconds* value, std::string_view help,
                    std::chrono::seconds min, std::chrono::seconds max);
  ConfigLoader& Add(std::string_view key, std::chrono::milliseconds* value, std::string_view help,
                    std::chrono::milliseconds min, std::chrono::milliseconds max);
  // Comma-separated in env and flags; a TOML array or a comma-separated string in the file.
  ConfigLoader& Add(std::string_view key, std::vector<std::string>* value, std::string_view help);

  // Parses. Returns std::nullopt when the program should go on; otherwise the exit code to return now
  // (0 after --help, 2 after an error, which has been printed to stderr).
  std::optional<int> Parse(int argc, const char* const* argv, const EnvLookup& env);
  std::optional<int> Parse(int argc, const char* const* argv);  // uses the process environment

  // Overwrites, in this process's memory, the value of every secret key (AddSecret) given in the
  // environment or as a flag, and removes those variables from the environment, so that
  // /proc/<pid>/environ and /proc/<pid>/cmdline no longer show them (cronwheel/process_secrets.hpp; security
  // review 2, F3). A value in the TOML file stays in the file. Call after Parse, before any thread starts.
  // Returns the keys whose values it overwrote.
  std::vector<std::string> ScrubSecrets(int argc, char** argv) const;

  // Where each key's value came from after Parse(): "flag", "env", "file" or "default".
  [[nodiscard]] std::string SourceOf(std::string_view key) const;

  // "fast_pool_threads" -> "CRONWHEEL_FAST_POOL_THREADS"; "fast_pool_threads" -> "--fast-pool-threads".
  static std::string EnvName(std::string_view key);
  static std::string FlagName(std::string_view key);

 private:
  template <class Int>
  ConfigLoader& AddInteger(std::string_view key, Int* value, std::string_view help, Int min, Int max);
  template <class Duration>
  ConfigLoader& AddDuration(std::string_view key, Duration* value, std::string_view help, Duration min,
                            Duration max, std::string_view unit);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cronwheel
