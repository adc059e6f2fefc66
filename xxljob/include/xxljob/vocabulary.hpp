#pragma once
// XXL-JOB's vocabulary, spelled on the wire, in the database and in the console exactly as XXL-JOB spells
// it (docs/xxl-job-protocol.md §1-§10), so its users read the same words: result codes, header names, and
// the enumerations of a job (misfire, route and block strategies, glue types), of a fire (trigger types)
// and of an executor group (address types). Shared by the admin and the executor; defined once here.
//
// Thread-safety: constants and pure functions.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cronwheel::xxljob {

// Handle and result codes (XXL-JOB's ReturnT / XxlJobContext, §7 step 5). 0 in a job_log row means "no
// result yet".
inline constexpr int kCodeSuccess = 200;
inline constexpr int kCodeFail = 500;
inline constexpr int kCodeTimeout = 502;  // handle code of a fire that ran past its timeout

// The header carrying the access token, in both directions (§1).
inline constexpr const char* kAccessTokenHeader = "XXL-JOB-ACCESS-TOKEN";
// Dialect C also sends the executor's app name.
inline constexpr const char* kAppNameHeader = "XXL-JOB-APPNAME";
// The message of a wrong or missing token, which admins and executors answer alike (§1).
inline constexpr std::string_view kWrongTokenMsg = "The access token is wrong.";
// cronwheel's words, not XXL-JOB's: a cronwheel-executor that is draining (stopping after its running fires)
// or stopping answers /run, /beat and /idleBeat with code 500 and a message starting with one of these. The
// fire was not run: a cronwheel admin sends it to another executor at once (dispatch/trigger_service.hpp);
// an XXL-JOB admin sees a failed trigger and applies its failover and retry rules.
inline constexpr std::string_view kDrainingMsg = "executor is draining: trigger refused, not run";
inline constexpr std::string_view kStoppingMsg = "executor is stopping: trigger refused, not run";
// Whether an executor's answer says it refused the fire unrun because it is draining or stopping.
// POST /drain, a cronwheel extension of the executor protocol (an admin asks the executor to drain, as
// SIGTERM does; docs/operations.md "Draining an executor"): its answers. XXL-JOB's executors answer the
// unknown path with 500 "invalid request, uri-mapping(/drain) not found.".
inline constexpr std::string_view kDrainStartedMsg =
    "drain started: no new fires; the running ones finish and call back, then the executor exits";
inline constexpr std::string_view kAlreadyDrainingMsg = "the executor is draining already";
inline constexpr std::string_view kNoDrainRequestsMsg =
    "this executor takes no drain requests (its embedder did not enable them)";

[[nodiscard]] inline bool RefusedWhileDraining(int code, std::string_view msg) {
  return code == kCodeFail && (msg.starts_with(kDrainingMsg) || msg.starts_with(kStoppingMsg));
}

enum class MisfireStrategy { kDoNothing, kFireOnceNow };  // §5
enum class RouteStrategy {                                // §8
  kFirst,
  kLast,
  kRound,
  kRandom,
  kConsistentHash,
  kLeastFrequentlyUsed,
  kLeastRecentlyUsed,
  kFailover,
  kBusyover,
  kShardingBroadcast,
};
enum class BlockStrategy { kSerialExecution, kDiscardLater, kCoverEarly };                      // §9
enum class GlueType { kBean, kGroovy, kShell, kPython, kPython2, kPhp, kNodejs, kPowershell };  // §10
// Why a fire exists (XXL-JOB TriggerTypeEnum, §5).
// kWorkflow (cronwheel): the fire of a workflow node (admin/model/workflow.hpp).
enum class TriggerType { kCron, kManual, kRetry, kParent, kApi, kMisfire, kWorkflow };
enum class AddressType { kAuto, kManual };  // §4 address_type 0/1

// Text <-> enum. Parse* is exact (upper case, XXL-JOB spelling); nullopt for anything else.
std::optional<MisfireStrategy> ParseMisfireStrategy(std::string_view s);
std::optional<RouteStrategy> ParseRouteStrategy(std::string_view s);
std::optional<BlockStrategy> ParseBlockStrategy(std::string_view s);
std::optional<GlueType> ParseGlueType(std::string_view s);
std::optional<TriggerType> ParseTriggerType(std::string_view s);
std::optional<AddressType> ParseAddressType(std::string_view s);
std::string_view ToString(MisfireStrategy v);
std::string_view ToString(RouteStrategy v);
std::string_view ToString(BlockStrategy v);
std::string_view ToString(GlueType v);
std::string_view ToString(TriggerType v);
std::string_view ToString(AddressType v);
// "DO_NOTHING, FIRE_ONCE_NOW" and so on: for error messages that list what is valid.
std::string ValidValues(MisfireStrategy);
std::string ValidValues(RouteStrategy);
std::string ValidValues(BlockStrategy);
std::string ValidValues(GlueType);
std::string ValidValues(AddressType);
// The English titles XXL-JOB shows for trigger types ("Cron trigger", "Fail retry trigger", ...).
std::string_view Title(TriggerType v);

// An executor's refusal of a /run whose log id it holds already, queued or running (code 500; §9):
// "repeat trigger job, logId:N" (XXL-JOB 3.x and cronwheel's executor; 2.x spells it "repeate").
std::string RepeatTriggerMsg(std::int64_t log_id);
// Whether `msg` is that refusal for `log_id`, in either spelling.
bool IsRepeatTrigger(std::string_view msg, std::int64_t log_id);

}  // namespace cronwheel::xxljob
