#pragma once
// Job log segments: the lines of many fires appended to a few large files per day, with an index by log
// id (docs/operations.md, "Executor job logs"). Internal to the executor; JobLogFiles is the public face.
//
// Why: XXL-JOB writes one file per fire (<day>/<logId>.log). Creating a file costs the filesystem an inode
// and a directory entry, and at thousands of fires a second that was most of the executor's CPU per /run
// (docs/performance.md, "Job logs in segments"). Here a fire's lines are appended to the day's open segment.
//
// On disk, in <log dir>/<yyyy-mm-dd>/:
// - fires-NNNNNN.seg: records, each a header line "#cwlog <logId> <length>\n" and then <length> bytes of
//   complete log lines. A log's text is the concatenation of its records in file order, segments in
//   number order. A segment is at most about `segment_bytes` (one record may cross it).
// - fires-NNNNNN.idx: the index of a closed segment: the 8 bytes "CWLOGIX1", the segment bytes it covers
//   (uint64), then 24-byte entries (log id int64, offset uint64 of the record's text, length uint32, 4
//   zero bytes; host byte order) sorted by log id and then offset. Written (to a temporary name, then
//   renamed) when a segment is rotated or the executor stops. A segment left without one by a crash (or
//   with one that is not an index, or covers fewer bytes than the segment has) gets a new one the first
//   time a read needs it, from its record headers; a record cut short by the crash ends the scan.
//
// A process never appends to a segment it did not create: after a restart the day's next number is used.
// One executor process per log dir (as for XXL-JOB's per-fire files).
//
// Group commit: an Append that finds another thread writing queues its records and returns; the writing
// thread takes them in its next round, so when many fires start or end at once (ahead-of-time dispatch
// starts a whole instant in the same millisecond) their records share a write(2) and one check of the day
// folder, and no caller sleeps on the mutex while another's write is in the kernel. Records reach the
// file in the order their Appends queued them (a log's records are never reordered); a Read, Forget or the
// destructor first writes what is queued, so a read sees every line appended before it. What this gives
// up: records queued behind a writer sit in memory for the length of its write, and a process killed in
// that window loses them (as it loses lines a handler had not yet written); write(2) without fsync
// already gave up a machine crash.
//
// Complexity: Append is a format into a buffer and a queue push; the thread that writes does one write(2)
// per day per round and a hash insert per record. Read is a hash look-up for the open segment plus, for
// each closed segment of the day whose log id range (kept in memory once seen) holds the id, a binary
// search of its index (about log2(entries) preads).
//
// Thread-safety: all members may be called from any thread. One mutex serialises the writes and the open
// segments' indexes, a second the queue; reads of closed segments (which never change) run outside both.
// Errors: write failures are logged (spdlog) and swallowed, so a full disk does not fail a job.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cronwheel/mutex.hpp"
#include "posix_util.hpp"

namespace cronwheel::executor {

class LogSegments final {
 public:
  struct Settings {
    std::filesystem::path dir;                              // the log dir (day folders below it)
    std::uint64_t segment_bytes = std::uint64_t{16} << 20;  // rotate past this size
    // Tests only: called before each write(2), with the writing mutex held (to hold a writer while other
    // threads append).
    std::function<void()> before_write;
  };
  // One record to append: `text` (complete lines, each ending in '\n') for `log_id`.
  struct Record {
    std::int64_t log_id = 0;
    std::string_view text;
  };

  explicit LogSegments(Settings settings);
  ~LogSegments();  // closes the open segments and writes their indexes
  LogSegments(const LogSegments&) = delete;
  LogSegments& operator=(const LogSegments&) = delete;

  // Appends the records to the segment of `day` ("yyyy-mm-dd"), in one write with any records queued
  // meanwhile (see group commit above). Creates the day folder. Returns once they are written, or queued
  // behind the thread that is writing.
  void Append(const std::string& day, const std::vector<Record>& records);

  // All text recorded for `log_id` on `day`, in write order; nullopt when there is none.
  std::optional<std::string> Read(const std::string& day, std::int64_t log_id);

  // Closes the day's open segment and forgets its index, before the folder is deleted (log retention).
  void Forget(const std::string& day);

  // Records written (since construction; tests and metrics). Records still queued are not counted.
  [[nodiscard]] std::uint64_t RecordsAppended() const;
  // write(2) calls that wrote records (since construction; tests and metrics).
  [[nodiscard]] std::uint64_t Writes() const;

  static constexpr std::string_view kHeaderTag = "#cwlog ";
  static constexpr std::string_view kIndexMagic = "CWLOGIX1";

 private:
  struct Extent {
    std::int64_t log_id = 0;
    std::uint64_t offset = 0;      // of the record's text in its segment
    std::uint32_t length = 0;      // bytes of text
    std::uint32_t next = kNoNext;  // the log's next extent in `extents`, or kNoNext
  };
  static constexpr std::uint32_t kNoNext = 0xFFFFFFFF;
  // A day this process writes to: its open segment and that segment's index.
  struct Day {
    int seq = 0;  // the open segment's number
    Fd fd;
    std::uint64_t size = 0;
    std::vector<Extent> extents;                                                     // in write order
    std::unordered_map<std::int64_t, std::pair<std::uint32_t, std::uint32_t>> logs;  // id -> first, last
  };

  // An Append's records, formatted: `text` is their header lines and texts; each `at` is the offset of a
  // record's text in it.
  struct Queued {
    std::string day;
    std::string text;
    std::vector<std::int64_t> log_ids;
    std::vector<std::uint64_t> at;
    std::vector<std::uint32_t> lengths;
  };
  // Writes what is queued (mu_ held), so that what follows sees every record appended before it.
  void WriteQueuedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes `batch` (queue order), one write(2) per day.
  void WriteLocked(const std::vector<Queued>& batch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes `items` (Appends of `day`, in queue order) with one write(2).
  void WriteDayLocked(const std::string& day, const std::vector<const Queued*>& items)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Day* OpenDayLocked(const std::string& day) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RotateLocked(const std::string& day, Day& d) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes the sorted index of `d`'s open segment next to it.
  void WriteIndexLocked(const std::string& day, const Day& d) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Appends to `out` the text of `log_id` in the closed segment `seg` (building its index if missing).
  // Without mu_: a closed segment does not change.
  void ReadClosed(const std::filesystem::path& seg, std::int64_t log_id, std::string& out);
  // Drops the cached log id ranges of the day's closed segments (the folder is going, or went).
  void ForgetRanges(const std::string& day);

  Settings settings_;
  mutable cronwheel::Mutex mu_;
  std::map<std::string, Day> days_ ABSL_GUARDED_BY(mu_);
  std::uint64_t records_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t writes_ ABSL_GUARDED_BY(mu_) = 0;
  cronwheel::Mutex queue_mu_ ABSL_ACQUIRED_AFTER(mu_);  // taken inside mu_, never the other way round
  std::vector<Queued> queue_ ABSL_GUARDED_BY(queue_mu_);
  // An Append is writing the queue: others only queue.
  bool writing_ ABSL_GUARDED_BY(queue_mu_) = false;
  cronwheel::Mutex ranges_mu_;
  // Closed segment -> log id range.
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> ranges_ ABSL_GUARDED_BY(ranges_mu_);
};

// The segment numbers present in a day folder ("fires-NNNNNN.seg"), ascending.
std::vector<int> SegmentNumbers(const std::filesystem::path& day_dir);
// "fires-000042.seg" / ".idx" for 42.
std::string SegmentName(int seq, std::string_view extension);

}  // namespace cronwheel::executor
