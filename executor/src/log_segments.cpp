#include "log_segments.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <climits>
#include <cstring>
#include <system_error>

#include "cronwheel/mutex.hpp"

namespace cronwheel::executor {
namespace {

constexpr std::size_t kEntryBytes = 24;

struct IndexEntry {
  std::int64_t log_id = 0;
  std::uint64_t offset = 0;
  std::uint32_t length = 0;
};

void PutEntry(std::string& out, const IndexEntry& e) {
  std::array<char, kEntryBytes> b{};
  std::memcpy(b.data(), &e.log_id, 8);
  std::memcpy(b.data() + 8, &e.offset, 8);
  std::memcpy(b.data() + 16, &e.length, 4);
  out.append(b.data(), b.size());
}

IndexEntry GetEntry(const char* b) {
  IndexEntry e;
  std::memcpy(&e.log_id, b, 8);
  std::memcpy(&e.offset, b + 8, 8);
  std::memcpy(&e.length, b + 16, 4);
  return e;
}

// Writes `entries` (sorted by log id, then offset) as the index `path`: to a temporary name, then renamed,
// so a reader never sees half an index.
void WriteIndexFile(const std::filesystem::path& path, std::uint64_t covered,
                    const std::vector<IndexEntry>& entries) {
  std::string data(LogSegments::kIndexMagic);
  data.append(reinterpret_cast<const char*>(&covered), sizeof covered);  // NOLINT(*-reinterpret-cast)
  data.reserve(data.size() + entries.size() * kEntryBytes);
  for (const auto& e : entries)
    PutEntry(data, e);
  static std::atomic<std::uint64_t> serial{0};
  auto tmp = path;
  tmp += fmt::format(".tmp{}-{}", ::getpid(), ++serial);
  const Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, kPrivateFileMode));
  if (!fd.ok() || !WriteAll(fd.get(), data)) {
    spdlog::warn("job log index {}: cannot write: {}", tmp.string(), ErrnoText(errno));
    return;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) spdlog::warn("job log index {}: cannot rename: {}", path.string(), ec.message());
}

bool ReadAt(int fd, char* buf, std::size_t n, std::uint64_t offset) {
  std::size_t done = 0;
  while (done < n) {
    const auto r = ::pread(fd, buf + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += static_cast<std::size_t>(r);
  }
  return true;
}

// Appends `length` bytes at `offset` of `fd` to `out` (nothing if they cannot all be read).
void AppendText(int fd, std::uint64_t offset, std::uint32_t length, std::string& out) {
  const auto at = out.size();
  out.resize(at + length);
  if (!ReadAt(fd, out.data() + at, length, offset)) out.resize(at);
}

// The entries of a segment, from its record headers, sorted for an index; `covered` is set to the bytes
// read. Stops at the first header that is not well-formed or a record that is cut short (a crash while
// appending).
std::vector<IndexEntry> ScanSegment(int fd, std::uint64_t& covered) {
  std::vector<IndexEntry> entries;
  struct stat st {};
  covered = 0;
  if (::fstat(fd, &st) != 0) return entries;
  std::string data(static_cast<std::size_t>(st.st_size), '\0');
  if (!ReadAt(fd, data.data(), data.size(), 0)) return entries;
  covered = data.size();
  const std::string_view all(data);
  std::size_t pos = 0;
  while (pos < all.size()) {
    const auto rest = all.substr(pos);
    const auto eol = rest.find('\n');
    if (!rest.starts_with(LogSegments::kHeaderTag) || eol == std::string_view::npos) break;
    const auto header = rest.substr(LogSegments::kHeaderTag.size(), eol - LogSegments::kHeaderTag.size());
    const auto space = header.find(' ');
    IndexEntry e;
    const auto id_end = header.data() + (space == std::string_view::npos ? header.size() : space);
    if (space == std::string_view::npos || std::from_chars(header.data(), id_end, e.log_id).ec != std::errc{})
      break;
    const auto len = header.substr(space + 1);
    if (std::from_chars(len.data(), len.data() + len.size(), e.length).ec != std::errc{}) break;
    e.offset = pos + eol + 1;
    if (e.offset + e.length > all.size()) break;
    entries.push_back(e);
    pos = e.offset + e.length;
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const IndexEntry& a, const IndexEntry& b) { return a.log_id < b.log_id; });
  return entries;
}

}  // namespace

std::string SegmentName(int seq, std::string_view extension) {
  return fmt::format("fires-{:06}{}", seq, extension);
}

std::vector<int> SegmentNumbers(const std::filesystem::path& day_dir) {
  std::vector<int> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(day_dir, ec)) {
    const auto name = entry.path().filename().string();
    constexpr std::string_view kPrefix = "fires-";
    constexpr std::string_view kSuffix = ".seg";
    if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) continue;
    const std::string_view digits(name.data() + kPrefix.size(),
                                  name.size() - kPrefix.size() - kSuffix.size());
    int seq = 0;
    const auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), seq);
    if (err == std::errc{} && end == digits.data() + digits.size() && seq > 0) out.push_back(seq);
  }
  std::sort(out.begin(), out.end());
  return out;
}

LogSegments::LogSegments(Settings settings) : settings_(std::move(settings)) {
  settings_.segment_bytes = std::max<std::uint64_t>(settings_.segment_bytes, 4096);
}

LogSegments::~LogSegments() {
  cronwheel::MutexLock lock(mu_);
  WriteQueuedLocked();
  for (const auto& [day, d] : days_)
    WriteIndexLocked(day, d);
}

LogSegments::Day* LogSegments::OpenDayLocked(const std::string& day) {
  if (const auto it = days_.find(day); it != days_.end()) return &it->second;
  const auto dir = settings_.dir / day;
  std::error_code ec;
  MakePrivateDirs(dir, ec);
  const auto existing = SegmentNumbers(dir);
  int seq = existing.empty() ? 1 : existing.back() + 1;
  Fd fd;
  // O_EXCL: never append to a segment another process (or an earlier run) created.
  for (int attempt = 0; attempt < 16 && !fd.ok(); ++attempt, ++seq) {
    fd = Fd(::open((dir / SegmentName(seq, ".seg")).c_str(), O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC,
                   kPrivateFileMode));
    if (!fd.ok() && errno != EEXIST) break;
  }
  if (!fd.ok()) {
    spdlog::warn("job log segment in {}: cannot create: {}", dir.string(), ErrnoText(errno));
    return nullptr;
  }
  Day& d = days_[day];
  d.seq = seq - 1;
  d.fd = std::move(fd);
  return &d;
}

void LogSegments::RotateLocked(const std::string& day, Day& d) {
  WriteIndexLocked(day, d);
  days_.erase(day);  // the next OpenDayLocked creates the next number
}

void LogSegments::WriteIndexLocked(const std::string& day, const Day& d) {
  std::vector<IndexEntry> entries;
  entries.reserve(d.extents.size());
  for (const auto& e : d.extents)
    entries.push_back(IndexEntry{e.log_id, e.offset, e.length});
  std::stable_sort(entries.begin(), entries.end(),
                   [](const IndexEntry& a, const IndexEntry& b) { return a.log_id < b.log_id; });
  const auto path = settings_.dir / day / SegmentName(d.seq, ".idx");
  WriteIndexFile(path, d.size, entries);
  // A reader that took the segment for a closed one while it was being opened may have indexed, and
  // cached the range of, a part of it.
  auto seg = path;
  seg.replace_extension(".seg");
  cronwheel::MutexLock lock(ranges_mu_);
  ranges_.erase(seg.string());
}

void LogSegments::Append(const std::string& day, const std::vector<Record>& records) {
  if (records.empty()) return;
  Queued q;
  q.day = day;
  q.log_ids.reserve(records.size());
  q.at.reserve(records.size());
  q.lengths.reserve(records.size());
  for (const auto& r : records) {
    fmt::format_to(std::back_inserter(q.text), "{}{} {}\n", kHeaderTag, r.log_id, r.text.size());
    q.log_ids.push_back(r.log_id);
    q.at.push_back(q.text.size());
    q.lengths.push_back(static_cast<std::uint32_t>(r.text.size()));
    q.text += r.text;
  }
  {
    cronwheel::MutexLock lock(queue_mu_);
    queue_.push_back(std::move(q));
    if (writing_) return;  // the writing thread takes it in its next round
    writing_ = true;
  }
  // This thread writes, round after round, until a round finds the queue empty.
  while (true) {
    cronwheel::MutexLock lock(mu_);
    std::vector<Queued> batch;
    {
      cronwheel::MutexLock queue_lock(queue_mu_);
      batch.swap(queue_);
      if (batch.empty()) {
        writing_ = false;
        return;
      }
    }
    WriteLocked(batch);
  }
}

void LogSegments::WriteQueuedLocked() {
  std::vector<Queued> batch;
  {
    cronwheel::MutexLock queue_lock(queue_mu_);
    batch.swap(queue_);
  }
  WriteLocked(batch);
}

void LogSegments::WriteLocked(const std::vector<Queued>& batch) {
  // Almost always one day; a batch crossing midnight keeps each day's records in queue order.
  std::vector<std::pair<const std::string*, std::vector<const Queued*>>> days;
  for (const auto& q : batch) {
    auto it = std::find_if(days.begin(), days.end(), [&](const auto& e) { return *e.first == q.day; });
    if (it == days.end()) it = days.insert(days.end(), {&q.day, {}});
    it->second.push_back(&q);
  }
  for (const auto& [day, items] : days)
    WriteDayLocked(*day, items);
}

void LogSegments::WriteDayLocked(const std::string& day, const std::vector<const Queued*>& items) {
  std::string joined;
  if (items.size() > 1) {
    std::size_t total = 0;
    for (const auto* q : items)
      total += q->text.size();
    joined.reserve(total);
    for (const auto* q : items)
      joined += q->text;
  }
  const std::string_view buf = items.size() > 1 ? std::string_view(joined) : std::string_view(items[0]->text);
  Day* d = OpenDayLocked(day);
  struct stat st {};
  if (d != nullptr && ::fstat(d->fd.get(), &st) == 0 && st.st_nlink == 0) {
    // The day folder was deleted under the open segment (by hand, or retention of a late fire's day):
    // start a new one rather than write where nobody can read.
    days_.erase(day);
    ForgetRanges(day);
    d = OpenDayLocked(day);
  }
  if (d != nullptr && d->size > 0 && d->size + buf.size() > settings_.segment_bytes) {
    RotateLocked(day, *d);
    d = OpenDayLocked(day);
  }
  if (d == nullptr) return;
  if (settings_.before_write) settings_.before_write();
  ++writes_;
  if (!WriteAll(d->fd.get(), buf)) {
    spdlog::warn("job log segment {}/{}: write failed: {}", day, SegmentName(d->seq, ".seg"),
                 ErrnoText(errno));
    if (::fstat(d->fd.get(), &st) == 0) d->size = static_cast<std::uint64_t>(st.st_size);
    return;
  }
  std::uint64_t base = d->size;
  for (const auto* q : items) {
    for (std::size_t i = 0; i < q->log_ids.size(); ++i) {
      const auto index = static_cast<std::uint32_t>(d->extents.size());
      d->extents.push_back(Extent{q->log_ids[i], base + q->at[i], q->lengths[i], kNoNext});
      auto [it, inserted] = d->logs.try_emplace(q->log_ids[i], index, index);
      if (!inserted) {
        d->extents[it->second.second].next = index;
        it->second.second = index;
      }
    }
    base += q->text.size();
    records_ += q->log_ids.size();
  }
  d->size += buf.size();
}

std::optional<std::string> LogSegments::Read(const std::string& day, std::int64_t log_id) {
  // The open segment first, under the lock (a rotation right after it leaves that segment closed, and
  // it is not read twice: only numbers below it are read below).
  int open_seq = INT_MAX;
  std::string open_text;
  bool found = false;
  {
    cronwheel::MutexLock lock(mu_);
    WriteQueuedLocked();  // what was appended before this read
    if (const auto open = days_.find(day); open != days_.end()) {
      const Day& d = open->second;
      open_seq = d.seq;
      if (const auto it = d.logs.find(log_id); it != d.logs.end()) {
        found = true;
        for (auto i = it->second.first; i != kNoNext; i = d.extents[i].next)
          AppendText(d.fd.get(), d.extents[i].offset, d.extents[i].length, open_text);
      }
    }
  }
  // Closed segments never change: read without holding the writers up.
  const auto dir = settings_.dir / day;
  std::string out;
  for (const int seq : SegmentNumbers(dir)) {
    if (seq >= open_seq) break;
    const auto before = out.size();
    ReadClosed(dir / SegmentName(seq, ".seg"), log_id, out);
    found = found || out.size() > before;  // a record has at least one line
  }
  if (!found) return std::nullopt;
  out += open_text;
  return out;
}

void LogSegments::ReadClosed(const std::filesystem::path& seg, std::int64_t log_id, std::string& out) {
  {
    cronwheel::MutexLock lock(ranges_mu_);
    if (const auto it = ranges_.find(seg.string());
        it != ranges_.end() && (log_id < it->second.first || log_id > it->second.second))
      return;
  }
  const Fd seg_fd(::open(seg.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat seg_st {};
  if (!seg_fd.ok() || ::fstat(seg_fd.get(), &seg_st) != 0) return;
  auto idx_path = seg;
  idx_path.replace_extension(".idx");
  constexpr auto kHeader = kIndexMagic.size() + sizeof(std::uint64_t);
  std::array<char, kEntryBytes> b{};
  // The index and the segment bytes it covers; nullopt if there is none usable.
  auto open_index = [&](Fd& idx) -> std::optional<std::uint64_t> {
    idx = Fd(::open(idx_path.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st {};
    std::uint64_t covered = 0;
    if (!idx.ok() || ::fstat(idx.get(), &st) != 0) return std::nullopt;
    if (st.st_size < static_cast<off_t>(kHeader) || !ReadAt(idx.get(), b.data(), kHeader, 0) ||
        std::string_view(b.data(), kIndexMagic.size()) != kIndexMagic) {
      spdlog::warn("job log index {}: not an index; ignored", idx_path.string());
      return std::nullopt;
    }
    std::memcpy(&covered, b.data() + kIndexMagic.size(), sizeof covered);
    return covered;
  };
  Fd idx;
  const auto covered = open_index(idx);
  if (!covered || *covered < static_cast<std::uint64_t>(seg_st.st_size)) {
    // None (a crash), or one made of a part of the segment: index it now, once. Two readers doing it at
    // once write the same.
    std::uint64_t scanned = 0;
    auto entries = ScanSegment(seg_fd.get(), scanned);
    WriteIndexFile(idx_path, scanned, entries);
    if (!open_index(idx)) return;
  }
  struct stat st {};
  if (::fstat(idx.get(), &st) != 0) return;
  const auto count = (static_cast<std::uint64_t>(st.st_size) - kHeader) / kEntryBytes;
  auto entry_at = [&](std::uint64_t i) -> std::optional<IndexEntry> {
    if (!ReadAt(idx.get(), b.data(), kEntryBytes, kHeader + i * kEntryBytes)) return std::nullopt;
    return GetEntry(b.data());
  };
  if (count == 0) return;
  {  // The segment's log id range, so later reads of other ids skip it without opening it.
    const auto lo = entry_at(0);
    const auto hi = entry_at(count - 1);
    if (!lo || !hi) return;
    cronwheel::MutexLock lock(ranges_mu_);
    ranges_[seg.string()] = {lo->log_id, hi->log_id};
    if (log_id < lo->log_id || log_id > hi->log_id) return;
  }
  // Binary search for the first entry of `log_id`.
  std::uint64_t lo = 0;
  std::uint64_t hi = count;
  while (lo < hi) {
    const auto mid = lo + (hi - lo) / 2;
    const auto e = entry_at(mid);
    if (!e) return;
    if (e->log_id < log_id) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  for (auto i = lo; i < count; ++i) {
    const auto e = entry_at(i);
    if (!e || e->log_id != log_id) break;
    AppendText(seg_fd.get(), e->offset, e->length, out);
  }
}

void LogSegments::Forget(const std::string& day) {
  {
    cronwheel::MutexLock lock(mu_);
    WriteQueuedLocked();
    days_.erase(day);
  }
  ForgetRanges(day);
}

void LogSegments::ForgetRanges(const std::string& day) {
  const auto prefix = (settings_.dir / day).string() + "/";
  cronwheel::MutexLock lock(ranges_mu_);
  for (auto it = ranges_.lower_bound(prefix); it != ranges_.end() && it->first.starts_with(prefix);)
    it = ranges_.erase(it);
}

std::uint64_t LogSegments::RecordsAppended() const {
  cronwheel::MutexLock lock(mu_);
  return records_;
}

std::uint64_t LogSegments::Writes() const {
  cronwheel::MutexLock lock(mu_);
  return writes_;
}

}  // namespace cronwheel::executor
