#include "executor_service.hpp"

#include <fmt/format.h>

#include "xxljob/framing.hpp"
#include "xxljob/vocabulary.hpp"

namespace cronwheel::executor {

xxljob::Envelope ExecutorService::Handle(std::string_view method, std::string_view body,
                                         std::string_view uri) {
  // A draining executor says so to the beats too: FAILOVER (/beat) and BUSYOVER (/idleBeat) move on.
  if ((method == "/beat" || method == "/idleBeat") && dispatcher_.Draining())
    return xxljob::Envelope::Fail(std::string(xxljob::kDrainingMsg));
  if (method == "/beat") return xxljob::Envelope::Success();
  if (method == "/idleBeat") {
    const auto p = xxljob::ParseJobIdParam(body);
    return p.ok() ? dispatcher_.IdleBeat(p->job_id) : xxljob::Envelope::Fail(p.status());
  }
  if (method == "/run" || method == "/trigger") return RunOne(xxljob::ParseTriggerParam(body));
  if (method == "/runs") {  // cronwheel's extension: many /run bodies in one request
    const auto batch = xxljob::ParseTriggerBatch(body);
    if (!batch.ok()) return xxljob::Envelope::Fail(batch.status());
    nlohmann::json answers = nlohmann::json::array();
    for (const auto& p : *batch) {
      const auto e = RunOne(p);
      answers.push_back({{"code", e.code}, {"msg", e.msg.value_or("")}});
    }
    return {xxljob::kCodeSuccess, fmt::format("{} run(s) answered", batch->size()),
            nlohmann::json{{xxljob::kBatchAnswersField, std::move(answers)}}};
  }
  if (method == "/kill") {
    const auto p = xxljob::ParseJobIdParam(body);
    return p.ok() ? dispatcher_.Kill(p->job_id) : xxljob::Envelope::Fail(p.status());
  }
  if (method == "/killFires") {  // cronwheel's extension: these fires only, not their jobs' others
    const auto p = xxljob::ParseCancelParam(body);
    if (!p.ok()) return xxljob::Envelope::Fail(p.status());
    const auto killed = dispatcher_.KillFires(p->log_ids);
    return {xxljob::kCodeSuccess, fmt::format("{} fire(s) killed", killed.size()),
            nlohmann::json{{xxljob::kKilledField, killed}}};
  }
  if (method == "/cancel") {
    const auto p = xxljob::ParseCancelParam(body);
    if (!p.ok()) return xxljob::Envelope::Fail(p.status());
    const auto dropped = dispatcher_.Cancel(p->log_ids);
    return {xxljob::kCodeSuccess, fmt::format("{} held fire(s) dropped", dropped.size()),
            nlohmann::json{{"cancelled", dropped}}};
  }
  if (method == "/accepted") {
    const auto p = xxljob::ParseCancelParam(body);
    if (!p.ok()) return xxljob::Envelope::Fail(p.status());
    const auto known = dispatcher_.Accepted(p->log_ids);
    return {xxljob::kCodeSuccess,
            fmt::format("{} of {} fire(s) accepted here", known.size(), p->log_ids.size()),
            nlohmann::json{{xxljob::kAcceptedField, known}}};
  }
  if (method == "/drain") {
    if (!drain_request_) return xxljob::Envelope::Fail(std::string(xxljob::kNoDrainRequestsMsg));
    // Once: a second request (or one after SIGTERM) starts nothing new.
    if (dispatcher_.Draining() || drain_requested_.exchange(true)) {
      return {xxljob::kCodeSuccess, std::string(xxljob::kAlreadyDrainingMsg), nullptr};
    }
    drain_request_();
    return {xxljob::kCodeSuccess, std::string(xxljob::kDrainStartedMsg), nullptr};
  }
  if (method == "/log") {
    const auto p = xxljob::ParseLogParam(body);
    if (!p.ok()) return xxljob::Envelope::Fail(p.status());
    return xxljob::Envelope::Success(xxljob::ToJson(logs_.Read(*p)));
  }
  return xxljob::Envelope::Fail(xxljob::UriNotFound(uri));
}

xxljob::Envelope ExecutorService::RunOne(const absl::StatusOr<xxljob::TriggerParam>& p) {
  auto e = p.ok() ? dispatcher_.Run(*p) : xxljob::Envelope::Fail(p.status());
  if (metrics_ != nullptr) metrics_->CountRun(p.ok(), e.code, e.msg.value_or(""));
  return e;
}

}  // namespace cronwheel::executor
