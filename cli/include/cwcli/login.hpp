#pragma once
// `cronwheel login` and `cronwheel logout` (docs/cli.md, "Logging in"): the client's login through the
// admin's console, as `gh auth login --web` does it. The client listens on a loopback port, sends the user
// to the console's page `#/cli-login` with the port, a random `state` and a PKCE challenge; the user approves
// there, signed in as they sign in to the console; the browser comes back to http://127.0.0.1:<port>/callback
// with a one-time code, which the client trades, with the verifier only it knows, for an API token (OAuth 2.0
// for native apps, RFC 8252 §7.3, with PKCE S256, RFC 7636). The token is saved with the admin's URL in a
// file only its user may read, and used by the other commands when neither --token-file nor
// CRONWHEEL_API_TOKEN is given, and only for that admin.
//
// Errors: CommandError (api.hpp) with its exit code: a denied or unanswered approval is kExitRefused, a file
// that cannot be written kExitUsage.
//
// Thread-safety: one login at a time; the loopback listener runs on a thread of its own for the login.

#include <filesystem>
#include <optional>
#include <string>

#include "cwcli/api.hpp"
#include "cwcli/commands.hpp"
#include "cwcli/options.hpp"

namespace cronwheel::cli {

// A login saved by `cronwheel login`: lines "token", "admin URL", "token id".
struct SavedLogin {
  std::string token;
  std::string admin_url;
  int token_id = 0;
};

// Where the login is saved: $XDG_CONFIG_HOME/cronwheel/token, else $HOME/.config/cronwheel/token; "" when
// neither variable is set.
std::filesystem::path SavedLoginPath(const Environment& env);
// The saved login at `path`, nullopt when there is no such file; a file of another shape is kExitUsage.
std::optional<SavedLogin> ReadSavedLogin(const std::filesystem::path& path);
// Writes `login` to `path` (its folder made 0700), readable by its user only (0600), replacing the file at
// once. kExitUsage naming the file when it cannot.
void SaveLogin(const std::filesystem::path& path, const SavedLogin& login);
// Whether two admin URLs name the same admin (a trailing '/' aside).
bool SameAdmin(std::string_view a, std::string_view b);

// `cronwheel login`: prints the console's address on `console.err` (and opens a browser when asked and one
// can be), waits up to inv.login_wait for the approval, trades the code, saves the token and prints who is
// logged in. Returns the exit code.
int RunLogin(const Invocation& inv, Console& console);
// `cronwheel logout`: deletes the saved login's token on the admin (when its scope allows: else says how
// long it stays valid) and the file. Returns the exit code.
int RunLogout(const Invocation& inv, Console& console);

}  // namespace cronwheel::cli
