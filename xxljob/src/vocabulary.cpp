#include "xxljob/vocabulary.hpp"

#include <array>
#include <string>
#include <utility>

namespace cronwheel::xxljob {
namespace {

template <class E, std::size_t N>
using Names = std::array<std::pair<E, std::string_view>, N>;

constexpr Names<MisfireStrategy, 2> kMisfire{
    {{MisfireStrategy::kDoNothing, "DO_NOTHING"}, {MisfireStrategy::kFireOnceNow, "FIRE_ONCE_NOW"}}};
constexpr Names<RouteStrategy, 10> kRoute{{{RouteStrategy::kFirst, "FIRST"},
                                           {RouteStrategy::kLast, "LAST"},
                                           {RouteStrategy::kRound, "ROUND"},
                                           {RouteStrategy::kRandom, "RANDOM"},
                                           {RouteStrategy::kConsistentHash, "CONSISTENT_HASH"},
                                           {RouteStrategy::kLeastFrequentlyUsed, "LEAST_FREQUENTLY_USED"},
                                           {RouteStrategy::kLeastRecentlyUsed, "LEAST_RECENTLY_USED"},
                                           {RouteStrategy::kFailover, "FAILOVER"},
                                           {RouteStrategy::kBusyover, "BUSYOVER"},
                                           {RouteStrategy::kShardingBroadcast, "SHARDING_BROADCAST"}}};
constexpr Names<BlockStrategy, 3> kBlock{{{BlockStrategy::kSerialExecution, "SERIAL_EXECUTION"},
                                          {BlockStrategy::kDiscardLater, "DISCARD_LATER"},
                                          {BlockStrategy::kCoverEarly, "COVER_EARLY"}}};
constexpr Names<GlueType, 8> kGlue{{{GlueType::kBean, "BEAN"},
                                    {GlueType::kGroovy, "GLUE_GROOVY"},
                                    {GlueType::kShell, "GLUE_SHELL"},
                                    {GlueType::kPython, "GLUE_PYTHON"},
                                    {GlueType::kPython2, "GLUE_PYTHON2"},
                                    {GlueType::kPhp, "GLUE_PHP"},
                                    {GlueType::kNodejs, "GLUE_NODEJS"},
                                    {GlueType::kPowershell, "GLUE_POWERSHELL"}}};
constexpr Names<TriggerType, 7> kTrigger{{{TriggerType::kCron, "CRON"},
                                          {TriggerType::kManual, "MANUAL"},
                                          {TriggerType::kRetry, "RETRY"},
                                          {TriggerType::kParent, "PARENT"},
                                          {TriggerType::kApi, "API"},
                                          {TriggerType::kMisfire, "MISFIRE"},
                                          {TriggerType::kWorkflow, "WORKFLOW"}}};
constexpr Names<TriggerType, 7> kTriggerTitle{{{TriggerType::kCron, "Cron trigger"},
                                               {TriggerType::kManual, "Manual trigger"},
                                               {TriggerType::kRetry, "Fail retry trigger"},
                                               {TriggerType::kParent, "Parent job trigger"},
                                               {TriggerType::kApi, "Api trigger"},
                                               {TriggerType::kMisfire, "Misfire compensation trigger"},
                                               {TriggerType::kWorkflow, "Workflow trigger"}}};
constexpr Names<AddressType, 2> kAddress{{{AddressType::kAuto, "AUTO"}, {AddressType::kManual, "MANUAL"}}};

template <class E, std::size_t N>
std::optional<E> Find(const Names<E, N>& names, std::string_view s) {
  for (const auto& [e, n] : names) {
    if (n == s) return e;
  }
  return std::nullopt;
}

template <class E, std::size_t N>
std::string_view Name(const Names<E, N>& names, E v) {
  for (const auto& [e, n] : names) {
    if (e == v) return n;
  }
  return "?";
}

template <class E, std::size_t N>
std::string List(const Names<E, N>& names) {
  std::string out;
  for (const auto& [e, n] : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

}  // namespace

std::optional<MisfireStrategy> ParseMisfireStrategy(std::string_view s) {
  return Find(kMisfire, s);
}
std::optional<RouteStrategy> ParseRouteStrategy(std::string_view s) {
  return Find(kRoute, s);
}
std::optional<BlockStrategy> ParseBlockStrategy(std::string_view s) {
  return Find(kBlock, s);
}
std::optional<GlueType> ParseGlueType(std::string_view s) {
  return Find(kGlue, s);
}
std::optional<TriggerType> ParseTriggerType(std::string_view s) {
  return Find(kTrigger, s);
}
std::optional<AddressType> ParseAddressType(std::string_view s) {
  return Find(kAddress, s);
}
std::string_view ToString(MisfireStrategy v) {
  return Name(kMisfire, v);
}
std::string_view ToString(RouteStrategy v) {
  return Name(kRoute, v);
}
std::string_view ToString(BlockStrategy v) {
  return Name(kBlock, v);
}
std::string_view ToString(GlueType v) {
  return Name(kGlue, v);
}
std::string_view ToString(TriggerType v) {
  return Name(kTrigger, v);
}
std::string_view ToString(AddressType v) {
  return Name(kAddress, v);
}
std::string ValidValues(MisfireStrategy) {
  return List(kMisfire);
}
std::string ValidValues(RouteStrategy) {
  return List(kRoute);
}
std::string ValidValues(BlockStrategy) {
  return List(kBlock);
}
std::string ValidValues(GlueType) {
  return List(kGlue);
}
std::string ValidValues(AddressType) {
  return List(kAddress);
}
std::string_view Title(TriggerType v) {
  return Name(kTriggerTitle, v);
}

std::string RepeatTriggerMsg(std::int64_t log_id) {
  return "repeat trigger job, logId:" + std::to_string(log_id);
}

bool IsRepeatTrigger(std::string_view msg, std::int64_t log_id) {
  const auto id = std::to_string(log_id);
  for (const std::string_view head : {"repeat trigger job, logId:", "repeate trigger job, logId:"}) {
    if (msg.size() == head.size() + id.size() && msg.substr(0, head.size()) == head &&
        msg.substr(head.size()) == id) {
      return true;
    }
  }
  return false;
}

}  // namespace cronwheel::xxljob
