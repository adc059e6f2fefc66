// `cronwheel login` and `cronwheel logout` (cwcli/login.hpp; docs/cli.md, "Logging in").
#include "cwcli/login.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sodium.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <condition_variable>
#include <system_error>

#include "cronwheel/mutex.hpp"
#include "cronwheel/net/http_message.hpp"
#include "cronwheel/net/http_server.hpp"
#include "cronwheel/text.hpp"
#include "cwcli/text_util.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): for posix_spawnp

namespace cronwheel::cli {
namespace {

// `bytes` random bytes (libsodium), base64url without padding: 32 bytes are 43 characters of RFC 7636's
// unreserved set, a verifier of 256 bits.
std::string RandomUrlSafe(std::size_t bytes) {
  if (sodium_init() < 0) throw CommandError(kExitUnavailable, "libsodium cannot be initialised");
  std::vector<unsigned char> raw(bytes);
  randombytes_buf(raw.data(), raw.size());
  std::string out(sodium_base64_ENCODED_LEN(bytes, sodium_base64_VARIANT_URLSAFE_NO_PADDING), '\0');
  sodium_bin2base64(out.data(), out.size(), raw.data(), raw.size(), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  out.resize(out.find('\0'));
  return out;
}

// RFC 7636 §4.2, S256: BASE64URL(SHA-256(verifier)) without padding.
std::string Challenge(const std::string& verifier) {
  std::array<unsigned char, crypto_hash_sha256_BYTES> digest{};
  crypto_hash_sha256(digest.data(), reinterpret_cast<const unsigned char*>(verifier.data()), verifier.size());
  std::string out(sodium_base64_ENCODED_LEN(digest.size(), sodium_base64_VARIANT_URLSAFE_NO_PADDING), '\0');
  sodium_bin2base64(out.data(), out.size(), digest.data(), digest.size(),
                    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  out.resize(out.find('\0'));
  return out;
}

// The message of the last failed system call.
std::string ErrnoText() {
  return std::error_code(errno, std::generic_category()).message();
}

std::string HostName() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) return "localhost";
  return name.data();
}

// What the browser brings back to the loopback listener.
struct Callback {
  Mutex mu;
  std::condition_variable cv;
  bool done ABSL_GUARDED_BY(mu) = false;
  std::string code ABSL_GUARDED_BY(mu);
  std::string error ABSL_GUARDED_BY(mu);  // "access_denied" when the user denied
};

// Opens `url` with xdg-open, not waiting for the browser; false when it cannot be started.
bool OpenBrowser(const std::string& url) {
  pid_t pid = 0;
  std::string program = "xdg-open";
  std::array<char*, 3> argv = {program.data(), const_cast<char*>(url.c_str()), nullptr};
  if (::posix_spawnp(&pid, program.c_str(), nullptr, nullptr, argv.data(), environ) != 0) return false;
  int status = 0;
  return ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

HttpApi::Settings ApiSettings(const Invocation& inv, const std::string& admin_url, std::string token) {
  return {.admin_url = admin_url,
          .token = std::move(token),
          .connect_timeout = std::min<std::chrono::milliseconds>(inv.timeout, std::chrono::seconds(5)),
          .timeout = inv.timeout,
          .ca_file = inv.ca_file};
}

// The lines of `text` (without their '\n').
std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const auto end = text.find('\n');
    out.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

}  // namespace

std::filesystem::path SavedLoginPath(const Environment& env) {
  if (const auto it = env.find("XDG_CONFIG_HOME"); it != env.end() && !it->second.empty())
    return std::filesystem::path(it->second) / "cronwheel" / "token";
  if (const auto it = env.find("HOME"); it != env.end() && !it->second.empty())
    return std::filesystem::path(it->second) / ".config" / "cronwheel" / "token";
  return {};
}

std::optional<SavedLogin> ReadSavedLogin(const std::filesystem::path& path) {
  if (path.empty()) return std::nullopt;
  const auto text = ReadTextFile(path);
  if (!text.ok()) {
    if (absl::IsNotFound(text.status())) return std::nullopt;
    throw CommandError(kExitUsage, std::string(text.status().message()));
  }
  const auto lines = Lines(*text);
  SavedLogin out;
  if (lines.size() >= 3) {
    out.token = std::string(Trim(lines[0]));
    out.admin_url = std::string(Trim(lines[1]));
    out.token_id = std::atoi(std::string(Trim(lines[2])).c_str());
  }
  if (!out.token.starts_with("cwt_") || out.admin_url.empty() || out.token_id <= 0) {
    throw CommandError(
        kExitUsage, fmt::format("'{}' is not a saved login (a token, the admin's URL and the token's id, a "
                                "line each): delete it and run `cronwheel login` again",
                                path.string()));
  }
  return out;
}

void SaveLogin(const std::filesystem::path& path, const SavedLogin& login) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) {
    throw CommandError(kExitUsage,
                       fmt::format("cannot create '{}': {}", path.parent_path().string(), ec.message()));
  }
  ::chmod(path.parent_path().c_str(), 0700);
  const auto tmp = path.string() + fmt::format(".tmp-{}", ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw CommandError(kExitUsage, fmt::format("cannot write '{}': {}", tmp, ErrnoText()));
  const auto content = fmt::format("{}\n{}\n{}\n", login.token, login.admin_url, login.token_id);
  const bool written = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  const bool closed = ::close(fd) == 0;
  if (!written || !closed || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = ErrnoText();
    ::unlink(tmp.c_str());
    throw CommandError(kExitUsage, fmt::format("cannot write '{}': {}", path.string(), why));
  }
}

bool SameAdmin(std::string_view a, std::string_view b) {
  while (a.ends_with('/'))
    a.remove_suffix(1);
  while (b.ends_with('/'))
    b.remove_suffix(1);
  return a == b;
}

int RunLogin(const Invocation& inv, Console& console) {
  if (inv.saved_login.empty()) {
    throw CommandError(kExitUsage, "nowhere to save the login: set HOME or XDG_CONFIG_HOME");
  }
  const auto verifier = RandomUrlSafe(32);
  const auto state = RandomUrlSafe(16);
  Callback callback;
  // The console's answer comes to a loopback port of this process: cronwheel's own server, one I/O thread
  // running the handler (it never blocks), stopped (and joined) when the login ends either way.
  net::HttpServer listener(net::HttpServerSettings{.threads = 0, .io_threads = 1});
  listener.Get("/callback", [&](const net::Request& req, net::Response& res) {
    // Only the browser sent back by this login's console page knows `state`.
    if (req.get_param_value("state") != state) {
      res.status = 400;
      res.set_content("cronwheel: this is not the login this client is waiting for.\n", "text/plain");
      return;
    }
    bool denied = false;
    {
      MutexLock lock(callback.mu);
      if (callback.done) {
        res.set_content("cronwheel: this login is already answered.\n", "text/plain");
        return;
      }
      callback.code = req.get_param_value("code");
      callback.error = req.get_param_value("error");
      if (callback.code.empty() && callback.error.empty()) callback.error = "no code";
      callback.done = true;
      denied = !callback.error.empty();
    }
    callback.cv.notify_all();
    res.set_content(!denied
                        ? "cronwheel: logged in; the command line has the token. You may close this window.\n"
                        : "cronwheel: the login was denied. You may close this window.\n",
                    "text/plain");
  });
  int port = 0;
  try {
    port = listener.Start("127.0.0.1", 0);
  } catch (const std::runtime_error& e) {
    throw CommandError(
        kExitUnavailable,
        fmt::format("cannot listen on a loopback port for the console's answer: {}", e.what()));
  }

  auto base = inv.admin_url;
  while (base.ends_with('/'))
    base.pop_back();
  const auto name = inv.login_name.empty() ? "cronwheel-cli@" + HostName() : inv.login_name;
  const auto url = fmt::format(
      "{}/#/cli-login?port={}&state={}&code_challenge={}&name={}&scope={}&expires_in_days={}", base, port,
      state, Challenge(verifier), net::PercentEncode(name), inv.login_scope, inv.login_days);
  console.err << "Open this address in a browser, signed in to the console, and approve the login (waiting "
              << inv.login_wait.count() << " s):\n  " << url << '\n';
  console.err.flush();
  if (!inv.no_browser && inv.can_open_browser && !OpenBrowser(url)) {
    console.err << "cronwheel: could not open a browser (xdg-open); open the address above yourself\n";
  }
  std::string code;
  std::string error;
  {
    MutexLock lock(callback.mu);
    if (!callback.cv.wait_for(lock.native(), inv.login_wait,
                              [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(callback.mu) { return callback.done; })) {
      throw CommandError(kExitRefused, fmt::format("no answer from the console within {} s: run `cronwheel "
                                                   "login` again",
                                                   inv.login_wait.count()));
    }
    code = callback.code;
    error = callback.error;
  }
  if (!error.empty()) {
    throw CommandError(kExitRefused, error == "access_denied"
                                         ? "the login was denied in the console"
                                         : fmt::format("the console answered '{}'", error.substr(0, 100)));
  }
  HttpApi api(ApiSettings(inv, inv.admin_url, ""));
  const auto token = Call(api, "POST", "/api/v1/auth/cli/token",
                          nlohmann::json{{"code", code}, {"code_verifier", verifier}});
  const SavedLogin saved{.token = token.at("token").get<std::string>(),
                         .admin_url = base,
                         .token_id = token.at("id").get<int>()};
  SaveLogin(inv.saved_login, saved);
  console.out << fmt::format("Logged in to {} as {} (token {} '{}', scope {}, expires {}); saved to {}\n",
                             base, token.at("username").get<std::string>(), saved.token_id,
                             token.at("name").get<std::string>(), token.at("scope").get<std::string>(),
                             FormatUtcMs(token.at("expires_ms").get<std::int64_t>()), inv.saved_login);
  return kExitOk;
}

int RunLogout(const Invocation& inv, Console& console) {
  const auto saved = ReadSavedLogin(inv.saved_login);
  if (!saved) {
    console.err << "cronwheel: not logged in (no " << inv.saved_login << ")\n";
    return kExitOk;
  }
  HttpApi api(ApiSettings(inv, saved->admin_url, saved->token));
  const auto reply = api.Send("DELETE", fmt::format("/api/v1/tokens/{}", saved->token_id), std::nullopt);
  if (reply.status == 200) {
    console.out << fmt::format("Logged out of {}: token {} deleted\n", saved->admin_url, saved->token_id);
  } else if (reply.status == 401 || reply.status == 404) {
    console.out << fmt::format(
        "Logged out of {}: token {} was no longer valid (expired, revoked or deleted)\n", saved->admin_url,
        saved->token_id);
  } else if (reply.status == 403) {
    console.err << fmt::format(
        "cronwheel: token {}'s scope may not delete itself: it stays valid until it expires; delete it on "
        "the "
        "console's \"API tokens\" page\n",
        saved->token_id);
  } else {
    throw CommandError(kExitUnavailable, DescribeFailure(api, "DELETE", "/api/v1/tokens/{id}", reply) +
                                             "; the saved login is kept: run `cronwheel logout` again");
  }
  std::error_code ec;
  std::filesystem::remove(inv.saved_login, ec);
  return kExitOk;
}

}  // namespace cronwheel::cli
