#pragma once
// Job log files: <log dir>/<yyyy-mm-dd>/<logId>.log, one per fire (docs/xxl-job-protocol.md §2 /log, §9
// Logs).
//
// Dates are UTC. XXL-JOB names the day folder in the executor's local zone; cronwheel uses UTC for the
// folder and for the timestamp that starts each line ("2026-01-01 00:00:00.123 text"), so a log is found
// from the same logDateTim on any executor whatever its TZ. Both the folder and the file name come from
// integers (epoch ms, logId), so a request cannot name any other path.
//
// Reading (§15 item 9, improved): /log asks for lines >= fromLineNum. XXL-JOB re-reads the whole file on
// every poll; here each log keeps a small index (byte offset of every 64th line, the number of complete
// lines and the scanned size) in a bounded LRU cache, so a poll scans only bytes appended since the last
// one and seeks near the wanted line. At most max_read_bytes are returned per call, at line boundaries
// (a single longer line is cut and marked), so a huge log streams in pieces. Only complete lines
// (ending in '\n') are returned: a line still being written appears on a later poll. toLineNum is the
// last returned line or 0 (dialect B); isEnd is true only when the file does not exist (XXL-JOB).
// A file that shrank or was replaced (other inode) is re-indexed from the start.
//
// Thread-safety: every member may be called from any thread. Errors: I/O failures when appending are
// logged (spdlog) and swallowed, so a full disk does not fail a job; Read() reports them in logContent.

#include <atomic>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cronwheel/periodic_task.hpp"
#include "executor/job_context.hpp"
#include "ringwheel/clock.hpp"
#include "xxljob/protocol.hpp"

namespace cronwheel::executor {

// "yyyy-mm-dd" of an epoch-ms instant, UTC.
std::string UtcDay(std::int64_t epoch_ms);
// "yyyy-mm-dd HH:MM:SS.mmm" of an epoch-ms instant, UTC.
std::string UtcTimestamp(std::int64_t epoch_ms);

class JobLogFiles final {
 public:
  struct Settings {
    std::filesystem::path dir;                              // the log dir; created on demand
    std::size_t max_read_bytes = std::size_t{1024} * 1024;  // per /log answer
    std::size_t cache_entries = 256;                        // logs with a line index kept
    std::size_t parked_files = 256;  // fires' logs kept open between their end line and callback line
  };
  // Lines between two offsets kept in the index.
  static constexpr std::int64_t kCheckpointEvery = 64;

  JobLogFiles(Settings settings, ringwheel::Clock& clock);
  ~JobLogFiles();  // closes the parked descriptors
  JobLogFiles(const JobLogFiles&) = delete;
  JobLogFiles& operator=(const JobLogFiles&) = delete;

  [[nodiscard]] const std::filesystem::path& dir() const { return settings_.dir; }
  [[nodiscard]] std::filesystem::path PathFor(std::int64_t log_date_ms, std::int64_t log_id) const;

  // Appends "<timestamp> <text>\n" to the fire's log, first ending the file's last line if a child
  // process left it unterminated. Creates the day folder. Uses, then closes, the descriptor parked for
  // the fire if there is one.
  void Append(std::int64_t log_date_ms, std::int64_t log_id, std::string_view text);

  // Keeps a fire's open log descriptor (O_APPEND) for the line its callback adds next (Append), so a fire
  // costs one open, not two. `shared`: a child process wrote to the file too (its last line may be
  // unterminated). At most parked_files are kept; past that the oldest is closed. Takes ownership of `fd`.
  void Park(std::int64_t log_date_ms, std::int64_t log_id, int fd, bool shared);

  // The /log answer for `p` (see the header comment).
  xxljob::LogResult Read(const xxljob::LogParam& p);

  // Deletes the day folders (yyyy-mm-dd) whose day is more than `retention_days` before today (UTC, on
  // the clock). Other entries (gluesource, callbacklogs, stray files) are never touched. Returns the
  // number of folders deleted. retention_days < 3 deletes nothing (XXL-JOB: "< 3 means off").
  int DeleteExpired(int retention_days);

  // Number of logs in the index cache (tests).
  [[nodiscard]] std::size_t CachedIndexes() const;

  // Bytes read from disk by Read() since construction (tests: proves a poll reads only new bytes).
  [[nodiscard]] std::uint64_t BytesScanned() const;

  [[nodiscard]] ringwheel::Clock& clock() const { return clock_; }

 private:
  struct Index {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::uint64_t scanned = 0;               // offset just after the last complete line
    std::int64_t lines = 0;                  // complete lines seen
    std::vector<std::uint64_t> checkpoints;  // [k] = offset of line k*kCheckpointEvery + 1
    std::uint64_t last_used = 0;
  };
  Index& IndexFor(const std::string& key);

  struct Parked {
    std::int64_t log_date_ms = 0;
    int fd = -1;
    bool shared = false;
    std::uint64_t serial = 0;
  };
  // The parked descriptor of the fire, or -1; the caller closes it. `shared` is set from the parking.
  int TakeParked(std::int64_t log_date_ms, std::int64_t log_id, bool& shared);

  Settings settings_;
  ringwheel::Clock& clock_;
  std::mutex parked_mu_;
  std::unordered_map<std::int64_t, Parked> parked_;                  // by log id
  std::deque<std::pair<std::uint64_t, std::int64_t>> parked_order_;  // (serial, log id), oldest first
  std::uint64_t parked_serial_ = 0;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Index> cache_;
  std::uint64_t use_counter_ = 0;
  std::uint64_t bytes_scanned_ = 0;
};

// One fire's log: the JobLogSink handed to its handler. Keeps the file open (O_APPEND) for the fire and
// then parks it for the callback's line (JobLogFiles::Park), so all of a fire's lines cost one open (the day
// folder is created when an open finds it missing).
class JobLogFile final : public JobLogSink {
 public:
  JobLogFile(JobLogFiles& files, std::int64_t log_date_ms, std::int64_t log_id);
  // Parks the descriptor (JobLogFiles::Park) for the fire's callback line.
  ~JobLogFile() override;
  JobLogFile(const JobLogFile&) = delete;
  JobLogFile& operator=(const JobLogFile&) = delete;

  void Write(std::string_view text) override;
  // Several lines in one write (each "<timestamp> <line>\n").
  void WriteLines(std::initializer_list<std::string_view> lines);
  // The file's path. Whoever asks may write to it (a script's output): from then on each Write first ends
  // the file's last line if it is unterminated.
  [[nodiscard]] std::filesystem::path Path() const override;

 private:
  JobLogFiles& files_;
  std::int64_t log_date_ms_;
  std::int64_t log_id_;
  std::filesystem::path path_;
  std::mutex mu_;
  int fd_ = -1;
  mutable std::atomic<bool> shared_{false};
};

// Deletes expired day folders once at Start() and then every `interval` on the clock (XXL-JOB: daily), on a
// PeriodicTask.
class LogRetention final {
 public:
  struct Settings {
    int retention_days = 30;  // < 3: off
    std::chrono::seconds interval = std::chrono::hours(24);
  };
  LogRetention(Settings settings, JobLogFiles& files, ringwheel::Clock& clock);
  ~LogRetention();
  LogRetention(const LogRetention&) = delete;
  LogRetention& operator=(const LogRetention&) = delete;

  void Start();
  void Stop();

 private:
  Settings settings_;
  JobLogFiles& files_;
  ringwheel::Clock& clock_;
  std::unique_ptr<PeriodicTask> task_;
};

}  // namespace cronwheel::executor
