#pragma once
// XXL-JOB's executor protocol: the JSON bodies exchanged between an admin (scheduling center) and its
// executors, shared by cronwheel's admin and executor. Facts: ../shared/reference/xxl-job-protocol.md
// §1-3 (dialects A = 2.4-3.2, B = 3.3-3.4, C = 3.5).
//
// Be liberal in what you accept, exact in what you send:
//  * Parsing follows Gson's leniency where real SDKs rely on it: unknown fields are ignored, a missing
//    optional field takes its zero value, JSON null is the zero value, a number may arrive as a numeric
//    string. A value of the wrong type (an object where a number belongs, "abc" for an int, 2^40 for a
//    Java int) is an error whose message names the field, the value and what is valid.
//  * Both spellings `logDateTim` (A/B) and `logDateTime` (C) are read; a callback body may be a JSON array
//    (A/B) or {"callbackList": [...]} (C); an envelope's payload may be `content` (A) or `data` (B/C).
//  * Output uses dialect A/B names (`logDateTim` in callbacks and /log requests), and an envelope carries
//    its payload as both `content` and `data`, so admins and executors of every dialect read it.
//
// Field names and Java widths: `int` fields are 32-bit and checked; `long` fields are int64.
// Thread-safety: plain values and pure functions.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cronwheel::protocol {

// Handle and result codes (XXL-JOB's ReturnT / XxlJobContext).
inline constexpr int kCodeSuccess = 200;
inline constexpr int kCodeFail = 500;
inline constexpr int kCodeTimeout = 502;  // handle code of a fire that ran past its timeout

// The header carrying the access token, in both directions.
inline constexpr const char* kAccessTokenHeader = "XXL-JOB-ACCESS-TOKEN";
// Dialect C also sends the executor's app name.
inline constexpr const char* kAppNameHeader = "XXL-JOB-APPNAME";

// Request bodies above this are refused (XXL-JOB's executor: 5 MiB).
inline constexpr std::size_t kMaxBodyBytes = std::size_t{5} * 1024 * 1024;

// {code, msg, content|data}. `content` is null when there is no payload.
struct Envelope {
  int code = kCodeSuccess;
  std::optional<std::string> msg;
  nlohmann::json content;  // null = absent

  static Envelope Success(nlohmann::json content = nullptr) {
    return {kCodeSuccess, std::nullopt, std::move(content)};
  }
  static Envelope Fail(std::string msg) { return {kCodeFail, std::move(msg), nullptr}; }
  [[nodiscard]] bool ok() const { return code == kCodeSuccess; }
};

// Executor /run (dialect C: /trigger). Sent by the admin for each fire.
struct TriggerParam {
  int job_id = 0;                       // jobId
  std::string executor_handler;         // executorHandler: handler name (BEAN jobs)
  std::string executor_params;          // executorParams (plural on the wire)
  std::string executor_block_strategy;  // executorBlockStrategy: SERIAL_EXECUTION, DISCARD_LATER, COVER_EARLY
  int executor_timeout = 0;             // executorTimeout: seconds, 0 = none
  std::int64_t log_id = 0;              // logId: the fire's job_log row
  std::int64_t log_date_time = 0;       // logDateTime (full spelling in every dialect): epoch ms
  std::string glue_type;                // glueType: BEAN, GLUE_SHELL, ...
  std::string glue_source;              // glueSource
  std::int64_t glue_updatetime = 0;     // glueUpdatetime: epoch ms, the version of glue_source
  int broadcast_index = 0;              // broadcastIndex: shard index
  int broadcast_total = 0;              // broadcastTotal: shard count (0 or 1 = not sharded)
};

// Executor /idleBeat and /kill.
struct JobIdParam {
  int job_id = 0;  // jobId
};

// Executor /log.
struct LogParam {
  std::int64_t log_date_tim = 0;  // logDateTim | logDateTime: epoch ms of the fire (picks the day folder)
  std::int64_t log_id = 0;        // logId
  int from_line_num = 1;          // fromLineNum: first line wanted, 1-based
};

// Executor /log result.
struct LogResult {
  int from_line_num = 0;    // fromLineNum
  int to_line_num = 0;      // toLineNum: the last line returned (0 if none)
  std::string log_content;  // logContent: the lines, each followed by "\n"
  bool is_end = false;      // isEnd (read also as `end`)
};

// One finished fire, executor -> admin /api/callback.
struct HandleCallbackParam {
  std::int64_t log_id = 0;        // logId
  std::int64_t log_date_tim = 0;  // logDateTim | logDateTime: epoch ms of the fire
  int handle_code = 0;            // handleCode: 200, 500, 502, ...
  std::string handle_msg;         // handleMsg
};

// executor -> admin /api/registry and /api/registryRemove.
struct RegistryParam {
  std::string registry_group = "EXECUTOR";  // registryGroup: EXECUTOR or ADMIN
  std::string registry_key;                 // registryKey: the executor's app name
  std::string registry_value;               // registryValue: its address, e.g. http://10.0.0.5:9999/
};

// --- Serialising (exact) -------------------------------------------------------------------------------
nlohmann::json ToJson(const Envelope& e);
nlohmann::json ToJson(const TriggerParam& p);
nlohmann::json ToJson(const JobIdParam& p);
nlohmann::json ToJson(const LogParam& p);
nlohmann::json ToJson(const LogResult& r);
nlohmann::json ToJson(const HandleCallbackParam& p);
nlohmann::json ToJson(const RegistryParam& p);
// Callback body as dialect A/B send it: a JSON array.
nlohmann::json ToJson(const std::vector<HandleCallbackParam>& list);

// --- HTTP framing ------------------------------------------------------------------------------------
// XXL-JOB's message for a request with a method the protocol does not take.
inline constexpr std::string_view kMethodNotSupported = "invalid request, HttpMethod not support.";

// Whether a request carries a body its server leaves unread: cpp-httplib 0.11 reads a body only for POST,
// PUT, PATCH and DELETE, so the body of a GET (or another method) would stay in the connection and be read
// as the next request, whose answer would go to the caller's next request. Both servers (admin and
// executor) refuse such a request and close the connection. `content_length` is the header's value ("" if
// absent).
bool HasUnreadBody(std::string_view method, bool has_transfer_encoding, std::string_view content_length);

// cpp-httplib 0.11 (Debian's compiled libcpp-httplib) listens with a backlog of 5. An admin sending one
// second's fires opens up to executor_connections (32) connections at once; the accept queue overflowed
// (TcpExtListenOverflows climbed by thousands on the test machine), handshakes stalled, and a few /run
// failed with a read timeout. Linux lets listen() be called again on a listening socket to change its
// backlog: this finds this process's listening TCP socket bound to `port` (via /proc/self/fd) and calls
// listen(fd, backlog). Both servers (admin and executor) call it after binding. Returns false if there is
// none or listen() fails. O(open descriptors).
bool RaiseListenBacklog(int port, int backlog);

// --- Parsing (liberal) ---------------------------------------------------------------------------------
// JSON nested deeper than this (arrays and objects) is refused while it is parsed. nlohmann::json parses
// any depth, but copying, comparing and printing a value recurse once per level: a 200 KB body of '['
// overflowed the stack of a request thread and killed the process. Real bodies nest at most 3 levels.
inline constexpr int kMaxJsonDepth = 64;

// Parses a request body as JSON. nullopt, with *error (when non-null) saying why, for a syntax error
// ("body is not valid JSON: ..."), a number outside the range of a double (1e400) and nesting deeper
// than kMaxJsonDepth. Every Parse* below reads its body with it; the admin's REST API too.
std::optional<nlohmann::json> ParseJson(std::string_view body, std::string* error);

// Each returns nullopt and sets *error (when non-null) to a message naming the field, e.g.
//   "field 'jobId': expected a 32-bit integer, got \"abc\"" or "body is not valid JSON: ...".
// Required fields (absent or null is an error): TriggerParam jobId and logId; JobIdParam jobId;
// LogParam logId; HandleCallbackParam logId and handleCode; RegistryParam registryKey and registryValue
// (non-blank) and registryGroup (EXECUTOR or ADMIN, default EXECUTOR). The jobId and logId of a trigger,
// an idleBeat/kill and a log request are positive; their logDateTime/logDateTim is epoch ms from 0 to the
// end of year 9999 (0 when absent).
std::optional<Envelope> ParseEnvelope(std::string_view body, std::string* error);
std::optional<TriggerParam> ParseTriggerParam(std::string_view body, std::string* error);
std::optional<JobIdParam> ParseJobIdParam(std::string_view body, std::string* error);
std::optional<LogParam> ParseLogParam(std::string_view body, std::string* error);
std::optional<LogResult> ParseLogResult(const nlohmann::json& content, std::string* error);
// An array of callbacks, or {"callbackList": [...]}. An error in one element fails the whole body and
// names its index: "callbackList[2].handleCode: ...".
std::optional<std::vector<HandleCallbackParam>> ParseCallbackList(std::string_view body, std::string* error);
std::optional<RegistryParam> ParseRegistryParam(std::string_view body, std::string* error);

// --- Access token --------------------------------------------------------------------------------------
// Whether a token received in the header equals the configured one, in time independent of where they
// differ (both are hashed with SHA-256, then compared with sodium_memcmp). An empty `expected` means no
// token is configured: anything matches (dialect A/B behaviour; production mode refuses to start that way).
bool TokenMatches(std::string_view given, std::string_view expected);

// --- Addresses -----------------------------------------------------------------------------------------
// An admin or executor base address split for an HTTP client: "http://10.0.0.5:9999/xxl/" ->
// {origin "http://10.0.0.5:9999", base_path "/xxl"}. Accepts http and https, with or without a trailing
// '/' or a path prefix; nullopt (with *error) for anything else (no scheme, userinfo, query, fragment,
// a port outside 1..65535).
struct HttpAddress {
  std::string origin;     // scheme://host[:port]
  std::string host;       // host name or IP literal, without brackets
  int port = 0;           // explicit or the scheme's default
  std::string base_path;  // "" or "/prefix" (never ends in '/')
  // Path for one call: base_path + "/" + method, e.g. Path("run") == "/xxl/run".
  [[nodiscard]] std::string Path(std::string_view method) const;
};
std::optional<HttpAddress> ParseHttpAddress(std::string_view address, std::string* error);

// Canonical spelling used as the registry/routing key: origin + base_path + "/", so "http://a:1" and
// "http://a:1/" name the same executor. Returns the input unchanged if it does not parse.
std::string NormalizeAddress(std::string_view address);

}  // namespace cronwheel::protocol
