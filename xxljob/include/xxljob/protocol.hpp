#pragma once
// XXL-JOB's executor protocol: the JSON bodies exchanged between an admin (scheduling center) and its
// executors, shared by cronwheel's admin and executor. Facts: docs/xxl-job-protocol.md §0-§3 (dialects
// A = 2.4-3.2, B = 3.3-3.4, C = 3.5). The shared vocabulary (codes, header names, enumerations) is in
// vocabulary.hpp, the token check in token.hpp, the HTTP framing rules in framing.hpp.
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

#include <absl/status/statusor.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "xxljob/vocabulary.hpp"

namespace cronwheel::xxljob {

// {code, msg, content|data}. `content` is null when there is no payload.
struct Envelope {
  int code = kCodeSuccess;
  std::optional<std::string> msg;
  nlohmann::json content;  // null = absent

  static Envelope Success(nlohmann::json content = nullptr) {
    return {kCodeSuccess, std::nullopt, std::move(content)};
  }
  static Envelope Fail(std::string msg) { return {kCodeFail, std::move(msg), nullptr}; }
  // The wire form of a refusal (docs/architecture.md, "Errors"): code 500, msg = the status's message.
  static Envelope Fail(const absl::Status& status) { return Fail(std::string(status.message())); }
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
  // runAtMs, cronwheel's extension (ahead-of-time dispatch, docs/architecture.md): epoch ms on the
  // executor's clock at which to start the fire; 0 = at once, as every XXL-JOB /run. Sent only when set, and
  // only to executors whose registration announced runAt (RegistryParam::run_at).
  std::int64_t run_at_ms = 0;
  // replaceHeld, cronwheel's extension: this /run (with runAtMs) replaces the fire of the same logId that the
  // executor holds for its instant (the job changed within the lead). Without it a second /run for a held
  // logId is a repeat trigger. Sent only when true.
  bool replace_held = false;
};

// Executor /idleBeat and /kill.
struct JobIdParam {
  int job_id = 0;  // jobId
};

// Executor /cancel, cronwheel's extension (ahead-of-time dispatch, docs/architecture.md): drop these fires
// if they are held for their instant and not started. The answer's content is {"cancelled": [log ids]}, the
// ones dropped; a fire already started, or never held there, is left alone. An XXL-JOB executor answers
// "uri-mapping(/cancel) not found"; the admin sends it only to executors that announced runAt.
// Executor /accepted, cronwheel's extension too, takes the same body: which of these fires the executor has
// accepted (held for its instant, queued, running, or run within its redelivery window). The answer's
// content is {"accepted": [log ids]} (kAcceptedField). The admin asks it shortly before the instant of the
// fires it sent ahead, to find those an executor lost by dying or restarting.
// Executor /killFires, cronwheel's extension too, takes the same body: kill these fires only, wherever they
// are (held, queued, running), leaving the other fires of their jobs alone (XXL-JOB's /kill ends a job's
// whole thread). The answer's content is {"killed": [log ids]} (kKilledField). An XXL-JOB executor answers
// "uri-mapping(/killFires) not found".
struct CancelParam {
  std::vector<std::int64_t> log_ids;  // logIds: at most kMaxCancelLogIds, each positive
};
inline constexpr std::size_t kMaxCancelLogIds = 100'000;
inline constexpr const char* kAcceptedField = "accepted";
inline constexpr const char* kKilledField = "killed";
inline constexpr std::size_t kMaxBatchRuns = 10'000;
inline constexpr const char* kBatchAnswersField = "answers";

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
  // handleStartTime, cronwheel's extension: epoch ms at which the executor started the handler, on the
  // executor's clock; 0 = not reported (sent only when set). XXL-JOB executors never send it and XXL-JOB
  // admins ignore it (Gson and Jackson skip unknown fields), so the callback stays compatible both ways.
  std::int64_t handle_start_ms = 0;
  // output, cronwheel's extension: a JSON value the handler returned for the child jobs of its fire
  // (docs/operations.md, "Passing a result to child jobs"); sent only when set, ignored by XXL-JOB admins
  // as handleStartTime is. Any JSON value but null; the admin keeps at most kMaxFireOutputBytes of it.
  std::optional<nlohmann::json> output;
  // jobLog, cronwheel's extension: the fire's job log as it was when the result was sent, for the admin's
  // fire output archive (docs/operations.md, "The fire output archive"; docs/xxl-job-protocol.md §3), sent by
  // cronwheel-executor unless its callback_log_max_bytes is 0; ignored by XXL-JOB admins as handleStartTime
  // is. An admin that gets none (every XXL-JOB executor) reads the log from the executor's /log instead.
  struct JobLog {
    std::string content;        // the log's text: whole, or its head, a marker line and its tail
    std::int64_t bytes = 0;     // bytes: the size of the whole log on the executor
    std::int64_t left_out = 0;  // leftOut: bytes of the whole log not in `content` (0 = it is whole)
  };
  std::optional<JobLog> job_log;
};
// The largest output (serialised as compact JSON, in bytes) a fire may pass to its child jobs.
inline constexpr std::size_t kMaxFireOutputBytes = std::size_t{16} * 1024;

// executor -> admin /api/registry and /api/registryRemove.
struct RegistryParam {
  std::string registry_group = "EXECUTOR";  // registryGroup: EXECUTOR or ADMIN
  std::string registry_key;                 // registryKey: the executor's app name
  std::string registry_value;               // registryValue: its address, e.g. http://10.0.0.5:9999/
  // cronwheel's extensions, sent only by cronwheel-executor and ignored by XXL-JOB admins:
  // runAt: the executor starts a /run that carries runAtMs at that instant (ahead-of-time dispatch);
  bool run_at = false;
  // clockOffsetMs and clockErrorMs: the executor's clock minus the admin's, as the executor measured it at
  // its previous heartbeat (the admin's clock in the answer against the midpoint of the request's round
  // trip), and the measurement's error bound (half the round trip, rounded up, plus 1 ms): the true offset
  // is within offset +- error. Absent until measured.
  std::optional<std::int64_t> clock_offset_ms;
  std::int64_t clock_error_ms = 0;
};
// What a cronwheel admin answers a registration that announced runAt: {"clockMs": <its clock, epoch ms>} as
// the envelope's content, from which the executor measures its clock offset (RegistryParam above). An
// XXL-JOB executor's registration gets XXL-JOB's answer, without content.
inline constexpr const char* kRegistryClockField = "clockMs";

// --- Serialising (exact) -------------------------------------------------------------------------------
nlohmann::json ToJson(const Envelope& e);
nlohmann::json ToJson(const TriggerParam& p);
nlohmann::json ToJson(const JobIdParam& p);
nlohmann::json ToJson(const CancelParam& p);
nlohmann::json ToJson(const LogParam& p);
nlohmann::json ToJson(const LogResult& r);
nlohmann::json ToJson(const HandleCallbackParam& p);
nlohmann::json ToJson(const RegistryParam& p);
// Callback body as dialect A/B send it: a JSON array.
nlohmann::json ToJson(const std::vector<HandleCallbackParam>& list);

// --- Parsing (liberal) ---------------------------------------------------------------------------------
// Each returns the parsed value, or an InvalidArgument status whose message names the field, e.g.
//   "field 'jobId': expected a 32-bit integer, got \"abc\"" or "body is not valid JSON: ...".
// Required fields (absent or null is an error): TriggerParam jobId and logId; JobIdParam jobId;
// LogParam logId; HandleCallbackParam logId and handleCode, and jobLog's content when jobLog is there (its
// bytes and leftOut default to the content's size and 0; 0 <= leftOut <= bytes); RegistryParam registryKey
// and registryValue (non-blank) and registryGroup (EXECUTOR or ADMIN, default EXECUTOR). The jobId and logId
// of a trigger, an idleBeat/kill and a log request are positive; their logDateTime/logDateTim is epoch ms
// from 0 to the end of year 9999 (0 when absent), as is a callback's handleStartTime.
absl::StatusOr<Envelope> ParseEnvelope(std::string_view body);
absl::StatusOr<TriggerParam> ParseTriggerParam(std::string_view body);
// Executor /runs, cronwheel's extension (ahead-of-time dispatch, docs/xxl-job-protocol.md §2): many /run
// bodies in one request, {"runs": [TriggerParam, ...]} (1 to kMaxBatchRuns). The executor treats each as a
// /run of its own, in order, and answers code 200 with content {"answers": [{"code": int, "msg": string},
// ...]}, one per run in the same order (kBatchAnswersField). A run that does not parse is answered 500 naming
// its field ("runs[3].logId"); the others still run. A body that is not such an object is one code-500 answer
// for all. The admin sends it only to executors that announced runAt.
nlohmann::json ToJson(std::span<const TriggerParam> runs);
absl::StatusOr<std::vector<absl::StatusOr<TriggerParam>>> ParseTriggerBatch(std::string_view body);
absl::StatusOr<JobIdParam> ParseJobIdParam(std::string_view body);
// {"logIds": [positive longs]}: required, at most kMaxCancelLogIds.
absl::StatusOr<CancelParam> ParseCancelParam(std::string_view body);
absl::StatusOr<LogParam> ParseLogParam(std::string_view body);
absl::StatusOr<LogResult> ParseLogResult(const nlohmann::json& content);
// An array of callbacks, or {"callbackList": [...]}. An error in one element fails the whole body and
// names its index: "callbackList[2].handleCode: ...".
absl::StatusOr<std::vector<HandleCallbackParam>> ParseCallbackList(std::string_view body);
absl::StatusOr<RegistryParam> ParseRegistryParam(std::string_view body);

}  // namespace cronwheel::xxljob
