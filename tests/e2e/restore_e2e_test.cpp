// The restore drill (issue 45; docs/operations.md, "Backups that restore"), end to end: a PostgreSQL whose
// WAL pgBackRest archives (scripts/backup), an admin and 20 every-second jobs on an XXL-JOB-protocol executor
// that does not de-duplicate log ids (xxl-stub), and
//   1. a full backup taken while the jobs fire;
//   2. more fires, a restore point R, more fires after it, then the disaster: the admin killed, PostgreSQL
//      stopped;
//   3. the backup restored, with the archived WAL up to R, into a new data directory, and a new admin started
//      on it with after_restore, and a new executor.
// What a user sees: the fires up to R are in the console; no instant runs twice over the whole drill (those
// triggered before R are not sent again, those open at R are closed unsent, and those due between R and the
// restart are misfires, so DO_NOTHING jobs skip them and FIRE_ONCE_NOW jobs fire once); from the restart on,
// every instant runs once.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "cluster.hpp"
#include "cwtest/shell.hpp"
#include "xxl_stub_process.hpp"

namespace {

using namespace std::chrono_literals;
using cwtest::Cluster;
using cwtest::XxlStub;

constexpr int kJobs = 20;

void SleepUntil(std::int64_t wall_ms) {
  const auto now = Cluster::NowMs();
  if (wall_ms > now) std::this_thread::sleep_for(std::chrono::milliseconds(wall_ms - now));
}

// Runs one of the project's scripts; throws with its output when it fails. Returns its output, trimmed.
std::string Script(const std::string& args) {
  const auto cmd = fmt::format("{}/scripts/{} 2>&1", CRONWHEEL_SOURCE_DIR, args);
  auto [rc, out] = cwtest::RunShell(cmd);
  if (rc != 0) throw std::runtime_error(fmt::format("{} failed ({}): {}", cmd, rc, out));
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r'))
    out.pop_back();
  return out;
}

// The last line of a script's output: the DSN `pg up` and `backup restore` print after anything pg_ctl says.
std::string LastLine(const std::string& out) {
  return out.substr(out.rfind('\n') + 1);
}

// The original server and its repository, and the restored server: gone after the test.
class Servers {
 public:
  Servers()
      : original_(fmt::format("e2e-backup-{}", ::getpid())),
        restored_(fmt::format("e2e-restored-{}", ::getpid())),
        dsn_(Fresh(original_, restored_)) {
    Script(fmt::format("backup setup --name {}", original_));
  }
  ~Servers() {
    for (const auto* cmd :
         {"backup drop --name {0}", "pg down --purge --name {0}", "pg down --purge --name {1}"}) {
      try {
        Script(fmt::format(fmt::runtime(cmd), original_, restored_));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
      }
    }
  }
  // Starts the original server on a fresh data directory: one a killed run of the same pid left is purged.
  static std::string Fresh(const std::string& original, const std::string& restored) {
    Script(fmt::format("pg down --purge --name {}", original));
    Script(fmt::format("pg down --purge --name {}", restored));
    return LastLine(Script(fmt::format("pg up --name {}", original)));
  }
  const std::string& original() const { return original_; }
  const std::string& restored() const { return restored_; }
  const std::string& dsn() const { return dsn_; }

 private:
  std::string original_;
  std::string restored_;
  std::string dsn_;
};

// A libpq URI with its database replaced.
std::string WithDatabase(const std::string& uri, const std::string& db) {
  const auto slash = uri.find('/', uri.find("://") + 3);
  return uri.substr(0, slash) + "/" + db;
}

TEST(RestoreE2E, ABackupRestoredToAPointInTimeRunsNoInstantTwice) {
  Servers servers;
  std::string database;
  std::map<int, std::string> misfire;                                  // job -> rule
  std::vector<XxlStub::Run> before;                                    // what the first executor received
  std::map<std::int64_t, std::pair<int, std::int64_t>> original_fire;  // log id -> (job, instant), before
  std::int64_t start = 0;
  std::int64_t restore_point = 0;
  std::string restore_point_text;
  {
    Cluster c({.admins = 1, .executors = 0, .server_dsn = servers.dsn()});
    database = c.dsn().substr(c.dsn().rfind('/') + 1);
    XxlStub stub(c, "stub-before", {});
    const int group = c.AddGroup();
    start = (Cluster::NowMs() / 1000 + 3) * 1000;
    for (int i = 0; i < kJobs; ++i) {
      const std::string rule = i % 2 == 0 ? "DO_NOTHING" : "FIRE_ONCE_NOW";
      // FAILOVER: the restored registry still lists the first executor, gone with the disaster, until its
      // registration expires (90 s); a fire goes to one that answers.
      misfire[c.AddJob(group, "* * * * * ?", "FAILOVER", rule, "stubHandler", start - 1)] = rule;
    }
    SleepUntil(start + 4000);
    std::printf("[restore] %s\n", Script(fmt::format("backup full --name {}", servers.original())).c_str());
    SleepUntil(Cluster::NowMs() + 4000);
    const auto r = c.Exec("SELECT (extract(epoch from now()) * 1000)::bigint, now()::text");
    restore_point = r[0][0].as<std::int64_t>();
    restore_point_text = r[0][1].as<std::string>();
    SleepUntil(restore_point + 5000);
    Script(fmt::format("backup flush --name {}", servers.original()));  // the WAL past R is archived
    // The disaster: the admin dies, the database is gone.
    c.admin(0).Kill();
    std::this_thread::sleep_for(500ms);
    before = stub.Runs();
    // What each receipt before the disaster was, from the original database (a fire may arrive more than a
    // second after its instant on a busy box, so the second of its arrival does not name its instant).
    for (const auto& f :
         c.Exec("SELECT id, job_id, scheduled_ms FROM job_log WHERE trigger_type IN ('CRON', 'MISFIRE')"))
      original_fire[f[0].as<std::int64_t>()] = {f[1].as<int>(), f[2].as<std::int64_t>()};
    Script(fmt::format("pg down --name {}", servers.original()));
  }
  const auto server =
      LastLine(Script(fmt::format("backup restore --name {} --to {} --time '{}'", servers.original(),
                                  servers.restored(), restore_point_text)));
  // A real restore comes minutes after its restore point. Here it can come within seconds, within the
  // misfire threshold of the instants the restored database had pre-read (R + 5 s): those would then be sent
  // late, though they had run before the disaster, and the promise is only for what ran before R. So the new
  // admin starts no sooner than 15 s after R.
  SleepUntil(restore_point + 15'000);
  const auto restart = Cluster::NowMs();
  std::printf("[restore] restored to %s (%lld ms before the new admin started)\n", restore_point_text.c_str(),
              static_cast<long long>(restart - restore_point));
  Cluster c({.admins = 1,
             .executors = 0,
             .admin_args = {"--after-restore", "true"},
             .server_dsn = WithDatabase(server, database),
             .server_database_as_is = true});
  XxlStub stub(c, "stub-after", {});
  const auto end = ((Cluster::NowMs() + 10'000) / 1000) * 1000;
  SleepUntil(end + 1500);
  c.Exec("UPDATE job SET enabled = false, updated_ms = updated_ms + 1");
  std::this_thread::sleep_for(1s);
  auto after = stub.Runs();

  // What the restored database shows, and what each executor received.
  std::map<std::int64_t, std::pair<int, std::int64_t>> fire;  // log id -> (job, instant) of CRON fires
  std::map<int, int> misfire_fires;
  int closed_unsent = 0;
  std::int64_t last_written = 0;
  for (const auto& r :
       c.Exec("SELECT id, job_id, scheduled_ms, trigger_type, skipped, trigger_msg, created_ms "
              "FROM job_log ORDER BY id")) {
    const auto type = r[3].as<std::string>();
    if (type == "CRON" && !r[4].as<bool>())
      fire[r[0].as<std::int64_t>()] = {r[1].as<int>(), r[2].as<std::int64_t>()};
    if (type == "MISFIRE" && !r[4].as<bool>()) ++misfire_fires[r[1].as<int>()];  // DO_NOTHING's is skipped
    if (r[5].as<std::string>().find("after_restore") != std::string::npos) ++closed_unsent;
    if (r[6].as<std::int64_t>() < restart) last_written = std::max(last_written, r[6].as<std::int64_t>());
  }
  EXPECT_LE(last_written, restore_point)
      << "the restored database holds nothing written after its restore point";
  EXPECT_GT(closed_unsent, 0) << "the fires open at the restore point were closed unsent";
  // (job, instant) -> times received, over both executors.
  std::map<std::pair<int, std::int64_t>, int> runs;
  int received_before = 0;
  for (const auto& r : before) {
    if (r.outcome != "accepted") continue;
    ++received_before;
    // Log ids written after R in the original database may name other fires in the restored one: a receipt
    // before the disaster is named by the original database.
    const auto it = original_fire.find(r.log_id);
    ASSERT_NE(it, original_fire.end())
        << "log id " << r.log_id << " received before the disaster is no scheduled fire";
    ++runs[it->second];
  }
  int received_after = 0;
  for (const auto& r : after) {
    if (r.outcome != "accepted") continue;
    ++received_after;
    if (const auto it = fire.find(r.log_id); it != fire.end()) ++runs[it->second];
  }
  int once_before_r = 0;
  int once_after_restart = 0;
  for (const auto& [job, rule] : misfire) {
    for (auto t = start; t <= end; t += 1000) {
      const auto n = runs.count({job, t}) ? runs.at({job, t}) : 0;
      EXPECT_LE(n, 1) << "job " << job << " instant " << t << " ran " << n << " times";
      if (t <= restore_point - 1000) {
        EXPECT_EQ(n, 1) << "job " << job << " instant " << t << " (before the restore point)";
        once_before_r += n;
      }
      if (t >= restart + 6000) {
        EXPECT_EQ(n, 1) << "job " << job << " instant " << t << " (after the restart)";
        once_after_restart += n;
      }
    }
    // The instants between R and the restart were late by more than the threshold: the job's misfire rule.
    EXPECT_EQ(misfire_fires[job], rule == "FIRE_ONCE_NOW" ? 1 : 0) << "job " << job << " (" << rule << ")";
  }
  std::printf(
      "[restore] %d jobs; received %d /run before the disaster and %d after the restore; %d instants before "
      "the "
      "restore point ran once, %d after the restart ran once; %d fires open at the restore point were closed "
      "unsent; FIRE_ONCE_NOW jobs fired once each for the gap\n",
      kJobs, received_before, received_after, once_before_r, once_after_restart, closed_unsent);
}

}  // namespace
