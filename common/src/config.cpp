#include "cronwheel/config.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <iostream>

#include "cronwheel/process_secrets.hpp"
#include "cronwheel/text.hpp"

namespace cronwheel {
namespace {

// Sets the bound variable from text; returns an error ("expected ...") or nullopt.
using FromText = std::function<std::optional<std::string>(std::string_view)>;

std::optional<std::int64_t> ParseInt(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

struct ConfigLoader::Impl {
  struct Option {
    std::string key;
    std::string help;
    std::string default_text;
    bool secret = false;
    FromText from_text;
    std::string flag_value;
    std::string source = "default";
  };
  std::string program;
  std::string description;
  std::vector<Option> options;

  void Push(std::string_view key, std::string help, std::string default_text, FromText from_text) {
    Option o;
    o.key = std::string(key);
    o.help = std::move(help);
    o.default_text = std::move(default_text);
    o.from_text = std::move(from_text);
    options.push_back(std::move(o));
  }

  Option* Find(std::string_view key) {
    for (auto& o : options) {
      if (o.key == key) return &o;
    }
    return nullptr;
  }
};

ConfigLoader::ConfigLoader(std::string program, std::string description) : impl_(std::make_unique<Impl>()) {
  impl_->program = std::move(program);
  impl_->description = std::move(description);
}
ConfigLoader::~ConfigLoader() = default;

std::string ConfigLoader::EnvName(std::string_view key) {
  std::string out = "CRONWHEEL_";
  for (char c : key)
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string ConfigLoader::FlagName(std::string_view key) {
  std::string out = "--";
  for (char c : key)
    out += c == '_' ? '-' : c;
  return out;
}

ConfigLoader& ConfigLoader::Add(std::string_view key, std::string* value, std::string_view help) {
  impl_->Push(key, std::string(help), *value, [value](std::string_view s) -> std::optional<std::string> {
    *value = std::string(s);
    return std::nullopt;
  });
  return *this;
}

ConfigLoader& ConfigLoader::AddSecret(std::string_view key, std::string* value, std::string_view help) {
  Add(key, value, help);
  impl_->options.back().secret = true;
  return *this;
}

template <class Int>
ConfigLoader& ConfigLoader::AddInteger(std::string_view key, Int* value, std::string_view help, Int min,
                                       Int max) {
  impl_->Push(key, fmt::format("{} (integer {}..{})", help, min, max), std::to_string(*value),
              [value, min, max](std::string_view s) -> std::optional<std::string> {
                const auto v = ParseInt(s);
                if (!v || *v < min || *v > max)
                  return fmt::format("expected an integer from {} to {}", min, max);
                *value = static_cast<Int>(*v);
                return std::nullopt;
              });
  return *this;
}

ConfigLoader& ConfigLoader::Add(std::string_view key, std::int64_t* value, std::string_view help,
                                std::int64_t min, std::int64_t max) {
  return AddInteger(key, value, help, min, max);
}

ConfigLoader& ConfigLoader::Add(std::string_view key, int* value, std::string_view help, int min, int max) {
  return AddInteger(key, value, help, min, max);
}

ConfigLoader& ConfigLoader::Add(std::string_view key, bool* value, std::string_view help) {
  impl_->Push(key, fmt::format("{} (true/false)", help), *value ? "true" : "false",
              [value](std::string_view s) -> std::optional<std::string> {
                if (s == "true" || s == "1" || s == "yes" || s == "on") {
                  *value = true;
                } else if (s == "false" || s == "0" || s == "no" || s == "off") {
                  *value = false;
                } else {
                  return "expected true or false";
                }
                return std::nullopt;
              });
  return *this;
}

ConfigLoader& ConfigLoader::Add(std::string_view key, std::optional<bool>* value, std::string_view help,
                                std::string_view unset_text) {
  impl_->Push(key, fmt::format("{} (true/false)", help),
              value->has_value() ? (**value ? "true" : "false") : std::string(unset_text),
              [value](std::string_view s) -> std::optional<std::string> {
                bool b = false;
                if (s == "true" || s == "1" || s == "yes" || s == "on") {
                  b = true;
                } else if (s != "false" && s != "0" && s != "no" && s != "off") {
                  return "expected true or false";
                }
                *value = b;
                return std::nullopt;
              });
  return *this;
}

template <class Duration>
ConfigLoader& ConfigLoader::AddDuration(std::string_view key, Duration* value, std::string_view help,
                                        Duration min, Duration max, std::string_view unit) {
  impl_->Push(key, fmt::format("{} ({}, {}..{})", help, unit, min.count(), max.count()),
              std::to_string(value->count()),
              [value, min, max, unit](std::string_view s) -> std::optional<std::string> {
                const auto v = ParseInt(s);
                if (!v || *v < min.count() || *v > max.count()) {
                  return fmt::format("expected whole {} from {} to {}", unit, min.count(), max.count());
                }
                *value = Duration{*v};
                return std::nullopt;
              });
  return *this;
}

ConfigLoader& ConfigLoader::Add(std::string_view key, std::chrono::seconds* value, std::string_view help,
                                std::chrono::seconds min, std::chrono::seconds max) {
  return AddDuration(key, value, help, min, max, "seconds");
}

ConfigLoader& ConfigLoader::Add(std::string_view key, std::chrono::milliseconds* value, std::string_view help,
                                std::chrono::milliseconds min, std::chrono::milliseconds max) {
  return AddDuration(key, value, help, min, max, "milliseconds");
}

ConfigLoader& ConfigLoader::Add(std::string_view key, std::vector<std::string>* value,
                                std::string_view help) {
  std::string def;
  for (const auto& v : *value)
    def += (def.empty() ? "" : ",") + v;
  impl_->Push(key, fmt::format("{} (comma-separated)", help), def,
              [value](std::string_view s) -> std::optional<std::string> {
                *value = SplitCommas(s);
                return std::nullopt;
              });
  return *this;
}

std::optional<int> ConfigLoader::Parse(int argc, const char* const* argv) {
  return Parse(argc, argv,
               [](const char* name) { return std::getenv(name); });  // NOLINT(concurrency-mt-unsafe)
}

std::optional<int> ConfigLoader::Parse(int argc, const char* const* argv, const EnvLookup& env) {
  CLI::App app{impl_->description, impl_->program};
  app.get_formatter()->column_width(40);
  std::string config_path;
  app.add_option("--config", config_path, "TOML file with any of the keys below (env CRONWHEEL_CONFIG)");
  std::vector<CLI::Option*> cli_options;
  for (auto& o : impl_->options) {
    std::string help = o.help;
    help += fmt::format(" [default: {}] (env {})",
                        o.secret ? (o.default_text.empty() ? "none" : "<secret>")
                                 : (o.default_text.empty() ? "\"\"" : o.default_text),
                        EnvName(o.key));
    cli_options.push_back(app.add_option(FlagName(o.key), o.flag_value, help));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  auto fail = [&](const std::string& msg) -> std::optional<int> {
    std::cerr << impl_->program << ": " << msg << "\n";
    return 2;
  };

  if (config_path.empty()) {
    if (const char* p = env("CRONWHEEL_CONFIG"); p != nullptr) config_path = p;
  }
  toml::table file;
  if (!config_path.empty()) {
    try {
      file = toml::parse_file(config_path);
    } catch (const toml::parse_error& e) {
      return fail(fmt::format("config file {}: {} (line {}, column {})", config_path, e.description(),
                              e.source().begin.line, e.source().begin.column));
    }
    for (const auto& [k, node] : file) {
      if (impl_->Find(k.str()) == nullptr) {
        return fail(fmt::format("config file {}: unknown key '{}' (see --help for the valid keys)",
                                config_path, k.str()));
      }
    }
  }

  for (std::size_t i = 0; i < impl_->options.size(); ++i) {
    auto& o = impl_->options[i];
    std::optional<std::string> raw;
    std::string where;
    if (cli_options[i]->count() > 0) {
      raw = o.flag_value;
      o.source = "flag";
      where = fmt::format("flag {}", FlagName(o.key));
    } else if (const char* e = env(EnvName(o.key).c_str()); e != nullptr) {
      raw = e;
      o.source = "env";
      where = fmt::format("environment variable {}", EnvName(o.key));
    } else if (const auto* node = file.get(o.key); node != nullptr) {
      o.source = "file";
      where = fmt::format("config file {} key {}", config_path, o.key);
      if (const auto* arr = node->as_array(); arr != nullptr) {
        std::string joined;
        for (const auto& el : *arr) {
          const auto s = el.value<std::string>();
          if (!s) return fail(fmt::format("{}: array elements must be strings", where));
          joined += (joined.empty() ? "" : ",") + *s;
        }
        raw = joined;
      } else if (const auto s = node->value<std::string>(); s && node->is_string()) {
        raw = *s;
      } else if (const auto b = node->value<bool>(); b && node->is_boolean()) {
        raw = *b ? "true" : "false";
      } else if (const auto n = node->value<std::int64_t>(); n && node->is_integer()) {
        raw = std::to_string(*n);
      } else {
        return fail(fmt::format("{}: expected a string, integer, boolean or array of strings", where));
      }
    }
    if (raw) {
      if (auto err = o.from_text(*raw)) {
        return fail(fmt::format("{} = '{}': {}", where, o.secret ? std::string("<secret>") : *raw, *err));
      }
    }
  }
  return std::nullopt;
}

std::vector<std::string> ConfigLoader::ScrubSecrets(int argc, char** argv) const {
  std::vector<std::string> scrubbed;
  for (const auto& o : impl_->options) {
    if (!o.secret) continue;
    const bool in_env = ScrubEnvironment(EnvName(o.key).c_str());
    const bool in_flags = ScrubArguments(argc, argv, FlagName(o.key)) > 0;
    if (in_env || in_flags) scrubbed.push_back(o.key);
  }
  return scrubbed;
}

std::string ConfigLoader::SourceOf(std::string_view key) const {
  for (const auto& o : impl_->options) {
    if (o.key == key) return o.source;
  }
  return "unknown";
}

}  // namespace cronwheel
