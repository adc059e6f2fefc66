#pragma once
// The admin's request bodies read and checked without a database: pure functions of their input, so a
// fuzzer can drive them (fuzz/admin) and the handlers stay thin. The REST handlers call these first, then
// the repositories check what needs PostgreSQL (a group exists, child jobs exist and form no cycle, a name
// is free). The XXL-JOB endpoints parse with xxljob::Parse* and then CheckRegistration. Built as the
// library admin_requests, which does not link libpqxx.
//
// A body is any JSON value (the caller parsed it with cronwheel::ParseJson). A reader returns what it read,
// or Error::Invalid with one FieldError per problem, each naming the field, the value and what would be
// valid ("" as the field for the body itself), with a translation code (model/result.hpp). Unknown fields
// are errors.
//
// Thread-safety: pure functions.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>

#include "admin/model/accounts.hpp"
#include "admin/model/alert_channel.hpp"
#include "admin/model/calendar.hpp"
#include "admin/model/model.hpp"
#include "admin/model/queries.hpp"
#include "admin/model/result.hpp"
#include "admin/model/workflow.hpp"
#include "ringwheel/clock.hpp"
#include "xxljob/protocol.hpp"

namespace cronwheel::admin {

inline constexpr int kMaxPreviewCount = 100;

// What is wrong with a registration (/api/registry, /api/registryRemove) that parsed. The registryKey must
// be an AppName and the registryValue an executor's http(s) address as net::ParseExecutorAddress accepts it
// (no user info, no zone id, an IPv4 address as a dotted quad: issue 44, F6), so nothing but an address the
// admin could call reaches executor_registry, each in one spelling.
Result<void> CheckRegistration(const xxljob::RegistryParam& p);

// --- jobs and groups (POST creates: required fields; PUT updates: fields over the stored values) ---

// The job fields of `body` over `base` (group_id, description and schedule_type required on create).
Result<Job> ReadJobBody(const nlohmann::json& body, Job base, bool create);

// A workflow (admin/model/workflow.hpp) read over `base` (a create: a default Workflow; an update: the stored
// one, so absent fields keep their values). Fields: name, group_id, nodes, edges, param, schedule_type
// (CRON, FIX_RATE, NONE), schedule_conf, time_zone, misfire_strategy, enabled. Checks each field, the graph
// (CheckGraph) and the schedule (it parses; an enabled workflow needs one). Whether the jobs exist and the
// caller may use them is the caller's check.
Result<Workflow> ReadWorkflowBody(const nlohmann::json& body, Workflow base, bool create);
// POST /api/v1/workflows/{id}/trigger: {"param"?: string} (nullopt = the workflow's).
Result<std::optional<std::string>> ReadWorkflowTriggerBody(const nlohmann::json& body);
// The group fields of `body` over `base` (app_name and title required on create), checked: an AppName,
// executors' http(s) addresses as net::ParseExecutorAddress accepts them (normalised), a MANUAL group has
// addresses; an empty token is none.
Result<JobGroup> ReadGroupBody(const nlohmann::json& body, JobGroup base, bool create);

// POST (create: name, kind and target required) and PUT /api/v1/alert-channels: the fields over `base`,
// then CheckAlertChannel with the operator's `webhook_allow`. `secret` absent keeps the stored one, "" clears
// it. `preset` is for webhooks (JSON when not given).
Result<AlertChannel> ReadAlertChannelBody(const nlohmann::json& body, AlertChannel base, bool create,
                                          const std::vector<std::string>& webhook_allow);

// --- console bodies ---

// POST /api/v1/users (create: username and password required) and PUT /api/v1/users/{id}.
Result<UserFields> ReadUserBody(const nlohmann::json& body, bool create);
// POST /api/v1/users/me/password: both required; the new one meets the policy and differs.
Result<PasswordChange> ReadPasswordChangeBody(const nlohmann::json& body);
// POST /api/v1/tokens: the token's name (1 to 100 characters, required), expires_in_days (1 to
// kMaxTokenDays, default kDefaultTokenDays) and scope ("read", "operate", "write" or "admin"; default
// kDefaultTokenScope).
Result<TokenFields> ReadTokenBody(const nlohmann::json& body);

// POST /api/v1/auth/cli/authorize: port (1 to 65535), state (1 to 128 of [A-Za-z0-9._~-]) and
// code_challenge (43 base64url characters), all required; code_challenge_method "S256" when given; and the
// token's name (required), scope and expires_in_days as ReadTokenBody reads them.
Result<CliLoginRequest> ReadCliLoginBody(const nlohmann::json& body);
// POST /api/v1/auth/cli/token: code (1 to 200 characters) and code_verifier (43 to 128 of
// [A-Za-z0-9._~-]), both required.
Result<CliTokenRequest> ReadCliTokenBody(const nlohmann::json& body);
// PUT /api/v1/auth/policy: require_sso (a boolean, required), nothing else.
Result<bool> ReadAuthPolicyBody(const nlohmann::json& body);
// PUT /api/v1/users/{id}/identity: source (1 to 40 characters) and subject (1 to 255), both required strings,
// nothing else (SsoService::LinkIdentity checks what they name).
struct IdentityLink {
  std::string source;
  std::string subject;
};
Result<IdentityLink> ReadIdentityLinkBody(const nlohmann::json& body);

struct LoginBody {
  std::string username;
  std::string password;
};
// POST /api/v1/auth/login: both strings required.
Result<LoginBody> ReadLoginBody(const nlohmann::json& body);

struct PreviewBody {
  std::string schedule_type;
  std::string schedule_conf;
  std::string time_zone = "UTC";
  int count = 5;                        // 1..kMaxPreviewCount
  std::optional<std::int64_t> from_ms;  // epoch ms, 0 .. end of year 9999; nullopt = now
  std::vector<int> calendar_ids;        // the job's calendars and window (ringwheel/calendar.hpp)
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;
};
// POST /api/v1/schedules/preview.
Result<PreviewBody> ReadPreviewBody(const nlohmann::json& body);
// {"time_zone", "fires": [{"ms", "iso"}...], "excluded": [{"ms", "iso", "date", "calendar", "name"}...]}:
// the next `count` fires after `from_ms` (else `now_ms`) within the window and `calendars` (those of
// p.calendar_ids), and the first instant of each day the calendars excluded on the way (at most 10; `date`
// in the calendar's zone, `name` the listed day's, "" for a weekend). An error names the schedule field that
// is wrong.
Result<nlohmann::json> PreviewFires(const PreviewBody& p, std::int64_t now_ms,
                                    std::span<const JobCalendar> calendars = {});

// POST and PUT /api/v1/calendars: a calendar's fields over `c` (all but name optional on create). `days`
// ([{"date": "YYYY-MM-DD", "name": "..."}] or ["YYYY-MM-DD", ...]) replaces the list; `ics` (an iCalendar
// file's text) adds its days to it, recurring events expanded from `ics_from` to `ics_to` (dates; default
// the 1st of January of the clock's year to the 31st of December nine years later), within the bounds of
// ImportIcs (model/ics_import.hpp: a limit passed is a FieldError on `ics` with code "limit"). Then
// CheckCalendar.
Result<JobCalendar> ReadCalendarBody(const nlohmann::json& body, JobCalendar c, bool create,
                                     const ringwheel::Clock& clock);

struct TriggerBody {
  std::optional<std::string> param;    // at most 64 KiB; nullopt = the job's own
  std::optional<std::string> address;  // must then be an address of the job's group (checked by the caller)
};
// POST /api/v1/jobs/{id}/trigger (an empty body is {}).
Result<TriggerBody> ReadTriggerBody(const nlohmann::json& body);

// POST /api/v1/jobs/bulk: one action on up to kMaxBulkJobs jobs, each listed once; `param` only with TRIGGER;
// `tags` (1 to kMaxJobTags valid tags, lower-cased) with TAG and UNTAG only, and required by them.
enum class BulkAction { kStart, kStop, kTrigger, kDelete, kTag, kUntag };
std::string_view ToString(BulkAction a);  // "START", "STOP", "TRIGGER", "DELETE", "TAG", "UNTAG"
inline constexpr std::size_t kMaxBulkJobs = 1000;
struct BulkBody {
  BulkAction action = BulkAction::kStart;
  std::vector<int> job_ids;          // 1 to kMaxBulkJobs, no id twice, in the order given
  std::optional<std::string> param;  // trigger: the fires' parameter (nullopt = each job's own)
  std::vector<std::string> tags;     // tag, untag: the tags added to or removed from each job
};
Result<BulkBody> ReadBulkBody(const nlohmann::json& body);

// POST /api/v1/jobs/{id}/run-once: when, as an instant (`at_ms`, epoch ms, from `now_ms` on) or a delay from
// `now_ms` (`delay_ms`), exactly one, at most kMaxRunOnceAheadMs ahead, rounded up to a whole second (the
// time ring sends in seconds: never early); and `param` (nullopt = the job's own).
inline constexpr std::int64_t kMaxRunOnceAheadMs = std::int64_t{366} * 24 * 3600 * 1000;
struct RunOnceBody {
  std::int64_t fire_at_ms = 0;
  std::optional<std::string> param;  // at most 64 KiB
};
Result<RunOnceBody> ReadRunOnceBody(const nlohmann::json& body, std::int64_t now_ms);

// POST /api/v1/groups/{id}/drain: {"address": "<an online executor of the group>"} (1 to 255 bytes).
struct DrainBody {
  std::string address;
};
Result<DrainBody> ReadDrainBody(const nlohmann::json& body);

// POST /api/v1/logs/clear: exactly one of older_than_days and keep_last; optional group_id, job_id.
Result<LogClear> ReadLogClearBody(const nlohmann::json& body);

}  // namespace cronwheel::admin
