#pragma once
// Job logs: where a fire's lines go, and the /log answers (docs/xxl-job-protocol.md §2 /log, §9 Logs;
// docs/operations.md, "Executor job logs").
//
// Storage. XXL-JOB writes one file per fire, <log dir>/<yyyy-mm-dd>/<logId>.log. cronwheel appends the
// lines of ordinary fires to the day's log segments instead (log_segments.hpp: a few large files per day
// with an index by log id), because creating a file per fire was most of the executor's CPU per /run
// (docs/performance.md). A fire still gets its own file, <logId>.log in the day folder, when something asks
// for a path to write to (JobLogFile::Path(): a script's stdout and stderr): its lines so far are copied
// into the file, and from then on every line of that log goes to the file. A log is its own file when the
// file exists, else its segment records.
//
// Dates are UTC. XXL-JOB names the day folder in the executor's local zone; cronwheel uses UTC for the
// folder and for the timestamp that starts each line ("2026-01-01 00:00:00.123 text"), so a log is found
// from the same logDateTim on any executor whatever its TZ. Folder and file names come from integers
// (epoch ms, logId), so a request cannot name any other path.
//
// Reading (§15 item 9, improved): /log asks for lines >= fromLineNum. For a log in its own file, each
// file keeps a small index (byte offset of every 64th line, the number of complete lines and the scanned
// size) in a bounded LRU cache, so a poll scans only bytes appended since the last one and seeks near the
// wanted line; a file that shrank or was replaced (other inode) is re-indexed from the start. A log in
// segments is a few records found through the segment index. At most max_read_bytes are returned per
// call, at line boundaries (a single longer line is cut and marked), so a huge log streams in pieces.
// Only complete lines (ending in '\n') are returned: a line still being written appears on a later poll.
// toLineNum is the last returned line or 0 (dialect B); isEnd is true only when the log does not exist
// (XXL-JOB).
//
// The copy for the callback (the fire output archive, docs/operations.md "The fire output archive"): with
// callback_log_bytes set, each JobLogFile keeps what it writes as a head and a tail within that many bytes
// (cronwheel/head_tail.hpp), so a fire's log goes with its result without reading the log back: Kept() at
// the fire's end. A log given its own file is read back instead (its head and tail only), as is the log of a
// fire that ends elsewhere than on its worker (a timeout, a kill: JobLogFiles::Kept).
//
// Thread-safety: every member may be called from any thread. Errors: I/O failures when appending are
// logged (spdlog) and swallowed, so a full disk does not fail a job; Read() reports them in logContent.

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cronwheel/head_tail.hpp"
#include "cronwheel/mutex.hpp"
#include "cronwheel/periodic_task.hpp"
#include "executor/job_context.hpp"
#include "log_segments.hpp"
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
    std::size_t cache_entries = 256;                        // own-file logs with a line index kept
    std::uint64_t segment_bytes = std::uint64_t{16} << 20;  // a log segment is rotated past this size
    // Bytes of a fire's log kept for its callback (head and tail; Kept()); 0 = none is kept.
    std::size_t callback_log_bytes = 0;
  };
  // Lines between two offsets kept in the index.
  static constexpr std::int64_t kCheckpointEvery = 64;
  // A fire, for AppendEach.
  struct Target {
    std::int64_t log_date_ms = 0;
    std::int64_t log_id = 0;
  };

  JobLogFiles(Settings settings, ringwheel::Clock& clock);
  ~JobLogFiles();
  JobLogFiles(const JobLogFiles&) = delete;
  JobLogFiles& operator=(const JobLogFiles&) = delete;

  [[nodiscard]] const std::filesystem::path& dir() const { return settings_.dir; }
  // The path of the fire's own log file (it exists only for logs that were given one).
  [[nodiscard]] std::filesystem::path PathFor(std::int64_t log_date_ms, std::int64_t log_id) const;

  // Appends "<timestamp> <text>\n" to the fire's log: to its own file if it has one (first ending the
  // file's last line if a child process left it unterminated), else as a segment record.
  void Append(std::int64_t log_date_ms, std::int64_t log_id, std::string_view text);
  // Append() of the same text to each fire's log; the segment records of one day go in one write.
  void AppendEach(const std::vector<Target>& fires, std::string_view text);

  // The /log answer for `p` (see the header comment).
  xxljob::LogResult Read(const xxljob::LogParam& p);

  // The whole text of a log, or nullopt if it does not exist (tests and tools; Read() serves /log).
  std::optional<std::string> Text(std::int64_t log_date_ms, std::int64_t log_id);

  // The log's head and tail within callback_log_bytes, read back from its own file or its segment records (an
  // empty text when there is no log); nullopt when callback_log_bytes is 0. For a fire that ends away from
  // its JobLogFile (JobLogFile::Kept is cheaper).
  std::optional<KeptText> Kept(std::int64_t log_date_ms, std::int64_t log_id);
  [[nodiscard]] std::size_t callback_log_bytes() const { return settings_.callback_log_bytes; }

  // Deletes the day folders (yyyy-mm-dd) whose day is more than `retention_days` before today (UTC, on
  // the clock). Other entries (gluesource, callbacklogs, stray files) are never touched. Returns the
  // number of folders deleted. retention_days < 3 deletes nothing (XXL-JOB: "< 3 means off").
  int DeleteExpired(int retention_days);

  // Number of own-file logs in the index cache (tests).
  [[nodiscard]] std::size_t CachedIndexes() const;

  // Bytes read from own files by Read() since construction (tests: proves a poll reads only new bytes).
  [[nodiscard]] std::uint64_t BytesScanned() const;

  [[nodiscard]] ringwheel::Clock& clock() const { return clock_; }
  [[nodiscard]] LogSegments& segments() { return segments_; }

 private:
  struct Index {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::uint64_t scanned = 0;               // offset just after the last complete line
    std::int64_t lines = 0;                  // complete lines seen
    std::vector<std::uint64_t> checkpoints;  // [k] = offset of line k*kCheckpointEvery + 1
    std::uint64_t last_used = 0;
  };
  Index& IndexFor(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Read() of a log in its own file, open as `fd`.
  xxljob::LogResult ReadFile(const std::filesystem::path& path, int fd, int from_line_num);
  // Appends a line to the own file at `path` if it exists; false if it does not.
  bool AppendToOwnFile(const std::filesystem::path& path, const std::string& entry);
  // Which fires of a day have a file of their own, so that appending to a log in segments tries no open():
  // a day folder is listed once (files an earlier process made), then kept as MakeOwnFile makes files;
  // forgotten when retention deletes the folder. Needs mu_. One entry per own file, not per fire.
  std::unordered_set<std::int64_t>& OwnFilesLocked(const std::string& day) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // For JobLogFile::Path(): gives the log its own file, holding the log's segment records so far (written
  // to a temporary file and renamed into place, or appended to a file of that log id already there), and
  // returns it open for appending (-1 if it cannot be made: logged). Holds mu_ throughout, as AppendEach
  // does, so no line appended meanwhile is left behind in a record.
  int MakeOwnFile(const std::string& day, std::int64_t log_id);
  friend class JobLogFile;

  Settings settings_;
  ringwheel::Clock& clock_;
  LogSegments segments_;
  mutable cronwheel::Mutex mu_;
  std::unordered_map<std::string, Index> cache_ ABSL_GUARDED_BY(mu_);
  // By day folder name.
  std::unordered_map<std::string, std::unordered_set<std::int64_t>> own_files_ ABSL_GUARDED_BY(mu_);
  std::uint64_t use_counter_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t bytes_scanned_ ABSL_GUARDED_BY(mu_) = 0;
};

// One fire's log: the JobLogSink handed to its handler. Each Write is one segment record (one write(2) to
// an open file), until Path() gives the fire its own file.
class JobLogFile final : public JobLogSink {
 public:
  JobLogFile(JobLogFiles& files, std::int64_t log_date_ms, std::int64_t log_id);
  ~JobLogFile() override;
  JobLogFile(const JobLogFile&) = delete;
  JobLogFile& operator=(const JobLogFile&) = delete;

  void Write(std::string_view text) override;
  // Several lines in one record (each "<timestamp> <line>\n").
  void WriteLines(std::initializer_list<std::string_view> lines);
  // The fire's own file, created on the first call with the lines written so far. Whoever asks may write
  // to it (a script's output): from then on each Write goes to the file and first ends the file's last
  // line if it is unterminated. Empty if the file cannot be created.
  [[nodiscard]] std::filesystem::path Path() const override;
  // The log so far within callback_log_bytes, for the fire's callback: what this object wrote (kept in
  // memory as it wrote it), or the own file's head and tail once Path() made one; nullopt when
  // callback_log_bytes is 0. Call it once, when the fire has ended (what was kept is handed over).
  [[nodiscard]] std::optional<KeptText> Kept();

 private:
  JobLogFiles& files_;
  std::int64_t log_date_ms_;
  std::int64_t log_id_;
  std::string day_;
  mutable cronwheel::Mutex mu_;
  mutable int fd_ ABSL_GUARDED_BY(mu_) = -1;  // the own file, once Path() made it
  // What was written to segment records (callback_log_bytes > 0).
  std::optional<HeadAndTail> kept_ ABSL_GUARDED_BY(mu_);
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
