#pragma once
// An in-memory CalendarStore (catalog/calendar_store.hpp) for unit tests of the rules of calendars
// (CalendarService): calendars, and the jobs that keep them with their next fire and the instants of their
// unsent fires, as the test sets them. A transaction works on a copy of the state and commits by replacing
// it, so a refused call is seen to change nothing. It records the statements that lock or write, in order
// (State::steps: "lock calendar 1", "lock schedules 2 3", "withdraw 2", "rewind 2 to 60000", ...), for the
// tests to check what the rules asked and in which order.
//
// Thread-safety: one mutex, held for a whole transaction (transactions are serial).

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "admin/catalog/calendar_store.hpp"

namespace cwtest {

class MemoryCalendarStore final : public cronwheel::admin::CalendarStore {
 public:
  using JobCalendar = cronwheel::admin::JobCalendar;
  using CalendarListing = cronwheel::admin::CalendarListing;

  // A job as the calendar rules see it.
  struct Job {
    std::vector<int> calendar_ids;
    std::int64_t next_fire_ms = 0;          // 0 = stopped
    std::vector<std::int64_t> unsent_ms{};  // the instants of its fires written and not yet accepted
  };
  // Everything a transaction may change.
  struct State {
    std::map<int, JobCalendar> calendars;
    std::map<int, Job> jobs;
    std::vector<std::string> steps;  // the statements that locked or wrote, in order
    int next_id = 1;
  };

  // Set-up (outside any transaction): a calendar as stored (its id kept; created with Create otherwise).
  void PutCalendar(const JobCalendar& c) {
    std::lock_guard lock(mu_);
    state_.calendars[c.id] = c;
    state_.next_id = std::max(state_.next_id, c.id + 1);
  }
  void PutJob(int id, Job job) {
    std::lock_guard lock(mu_);
    state_.jobs[id] = std::move(job);
  }
  // A copy of the committed state.
  State Snapshot() {
    std::lock_guard lock(mu_);
    return state_;
  }

  void Transact(const std::function<bool(Tx&)>& body) override {
    std::lock_guard lock(mu_);
    State copy = state_;
    MemoryTx tx(copy);
    if (body(tx)) state_ = std::move(copy);
  }
  std::optional<CalendarListing> Get(int id) override {
    std::lock_guard lock(mu_);
    const auto it = state_.calendars.find(id);
    if (it == state_.calendars.end()) return std::nullopt;
    return Listing(state_, it->second);
  }
  std::vector<CalendarListing> List() override {
    std::lock_guard lock(mu_);
    std::vector<CalendarListing> out;
    for (const auto& [id, c] : state_.calendars)
      out.push_back(Listing(state_, c));
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.calendar.name < b.calendar.name; });
    return out;
  }

 private:
  static bool Keeps(const Job& j, int calendar_id) {
    return std::find(j.calendar_ids.begin(), j.calendar_ids.end(), calendar_id) != j.calendar_ids.end();
  }
  static CalendarListing Listing(const State& s, const JobCalendar& c) {
    const auto jobs =
        std::count_if(s.jobs.begin(), s.jobs.end(), [&](const auto& j) { return Keeps(j.second, c.id); });
    return {.calendar = c, .jobs = static_cast<int>(jobs)};
  }

  class MemoryTx final : public Tx {
   public:
    explicit MemoryTx(State& s) : s_(s) {}
    bool NameTaken(const std::string& name, int except_id) override {
      return std::any_of(s_.calendars.begin(), s_.calendars.end(),
                         [&](const auto& c) { return c.first != except_id && c.second.name == name; });
    }
    std::optional<JobCalendar> LockCalendar(int id) override {
      s_.steps.push_back("lock calendar " + std::to_string(id));
      const auto it = s_.calendars.find(id);
      if (it == s_.calendars.end()) return std::nullopt;
      return it->second;
    }
    JobCalendar InsertCalendar(const JobCalendar& calendar, std::int64_t now_ms) override {
      JobCalendar c = calendar;
      c.id = s_.next_id++;
      c.created_ms = now_ms;
      c.updated_ms = now_ms;
      s_.calendars[c.id] = c;
      s_.steps.push_back("insert calendar " + std::to_string(c.id));
      return c;
    }
    JobCalendar UpdateCalendar(const JobCalendar& calendar, std::int64_t now_ms) override {
      JobCalendar c = calendar;
      const auto& before = s_.calendars.at(c.id);
      c.created_ms = before.created_ms;
      c.updated_ms = std::max(now_ms, before.updated_ms + 1);
      s_.calendars[c.id] = c;
      s_.steps.push_back("update calendar " + std::to_string(c.id));
      return c;
    }
    std::vector<int> JobsKeeping(int id, int limit) override {
      std::vector<int> out;
      for (const auto& [jid, j] : s_.jobs)
        if (Keeps(j, id) && static_cast<int>(out.size()) < limit) out.push_back(jid);
      return out;
    }
    void DeleteCalendar(int id) override {
      s_.calendars.erase(id);
      s_.steps.push_back("delete calendar " + std::to_string(id));
    }
    std::vector<int> StartedJobsKeeping(int id) override {
      std::vector<int> out;
      for (const auto& [jid, j] : s_.jobs)
        if (Keeps(j, id) && j.next_fire_ms > 0) out.push_back(jid);
      return out;
    }
    void LockSchedules(std::span<const int> job_ids) override {
      if (job_ids.empty()) return;
      std::string step = "lock schedules";
      for (const int id : job_ids)
        step += " " + std::to_string(id);
      s_.steps.push_back(step);
    }
    std::optional<std::int64_t> WithdrawUnsent(int job_id) override {
      s_.steps.push_back("withdraw " + std::to_string(job_id));
      auto& unsent = s_.jobs.at(job_id).unsent_ms;
      if (unsent.empty()) return std::nullopt;
      const auto first = *std::min_element(unsent.begin(), unsent.end());
      unsent.clear();
      return first;
    }
    void RewindSchedule(int job_id, std::int64_t from_ms) override {
      s_.steps.push_back("rewind " + std::to_string(job_id) + " to " + std::to_string(from_ms));
      auto& next = s_.jobs.at(job_id).next_fire_ms;
      if (next > from_ms) next = from_ms;
    }

   private:
    State& s_;
  };

  std::mutex mu_;
  State state_;
};

}  // namespace cwtest
