#pragma once
// The admin's REST API (/api/v1, described by web/openapi.json) as the command-line client sees it: a call
// is a method, a target (path and query below the admin's base URL) and an optional JSON body; the answer
// is an HTTP status and a body. Api is the seam the unit tests fake; HttpApi is the real one, over
// cronwheel's HTTP client (cronwheel/net/http_client.hpp).
//
// Errors: Api::Send never throws for a refused or failed call (a transport failure is status 0 with
// `error` set); Call() turns every outcome that is not a 2xx into a CommandError carrying the process's
// exit code (docs/cli.md, "Exit codes").
//
// Thread-safety: an Api belongs to one thread (HttpApi keeps one keep-alive connection).

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cronwheel::net {
class HttpClient;
}

namespace cronwheel::cli {

// The exit codes of `cronwheel`: 0 done; 1 the admin (or a local check of a job file or document)
// refused the request; 2 the command line is wrong; 3 the admin cannot be reached or failed (5xx).
enum ExitCode : int { kExitOk = 0, kExitRefused = 1, kExitUsage = 2, kExitUnavailable = 3 };

// Why a command stopped, and the exit code that says so. The message names what was wrong; it is printed
// to stderr once, at the boundary (Run).
class CommandError : public std::runtime_error {
 public:
  CommandError(int exit_code, const std::string& message) : std::runtime_error(message), code_(exit_code) {}
  [[nodiscard]] int exit_code() const { return code_; }

 private:
  int code_;
};

struct ApiReply {
  int status = 0;     // the HTTP status; 0 = no answer (see error)
  std::string error;  // the transport error when status is 0 ("cannot connect to ...: Connection refused")
  std::string body;   // as received

  // The body as JSON; nullopt when it is empty or not JSON.
  [[nodiscard]] std::optional<nlohmann::json> Json() const;
};

class Api {
 public:
  virtual ~Api() = default;
  // `method` is GET, POST, PUT or DELETE; `target` the path and query, e.g. "/api/v1/jobs?group_id=3"
  // (already encoded). `body`, when set, is sent as application/json.
  virtual ApiReply Send(const std::string& method, const std::string& target,
                        const std::optional<nlohmann::json>& body) = 0;
  // The admin as the user named it ("http://127.0.0.1:8080"), for messages.
  [[nodiscard]] virtual std::string Describe() const = 0;

 protected:
  Api() = default;
  Api(const Api&) = default;
  Api& operator=(const Api&) = default;
};

// The message for a call that did not succeed: the admin, the method and target, the status, the
// server's "error" and one line per field error ("  timeout_s: must be ..."). Without an answer it names
// the transport error and the admin's URL.
std::string DescribeFailure(const Api& api, const std::string& method, const std::string& target,
                            const ApiReply& reply);

// Sends the call and returns the JSON body of a 2xx answer. Throws CommandError: kExitRefused for a 4xx,
// kExitUnavailable for no answer, a 5xx, or a 2xx whose body is not JSON.
nlohmann::json Call(Api& api, const std::string& method, const std::string& target,
                    const std::optional<nlohmann::json>& body = std::nullopt);

// The REST API over HTTP(S) with cronwheel's HTTP client: Authorization: Bearer <token> on every call, TCP
// no-delay, one keep-alive connection reused across calls, the server's certificate verified for https
// (against the system's trust store and CRONWHEEL_CA_FILE when set), no redirect followed.
class HttpApi final : public Api {
 public:
  struct Settings {
    std::string admin_url;  // http(s)://host[:port][/prefix], e.g. http://127.0.0.1:8080
    std::string token;      // the API token (cwt_...)
    std::chrono::milliseconds connect_timeout{5000};
    std::chrono::milliseconds timeout{30000};  // reading and writing, each
    std::string ca_file;                       // PEM certificates trusted for https besides the system's
  };

  // Throws CommandError(kExitUsage) naming the URL when admin_url is not http(s)://host[:port][/path], or
  // naming ca_file when it cannot be read.
  explicit HttpApi(Settings settings);
  ~HttpApi() override;
  HttpApi(const HttpApi&) = delete;
  HttpApi& operator=(const HttpApi&) = delete;

  ApiReply Send(const std::string& method, const std::string& target,
                const std::optional<nlohmann::json>& body) override;
  [[nodiscard]] std::string Describe() const override { return settings_.admin_url; }

 private:
  Settings settings_;
  std::string base_path_;  // "" or "/prefix"
  std::unique_ptr<net::HttpClient> client_;
};

}  // namespace cronwheel::cli
