#include "admin/dispatch/trigger_service.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "cronwheel/mutex.hpp"
#include "cronwheel/net/http_address.hpp"
#include "xxljob/protocol.hpp"
#include "xxljob/vocabulary.hpp"

namespace cronwheel::admin {
namespace {

std::string JoinAddresses(const std::vector<std::string>& a) {
  std::string out = "[";
  for (std::size_t i = 0; i < a.size(); ++i)
    out += (i ? ", " : "") + a[i];
  return out + "]";
}

}  // namespace

TriggerService::TriggerService(Settings settings, ringwheel::Clock& clock, JobCatalog& catalog,
                               ExecutorClient& client, TriggerRecorder& recorder, RouterFor routers,
                               SchedulerStore& store, ResendLater resend, DeferToInstant defer,
                               HeldAhead held)
    : settings_(std::move(settings)),
      clock_(clock),
      catalog_(catalog),
      client_(client),
      recorder_(recorder),
      routers_(std::move(routers)),
      store_(store),
      resend_(std::move(resend)),
      defer_(std::move(defer)),
      held_(std::move(held)) {}

void TriggerService::Prefetch(std::span<const Fire> fires) {
  std::vector<int> ids;
  ids.reserve(fires.size());
  for (const auto& f : fires)
    ids.push_back(f.job_id);
  try {
    catalog_.Prefetch(ids);
  } catch (const std::exception& e) {
    spdlog::warn("prefetching {} job(s) failed (each will be loaded on its own): {}", ids.size(), e.what());
  }
}

void TriggerService::Trigger(const Fire& fire, Done done) {
  TriggerResult result;
  result.log_id = fire.log_id;
  result.scheduled_ms = fire.scheduled_ms;
  result.type = fire.type;
  result.trigger_ms = clock_.NowMs();
  result.trigger_code = xxljob::kCodeFail;
  result.shard_index = fire.shard_index;
  result.shard_total = fire.shard_total;
  const auto record = [&] {
    recorder_.Record(std::move(result));
    if (done) done();
  };
  std::shared_ptr<const Job> job;
  std::shared_ptr<const JobGroup> group;
  try {
    job = catalog_.GetJob(fire.job_id);
    if (job) group = catalog_.GetGroup(job->group_id);
  } catch (const std::exception& e) {
    result.trigger_msg = fmt::format("Trigger failed: the job could not be loaded: {}", e.what());
    record();
    return;
  }
  if (!job || !group) {
    result.trigger_msg = job ? fmt::format("Trigger failed: job group {} does not exist", job->group_id)
                             : fmt::format("Trigger failed: job {} does not exist any more", fire.job_id);
    record();
    return;
  }
  const std::string& token = group->access_token ? *group->access_token : settings_.access_token;
  result.executor_handler = job->handler;
  result.executor_param = fire.param ? *fire.param : job->param;
  result.retry_count = fire.retry_count >= 0 ? fire.retry_count : job->retry_count;

  const auto listed = catalog_.Addresses(*group);
  std::string marked;
  auto addresses = RouteAroundMarked(listed, marked);
  // Handed on before its instant: only an executor that holds fires may get it now.
  const bool ahead = defer_ && fire.scheduled_ms > result.trigger_ms;
  if (ahead && std::none_of(addresses.begin(), addresses.end(),
                            [this](const std::string& a) { return AheadOffset(a).has_value(); })) {
    defer_(fire);
    if (done) done();
    return;
  }
  if (ExpandBroadcast(fire, *job, addresses, result, done)) return;
  // What the trigger met (route notes, failures).
  std::string msg;
  if (addresses.empty() && !listed.empty()) {
    msg += fmt::format(
        "Trigger failed: every executor address of the group is draining or unreachable: [{}]\n", marked);
  }
  const auto address = ChooseAddress(fire, *job, *group, addresses, token, msg);
  if (!address) {
    result.trigger_msg = Context(fire, *job, *group, addresses, result.retry_count) + msg;
    record();
    return;
  }
  auto param = RunParam(fire, *job, result);
  if (ahead) {
    if (const auto offset = AheadOffset(*address)) {
      param.run_at_ms = fire.scheduled_ms + *offset;  // the instant on the executor's clock, at its latest
      param.replace_held = fire.replaces_held;
    } else {
      Fire later = fire;
      later.routed_address = *address;
      defer_(std::move(later));
      if (done) done();
      return;
    }
  }
  // The rest happens when the executor answers (on the client's thread): nothing here waits for it. While
  // the admin's connections to the executor are all busy, the fire waits for one until its misfire threshold.
  client_.RunAsync(*address, token, param, SendByMs(fire),
                   [this, fire, job, group, addresses = std::move(addresses), address = *address,
                    result = std::move(result), msg = std::move(msg), ahead = param.run_at_ms != 0,
                    done = std::move(done)](const ExecutorClient::RunReply& reply) mutable {
                     Answered(fire, *job, *group, addresses, address, std::move(result), std::move(msg),
                              reply, ahead);
                     if (done) done();
                   });
}

// The executor's answer to a fire's /run (or why there was none): recorded on the fire's row, or the fire
// handed back to be sent again when nothing of it can have arrived.
void TriggerService::Answered(const Fire& fire, const Job& job, const JobGroup& group,
                              const std::vector<std::string>& addresses, const std::string& address,
                              TriggerResult result, std::string msg, const ExecutorClient::RunReply& reply,
                              bool ahead) {
  if (reply.delivery == ExecutorClient::Delivery::kNotSent && SendAgainLater(fire, address, reply)) return;
  const auto& env = reply.envelope;
  // A draining executor did not run it: elsewhere, at once.
  if (xxljob::RefusedWhileDraining(env.code, env.msg.value_or(""))) {
    RouteAround(address, "draining");
    if (SendAgainLater(fire, address, reply, /*at_once=*/true)) return;
  }
  result.executor_address = address;
  result.trigger_code = env.code;
  msg += fire.trigger_notes;
  // "repeat trigger job" for this very log id: the executor holds the fire already, queued or running (an
  // earlier send of it arrived: this admin's, or a peer's that recovered it). It runs there once and calls
  // back; recorded as a failure, the job's retry would run it a second time.
  if (env.code != xxljob::kCodeSuccess && env.msg && xxljob::IsRepeatTrigger(*env.msg, fire.log_id)) {
    result.trigger_code = xxljob::kCodeSuccess;
    msg =
        "recorded as accepted: the executor holds this fire already, queued or running, and runs it once\n" +
        msg;
  }
  if (result.trigger_code == xxljob::kCodeSuccess) {
    // A sent fire's row records where it went in one line (the same facts are in its columns), which keeps
    // the row small enough for its updates to stay HOT (sql/005_fire_tables.sql); the full context is
    // written only for a fire that failed.
    result.trigger_msg =
        fmt::format("{} fire sent by {} to {} ({}{}), code {}{}{}\n{}", Title(fire.type), settings_.node_id,
                    address, ToString(job.route_strategy), ShardNote(fire), env.code,
                    env.msg && !env.msg->empty() ? ": " : "", env.msg.value_or(""), msg);
    while (!result.trigger_msg.empty() && result.trigger_msg.back() == '\n')
      result.trigger_msg.pop_back();
    result.sent_ahead = ahead;
    recorder_.Record(std::move(result));
    // Held there until its instant: checked before it (AheadWatch).
    if (ahead && held_)
      held_(fire, address, group.access_token ? *group.access_token : settings_.access_token);
    return;
  }
  msg += fmt::format("address: {}\ncode: {}\nmsg: {}", address, env.code, env.msg.value_or(""));
  if (reply.delivery == ExecutorClient::Delivery::kNotSent) {
    msg +=
        fmt::format("\nnot sent within the misfire threshold ({} ms after its instant), after {} attempt(s)",
                    settings_.misfire_threshold.count(), fire.unsent_attempts + 1);
  } else if (reply.delivery == ExecutorClient::Delivery::kUnknown) {
    msg += "\nnot sent again (the executor may have run it): the job's retry rules apply";
  }
  result.trigger_msg = Context(fire, job, group, addresses, result.retry_count) + msg;
  recorder_.Record(std::move(result));
}

std::string TriggerService::ShardNote(const Fire& fire) {
  return fire.shard_total > 1 ? fmt::format(" ({}/{})", fire.shard_index, fire.shard_total) : std::string();
}

// The head of a failed fire's message: everything the trigger knew.
std::string TriggerService::Context(const Fire& fire, const Job& job, const JobGroup& group,
                                    const std::vector<std::string>& addresses, int retries_left) const {
  return fmt::format(
      "Trigger type: {}\nAdmin: {}\nRegistry type: {}\nAddresses: {}\nRoute strategy: {}{}\nBlock strategy: "
      "{}\nTimeout: {} s\nRetries left: {}\n>>>>>>>>>>> Trigger <<<<<<<<<<<\n",
      Title(fire.type), settings_.node_id, ToString(group.address_type), JoinAddresses(addresses),
      ToString(job.route_strategy), ShardNote(fire), ToString(job.block_strategy), job.timeout_s,
      retries_left);
}

// A SHARDING_BROADCAST fire not yet expanded: writes one row per executor and sends each shard as a fire of
// its own (true; `done` runs once every shard's outcome is recorded). A broadcast expanded before (a
// recovered fire) is sent as the shard it is (false).
bool TriggerService::ExpandBroadcast(const Fire& fire, const Job& job,
                                     const std::vector<std::string>& addresses, TriggerResult& result,
                                     Done& done) {
  if (job.route_strategy != RouteStrategy::kShardingBroadcast || fire.shard_total > 1 || fire.address ||
      addresses.size() <= 1) {
    return false;
  }
  std::vector<std::int64_t> ids;
  try {
    ids = store_.CreateShards(fire.log_id, static_cast<int>(addresses.size()), settings_.node_id,
                              clock_.NowMs());
  } catch (const std::exception& e) {
    result.trigger_msg =
        fmt::format("Trigger failed: writing the broadcast's shard rows failed: {}", e.what());
    recorder_.Record(std::move(result));
    if (done) done();
    return true;
  }
  if (ids.size() != addresses.size()) return false;
  auto left = std::make_shared<std::atomic<std::size_t>>(ids.size());
  auto all_done = std::make_shared<Done>(std::move(done));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    Fire shard = fire;
    shard.log_id = ids[i];
    shard.shard_index = static_cast<int>(i);
    shard.shard_total = static_cast<int>(ids.size());
    Trigger(shard, [left, all_done] {
      if (left->fetch_sub(1) == 1 && *all_done) (*all_done)();
    });
  }
  return true;
}

// The address the fire goes to: the one a manual trigger named (if the group has it), the shard's own, or
// the route strategy's choice. Appends what it met (route notes, failures) to `msg`; nullopt = none.
std::optional<std::string> TriggerService::ChooseAddress(const Fire& fire, const Job& job,
                                                         const JobGroup& group,
                                                         const std::vector<std::string>& addresses,
                                                         const std::string& token, std::string& msg) {
  std::optional<std::string> address;
  if (addresses.empty()) {
    msg += fmt::format("Trigger failed: no executor address: {}",
                       group.address_type == AddressType::kAuto
                           ? fmt::format("no executor of app '{}' is online", group.app_name)
                           : std::string("the group has no configured address"));
  } else if (fire.address) {
    const auto wanted = cronwheel::net::NormalizeAddress(*fire.address);
    if (std::find(addresses.begin(), addresses.end(), wanted) != addresses.end()) {
      address = wanted;
    } else {
      msg += fmt::format("Trigger failed: address {} is not registered or configured for group '{}'", wanted,
                         group.app_name);
    }
  } else if (fire.routed_address &&
             std::find(addresses.begin(), addresses.end(), *fire.routed_address) != addresses.end()) {
    address = fire.routed_address;  // routed when it was handed on ahead of its instant
  } else if (fire.shard_total > 1) {
    const auto i = static_cast<std::size_t>(fire.shard_index);
    address = i < addresses.size() ? addresses[i] : addresses.front();
  } else {
    auto route = routers_(job.route_strategy).Route({fire.job_id, addresses, token, clock_.NowMs()});
    if (!route.message.empty()) msg += route.message + "\n";
    address = route.address;
    if (!address) msg += "Trigger failed: the route strategy chose no address";
  }
  return address;
}

// The /run request of a fire (docs/xxl-job-protocol.md §2): the job's handler, glue and block strategy,
// the fire's parameter and shard; logDateTime is the trigger instant.
xxljob::TriggerParam TriggerService::RunParam(const Fire& fire, const Job& job, const TriggerResult& result) {
  xxljob::TriggerParam p;
  p.job_id = job.id;
  p.executor_handler = job.handler;
  p.executor_params = result.executor_param;
  p.executor_block_strategy = std::string(ToString(job.block_strategy));
  p.executor_timeout = job.timeout_s;
  p.log_id = fire.log_id;
  p.log_date_time = result.trigger_ms;
  p.glue_type = std::string(ToString(job.glue_type));
  p.glue_source = job.glue_type == GlueType::kBean ? "" : job.glue_source;
  p.glue_updatetime = job.glue_updated_ms;
  p.broadcast_index = fire.shard_index;
  p.broadcast_total = fire.shard_total;
  return p;
}

std::optional<std::int64_t> TriggerService::AheadOffset(const std::string& address) {
  const auto clock = catalog_.RunAtClock(address);
  if (!clock || std::abs(clock->offset_ms) + clock->error_ms > settings_.max_clock_offset.count()) {
    return std::nullopt;
  }
  return clock->offset_ms + clock->error_ms;
}

std::int64_t TriggerService::SendByMs(const Fire& fire) const {
  return fire.scheduled_ms + settings_.misfire_threshold.count();
}

bool TriggerService::SendAgainLater(const Fire& fire, const std::string& address,
                                    const ExecutorClient::RunReply& reply, bool at_once) {
  if (!resend_) return false;
  const auto delay =
      at_once ? std::chrono::milliseconds(0)
              : std::chrono::milliseconds(std::min(100 << std::min(fire.unsent_attempts, 4), 1000));
  const auto now = clock_.NowMs();
  if (now + delay.count() > SendByMs(fire)) return false;
  Fire again = fire;
  again.unsent_attempts = fire.unsent_attempts + 1;
  again.trigger_notes +=
      fmt::format("attempt {} to {} not sent: {}; sent again after {} ms\n", again.unsent_attempts, address,
                  reply.envelope.msg.value_or(""), delay.count());
  resend_(std::move(again), delay);
  return true;
}

void TriggerService::RouteAgain(Fire fire, const std::string& address, bool refused, const std::string& why) {
  if (refused) RouteAround(address, "refused a connection before the instant of fires it held");
  fire.routed_address.reset();
  fire.trigger_notes += why + "\n";
  if (resend_) resend_(std::move(fire), std::chrono::milliseconds(0));
}

void TriggerService::RouteAround(const std::string& address, const char* why) {
  cronwheel::MutexLock lock(marks_mu_);
  marks_[address] = Mark{clock_.NowMs() + settings_.draining_hold.count(), why};
}

std::vector<std::string> TriggerService::RouteAroundMarked(std::vector<std::string> addresses,
                                                           std::string& marked) {
  cronwheel::MutexLock lock(marks_mu_);
  if (marks_.empty()) return addresses;
  const auto now = clock_.NowMs();
  std::erase_if(marks_, [now](const auto& mark) { return mark.second.until_ms <= now; });
  std::erase_if(addresses, [this, &marked](const std::string& a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(marks_mu_) {
    const auto it = marks_.find(a);
    if (it == marks_.end()) return false;
    marked += fmt::format("{}{} ({})", marked.empty() ? "" : ", ", a, it->second.why);
    return true;
  });
  return addresses;
}

}  // namespace cronwheel::admin
