// End-to-end: real admins and executors on loopback. Every scheduled instant of every job reaches an
// executor exactly once, with one admin, and with three admins one of which is killed with SIGKILL every
// 5 s and restarted. Counts are printed.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <csignal>
#include <map>
#include <set>
#include <thread>

#include "cluster.hpp"
#include "ringwheel/schedule.hpp"

namespace {

using namespace std::chrono_literals;
using cwtest::Cluster;

constexpr int kJobs = 50;
constexpr const char* kCron = "*/2 * * * * ?";

void SleepUntil(std::int64_t wall_ms) {
  const auto now = Cluster::NowMs();
  if (wall_ms > now) std::this_thread::sleep_for(std::chrono::milliseconds(wall_ms - now));
}

struct Counts {
  int expected = 0;    // instants in the window, summed over jobs
  int handled = 0;     // of those, run by an executor exactly once
  int missed = 0;      // no fire, or a fire no executor ran
  int duplicated = 0;  // two fires for one instant, or one fire run twice
  int extra_runs = 0;  // runs of fires outside the window (allowed), for the record
};

// Checks every instant of every job in [first, last] against the fires in the database and the runs
// recorded by the executors.
Counts Check(Cluster& c, const std::vector<int>& jobs, std::int64_t first, std::int64_t last) {
  Counts out;
  const auto runs = c.ExecutedLogIds();
  const auto schedule = ringwheel::Schedule::Parse("CRON", kCron, "UTC", nullptr).value();
  std::set<std::int64_t> in_window;
  for (int job : jobs) {
    std::map<std::int64_t, std::vector<std::int64_t>> fires;  // instant -> log ids
    for (const auto& r :
         c.Exec(fmt::format("SELECT scheduled_ms, id FROM job_log WHERE job_id = {} AND trigger_type IN "
                            "('CRON', 'MISFIRE') AND NOT skipped",
                            job))) {
      fires[r[0].as<std::int64_t>()].push_back(r[1].as<std::int64_t>());
    }
    for (auto t = schedule.NextFireMs(first - 1); t && *t <= last; t = schedule.NextFireMs(*t)) {
      ++out.expected;
      const auto it = fires.find(*t);
      if (it == fires.end()) {
        ++out.missed;
        std::string rows;
        for (const auto& r :
             c.Exec(fmt::format("SELECT id, trigger_type, status, owner_node, dispatch_ms, trigger_ms,"
                                " created_ms, trigger_msg FROM job_log WHERE job_id = {} AND"
                                " scheduled_ms BETWEEN {} AND {}",
                                job, *t - 6000, *t))) {
          rows += fmt::format("\n  row {} {} {} owner {} dispatch {} trigger {} created {}: {}", r[0].c_str(),
                              r[1].c_str(), r[2].c_str(), r[3].c_str(), r[4].c_str(), r[5].c_str(),
                              r[6].c_str(), r[7].c_str());
        }
        ADD_FAILURE() << "job " << job << " instant " << *t << ": no fire was written; rows near it:" << rows;
        continue;
      }
      if (it->second.size() > 1) {
        ++out.duplicated;
        ADD_FAILURE() << "job " << job << " instant " << *t << ": " << it->second.size() << " fires";
      }
      const auto id = it->second.front();
      in_window.insert(id);
      const auto r = runs.find(id);
      const int n = r == runs.end() ? 0 : r->second;
      if (n == 1) {
        ++out.handled;
      } else if (n == 0) {
        ++out.missed;
        const auto row =
            c.Exec(fmt::format("SELECT status, owner_node, dispatch_ms, trigger_ms, trigger_code, "
                               "trigger_msg, handle_msg, created_ms"
                               " FROM job_log WHERE id = {}",
                               id));
        ADD_FAILURE() << "job " << job << " instant " << *t << ": fire " << id
                      << " was run by no executor: status " << row[0][0].c_str() << ", owner "
                      << row[0][1].c_str() << ", created " << row[0][7].c_str() << ", dispatch_ms "
                      << row[0][2].c_str() << ", trigger_ms " << row[0][3].c_str() << ", trigger_code "
                      << row[0][4].c_str() << "\ntrigger_msg: " << row[0][5].c_str()
                      << "\nhandle_msg: " << row[0][6].c_str();
      } else {
        ++out.duplicated;
        ADD_FAILURE() << "job " << job << " instant " << *t << ": fire " << id << " was run " << n
                      << " times";
      }
    }
  }
  for (const auto& [id, n] : runs) {
    if (n > 1 && !in_window.contains(id)) {
      ++out.duplicated;
      ADD_FAILURE() << "fire " << id << " was run " << n << " times";
    }
    if (!in_window.contains(id)) ++out.extra_runs;
  }
  return out;
}

void Print(const char* name, const Counts& c) {
  std::printf(
      "[%s] instants expected %d, handled exactly once %d, missed %d, duplicated %d (runs outside the window "
      "%d)\n",
      name, c.expected, c.handled, c.missed, c.duplicated, c.extra_runs);
}

// kJobs jobs on kCron in a new group, starting in about 2 s; returns them and their first instant.
std::pair<std::vector<int>, std::int64_t> AddJobs(Cluster& c) {
  const int group = c.AddGroup();
  const auto start = Cluster::NowMs() + 2000;
  std::vector<int> jobs;
  for (int i = 0; i < kJobs; ++i)
    jobs.push_back(c.AddJob(group, kCron, "FIRST", "DO_NOTHING", "noopJobHandler", start));
  return {jobs, ringwheel::Schedule::Parse("CRON", kCron, "UTC", nullptr)->NextFireMs(start).value()};
}

// Waits until every fire scheduled up to `last` has a result (or the timeout passes).
void AwaitResults(Cluster& c, std::int64_t last) {
  cwtest::Eventually(
      [&] {
        return c.Scalar(fmt::format(
                   "SELECT count(*) FROM job_log WHERE scheduled_ms <= {} AND status IN ('PENDING', "
                   "'RUNNING')",
                   last)) == 0;
      },
      30s, 250ms);
}

TEST(SchedulerE2E, FiftyJobsEveryTwoSecondsReachTheExecutorExactlyOnce) {
  Cluster c({.admins = 1, .executors = 1});
  const auto [jobs, first] = AddJobs(c);
  const auto last = first + 30'000;
  SleepUntil(last + 500);
  c.Exec("UPDATE job SET enabled = false, updated_ms = updated_ms + 1");
  AwaitResults(c, last);
  const auto counts = Check(c, jobs, first, last);
  Print("1 admin, 1 executor, 30 s", counts);
  EXPECT_EQ(counts.expected, kJobs * 16);
  EXPECT_EQ(counts.handled, counts.expected);
}

TEST(SchedulerE2E, ThreeAdminsOneKilledEveryFiveSecondsMissNothingAndDuplicateNothing) {
  Cluster c({.admins = 3, .executors = 1});
  const auto [jobs, first] = AddJobs(c);
  const auto last = first + 60'000;
  int kills = 0;
  for (auto t = first + 2500; t < last; t += 5000) {
    SleepUntil(t);
    const int victim = kills % 3;
    c.admin(victim).Kill();  // SIGKILL: no shutdown, no hand-over
    ++kills;
    c.RestartAdmin(victim);
  }
  SleepUntil(last + 500);
  c.Exec("UPDATE job SET enabled = false, updated_ms = updated_ms + 1");
  AwaitResults(c, last);
  const auto counts = Check(c, jobs, first, last);
  std::printf("[3 admins] %d admin kills (SIGKILL) and restarts in 60 s\n", kills);
  Print("3 admins, 1 executor, 60 s", counts);
  EXPECT_EQ(counts.expected, kJobs * 31);
  EXPECT_EQ(counts.handled, counts.expected);
  EXPECT_GE(kills, 11);
}

}  // namespace
