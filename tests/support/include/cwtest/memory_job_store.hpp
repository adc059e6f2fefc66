#pragma once
// An in-memory JobStore (catalog/job_store.hpp) for unit tests of the rules of jobs (JobService): jobs,
// groups, alert channels, calendars, workflows naming jobs, schedules, glue versions, run-once requests and
// the fires a rule withdrew, as the test sets them. A transaction works on a copy of the state and commits
// by replacing it, so a refused call is seen to change nothing. It records what the rules asked of it
// (locks, withdrawals, deleted fires) for the tests to check.
//
// Thread-safety: one mutex, held for a whole transaction (transactions are serial).

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "admin/catalog/job_store.hpp"

namespace cwtest {

class MemoryJobStore final : public cronwheel::admin::JobStore {
 public:
  using Job = cronwheel::admin::Job;
  using RunOnce = cronwheel::admin::RunOnce;

  struct Schedule {
    std::int64_t next_fire_ms = 0;
    std::int64_t last_fire_ms = 0;
  };
  struct GlueVersion {
    int job_id = 0;
    std::string glue_source;
    std::int64_t glue_updated_ms = 0;
  };
  // Everything a transaction may change.
  struct State {
    std::map<int, Job> jobs;
    std::map<int, Schedule> schedules;
    std::set<int> groups;
    std::set<int> alert_channels;
    std::set<int> calendars;
    std::map<int, std::vector<WorkflowRef>> workflows_naming;  // by job id
    std::vector<GlueVersion> glue_history;                     // oldest first
    std::map<std::int64_t, RunOnce> run_once;
    std::set<std::int64_t> claimed_fires;       // fires an admin claimed: WithdrawUnclaimed refuses them
    std::vector<int> withdrawals;               // job ids whose unsent fires a rule withdrew, in order
    std::vector<std::int64_t> withdrawn_fires;  // fires withdrawn one by one (run once)
    std::vector<int> locked_schedules;          // job ids whose schedule partition was locked, in order
    int next_job_id = 1;
  };

  // Set-up (outside any transaction).
  void PutGroup(int id) {
    With([&](State& s) { s.groups.insert(id); });
  }
  void PutAlertChannel(int id) {
    With([&](State& s) { s.alert_channels.insert(id); });
  }
  void PutCalendar(int id) {
    With([&](State& s) { s.calendars.insert(id); });
  }
  void NameInWorkflow(int job_id, int workflow_id, std::string name) {
    With([&](State& s) { s.workflows_naming[job_id].push_back({workflow_id, std::move(name)}); });
  }
  void PutRunOnce(const RunOnce& r) {
    With([&](State& s) { s.run_once[r.id] = r; });
  }
  void ClaimFire(std::int64_t log_id) {
    With([&](State& s) { s.claimed_fires.insert(log_id); });
  }
  // A copy of the committed state.
  State Snapshot() {
    std::lock_guard lock(mu_);
    return state_;
  }
  std::vector<int> DeletedFiresOf() {
    std::lock_guard lock(mu_);
    return deleted_fires_of_;
  }

  void Transact(const std::function<bool(Tx&)>& body) override {
    std::lock_guard lock(mu_);
    State copy = state_;
    MemoryTx tx(copy);
    if (body(tx)) state_ = std::move(copy);
  }
  std::optional<Job> GetJob(int id) override {
    std::lock_guard lock(mu_);
    return Find(state_, id);
  }
  cronwheel::admin::JobPage ListJobs(const cronwheel::admin::JobQuery& q) override {
    std::lock_guard lock(mu_);
    cronwheel::admin::JobPage page;
    for (const auto& entry : state_.jobs) {
      const Job& j = entry.second;  // not a structured binding: the tags' lambda below captures it
      if (q.group_id && j.group_id != *q.group_id) continue;
      if (q.enabled && j.enabled != *q.enabled) continue;
      if (q.group_ids &&
          std::find(q.group_ids->begin(), q.group_ids->end(), j.group_id) == q.group_ids->end())
        continue;
      if (q.text && !q.text->empty() && !Mentions(j, *q.text)) continue;
      if (!std::all_of(q.tags.begin(), q.tags.end(), [&](const std::string& t) {
            return std::find(j.tags.begin(), j.tags.end(), t) != j.tags.end();
          }))
        continue;
      ++page.total;
      if (page.total > q.offset && static_cast<int>(page.items.size()) < q.limit) page.items.push_back(j);
    }
    return page;
  }
  std::vector<cronwheel::admin::TagCount> ListTags(
      const std::optional<std::vector<int>>& group_ids) override {
    std::lock_guard lock(mu_);
    std::map<std::string, std::int64_t> counts;
    for (const auto& [id, j] : state_.jobs) {
      if (group_ids && std::find(group_ids->begin(), group_ids->end(), j.group_id) == group_ids->end())
        continue;
      for (const auto& t : j.tags)
        ++counts[t];
    }
    std::vector<cronwheel::admin::TagCount> out;
    out.reserve(counts.size());
    for (auto& [tag, n] : counts)
      out.push_back({tag, n});
    return out;
  }
  void DeleteJobFires(int job_id) override {
    std::lock_guard lock(mu_);
    deleted_fires_of_.push_back(job_id);
  }
  // The fires executors hold ahead and the claims a rule withdrew are the scheduler's to write: the test
  // sets them (SetSentAhead, SetWithdrawnClaims) and reads what the rules marked (MarkedAhead).
  void SetSentAhead(int job_id, std::vector<cronwheel::admin::SentAheadFire> fires) {
    std::lock_guard lock(mu_);
    sent_ahead_[job_id] = std::move(fires);
  }
  void SetWithdrawnClaims(int job_id, std::vector<std::int64_t> log_ids) {
    std::lock_guard lock(mu_);
    withdrawn_claims_[job_id] = std::move(log_ids);
  }
  std::vector<std::pair<std::int64_t, std::string>> MarkedAhead() {
    std::lock_guard lock(mu_);
    return marked_ahead_;
  }
  std::vector<cronwheel::admin::SentAheadFire> SentAhead(int job_id) override {
    std::lock_guard lock(mu_);
    const auto it = sent_ahead_.find(job_id);
    return it == sent_ahead_.end() ? std::vector<cronwheel::admin::SentAheadFire>{} : it->second;
  }
  std::vector<std::int64_t> WithdrawnClaims(int job_id) override {
    std::lock_guard lock(mu_);
    const auto it = withdrawn_claims_.find(job_id);
    return it == withdrawn_claims_.end() ? std::vector<std::int64_t>{} : it->second;
  }
  void MarkWithdrawnAhead(std::span<const std::int64_t> log_ids, std::string_view note) override {
    std::lock_guard lock(mu_);
    for (const auto id : log_ids)
      marked_ahead_.emplace_back(id, std::string(note));
  }
  std::optional<std::int64_t> InsertManualFire(int job_id, cronwheel::admin::TriggerType,
                                               const std::optional<std::string>&, const std::string&,
                                               std::int64_t) override {
    std::lock_guard lock(mu_);
    if (!state_.jobs.contains(job_id)) return std::nullopt;
    return ++next_log_id_;
  }
  std::optional<RunOnce> InsertRunOnce(int job_id, std::int64_t fire_at_ms,
                                       const std::optional<std::string>& param, const std::string& who,
                                       std::int64_t now_ms) override {
    std::lock_guard lock(mu_);
    if (!state_.jobs.contains(job_id)) return std::nullopt;
    RunOnce r{.id = static_cast<std::int64_t>(state_.run_once.size()) + 1,
              .job_id = job_id,
              .fire_at_ms = fire_at_ms,
              .param = param,
              .created_by = who,
              .created_ms = now_ms};
    state_.run_once[r.id] = r;
    return r;
  }
  std::vector<RunOnce> ListRunOnce(int job_id, int limit) override {
    std::lock_guard lock(mu_);
    std::vector<RunOnce> out;
    for (const auto& [id, r] : state_.run_once)
      if (r.job_id == job_id) out.push_back(r);
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.fire_at_ms > b.fire_at_ms; });
    if (static_cast<int>(out.size()) > limit) out.resize(static_cast<std::size_t>(limit));
    return out;
  }

 private:
  // ListJobs' text filter: in the description, the handler or a tag, ignoring case.
  static bool Mentions(const Job& j, const std::string& text) {
    const auto lower = [](std::string v) {
      std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
      return v;
    };
    const auto needle = lower(text);
    std::string hay = j.description + " " + j.handler;
    for (const auto& t : j.tags)
      hay += " " + t;
    return lower(hay).find(needle) != std::string::npos;
  }
  static std::optional<Job> Find(const State& s, int id) {
    const auto it = s.jobs.find(id);
    if (it == s.jobs.end()) return std::nullopt;
    Job j = it->second;
    if (const auto sc = s.schedules.find(id); sc != s.schedules.end()) {
      j.next_fire_ms = sc->second.next_fire_ms;
      j.last_fire_ms = sc->second.last_fire_ms;
    }
    return j;
  }

  class MemoryTx final : public Tx {
   public:
    explicit MemoryTx(State& s) : s_(s) {}
    bool GroupExists(int group_id) override { return s_.groups.contains(group_id); }
    std::vector<int> MissingAlertChannels(std::span<const int> ids) override {
      return Missing(s_.alert_channels, ids);
    }
    std::vector<int> MissingCalendars(std::span<const int> ids) override {
      return Missing(s_.calendars, ids);
    }
    std::map<int, int> GroupsOfJobs(std::span<const int> ids) override {
      std::map<int, int> out;
      for (const int id : ids)
        if (const auto it = s_.jobs.find(id); it != s_.jobs.end()) out[id] = it->second.group_id;
      return out;
    }
    std::unordered_map<int, std::vector<int>> ChildLinks() override {
      std::unordered_map<int, std::vector<int>> out;
      for (const auto& [id, j] : s_.jobs)
        if (!j.child_job_ids.empty()) out[id] = j.child_job_ids;
      return out;
    }
    void LockSchedule(int id) override { s_.locked_schedules.push_back(id); }
    std::optional<Job> LockJob(int id) override {
      LockSchedule(id);
      return Find(s_, id);
    }
    Job InsertJob(const Job& job, std::int64_t now_ms) override {
      Job j = job;
      j.id = s_.next_job_id++;
      j.created_ms = now_ms;
      j.updated_ms = now_ms;
      j.glue_updated_ms = now_ms;
      j.next_fire_ms = 0;
      j.last_fire_ms = 0;
      s_.jobs[j.id] = j;
      return j;
    }
    Job UpdateJob(const Job& job, std::int64_t updated_ms) override {
      Job j = job;
      j.created_ms = s_.jobs.at(job.id).created_ms;
      j.updated_ms = updated_ms;
      s_.jobs[j.id] = j;
      return *Find(s_, j.id);
    }
    bool SetEnabled(int id, bool enabled, std::int64_t now_ms) override {
      const auto it = s_.jobs.find(id);
      if (it == s_.jobs.end()) return false;
      it->second.enabled = enabled;
      if (enabled) it->second.stop_reason.clear();
      it->second.updated_ms = std::max(now_ms, it->second.updated_ms + 1);
      return true;
    }
    void SetSchedule(int id, std::int64_t next_fire_ms, std::optional<std::int64_t> last_fire_ms) override {
      auto& sc = s_.schedules[id];
      sc.next_fire_ms = next_fire_ms;
      if (last_fire_ms) sc.last_fire_ms = *last_fire_ms;
    }
    void WriteGlueHistory(const Job& job, std::int64_t, int keep) override {
      s_.glue_history.push_back({job.id, job.glue_source, job.glue_updated_ms});
      // Keep the newest `keep` of this job's versions: drop its oldest while it has more.
      auto count = std::count_if(s_.glue_history.begin(), s_.glue_history.end(),
                                 [&](const GlueVersion& v) { return v.job_id == job.id; });
      for (auto it = s_.glue_history.begin(); count > keep && it != s_.glue_history.end();) {
        if (it->job_id == job.id) {
          it = s_.glue_history.erase(it);
          --count;
        } else {
          ++it;
        }
      }
    }
    void WithdrawUnsent(int job_id) override { s_.withdrawals.push_back(job_id); }
    std::vector<WorkflowRef> WorkflowsNaming(int job_id, int limit) override {
      auto out = s_.workflows_naming[job_id];
      if (static_cast<int>(out.size()) > limit) out.resize(static_cast<std::size_t>(limit));
      return out;
    }
    void RemoveChildLinks(int id) override {
      for (auto& [jid, j] : s_.jobs)
        std::erase(j.child_job_ids, id);
    }
    bool DeleteJob(int id) override {
      s_.schedules.erase(id);
      return s_.jobs.erase(id) > 0;
    }
    std::optional<RunOnce> LockRunOnce(int job_id, std::int64_t id) override {
      const auto it = s_.run_once.find(id);
      if (it == s_.run_once.end() || it->second.job_id != job_id) return std::nullopt;
      return it->second;
    }
    bool WithdrawUnclaimed(std::int64_t log_id) override {
      if (s_.claimed_fires.contains(log_id)) return false;
      s_.withdrawn_fires.push_back(log_id);
      return true;
    }
    RunOnce CancelRunOnce(std::int64_t id, std::int64_t now_ms, const std::string& who) override {
      auto& r = s_.run_once.at(id);
      r.cancelled_ms = now_ms;
      r.cancelled_by = who;
      r.log_id = 0;
      return r;
    }

   private:
    static std::vector<int> Missing(const std::set<int>& have, std::span<const int> ids) {
      std::vector<int> out;
      for (const int id : ids)
        if (!have.contains(id)) out.push_back(id);
      return out;
    }
    State& s_;
  };

  template <class F>
  void With(F&& f) {
    std::lock_guard lock(mu_);
    f(state_);
  }

  std::mutex mu_;
  State state_;
  std::vector<int> deleted_fires_of_;
  std::map<int, std::vector<cronwheel::admin::SentAheadFire>> sent_ahead_;
  std::map<int, std::vector<std::int64_t>> withdrawn_claims_;
  std::vector<std::pair<std::int64_t, std::string>> marked_ahead_;
  std::int64_t next_log_id_ = 0;
};

}  // namespace cwtest
