#include "job_log.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <system_error>

#include "posix_util.hpp"

namespace cronwheel::executor {
namespace {

using std::chrono::days;
using std::chrono::milliseconds;
using std::chrono::sys_days;

constexpr std::size_t kChunk = std::size_t{64} * 1024;

// Ends the file's last line if it is unterminated (a child process may leave it so).
void EndLastLine(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size <= 0) return;
  char last = '\n';
  if (::pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n') WriteAll(fd, "\n");
}

// Appends "<timestamp> <text>\n" to `out`.
void AppendEntry(std::string& out, const std::string& timestamp, std::string_view text) {
  out += timestamp;
  out += ' ';
  out += text;
  if (out.back() != '\n') out += '\n';
}

std::string Entry(ringwheel::Clock& clock, std::string_view text) {
  std::string line;
  AppendEntry(line, UtcTimestamp(clock.NowMs()), text);
  return line;
}

// Opens `path` for appending, creating it; the day folder is created only when the open finds it missing
// (once a day, not once a fire).
int OpenForAppend(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 && errno == ENOENT) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  }
  return fd;
}

std::optional<sys_days> ParseDay(std::string_view name) {
  if (name.size() != 10 || name[4] != '-' || name[7] != '-') return std::nullopt;
  int y = 0;
  unsigned m = 0;
  unsigned d = 0;
  auto num = [&](std::size_t pos, std::size_t len, auto& out) {
    const auto* b = name.data() + pos;
    const auto [end, ec] = std::from_chars(b, b + len, out);
    return ec == std::errc{} && end == b + len;
  };
  if (!num(0, 4, y) || !num(5, 2, m) || !num(8, 2, d)) return std::nullopt;
  const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{m}, std::chrono::day{d}};
  if (!ymd.ok()) return std::nullopt;
  return sys_days{ymd};
}

}  // namespace

std::string UtcDay(std::int64_t epoch_ms) {
  const auto dp = std::chrono::floor<days>(std::chrono::sys_time<milliseconds>{milliseconds{epoch_ms}});
  const std::chrono::year_month_day ymd{dp};
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                     static_cast<unsigned>(ymd.day()));
}

std::string UtcTimestamp(std::int64_t epoch_ms) {
  const std::chrono::sys_time<milliseconds> t{milliseconds{epoch_ms}};
  const auto dp = std::chrono::floor<days>(t);
  const std::chrono::year_month_day ymd{dp};
  const std::chrono::hh_mm_ss hms{t - dp};
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                     hms.hours().count(), hms.minutes().count(), hms.seconds().count(),
                     hms.subseconds().count());
}

// --- JobLogFiles ---------------------------------------------------------------------------------------

JobLogFiles::JobLogFiles(Settings settings, ringwheel::Clock& clock)
    : settings_(std::move(settings)), clock_(clock) {
  settings_.max_read_bytes = std::max<std::size_t>(settings_.max_read_bytes, 64);
  settings_.cache_entries = std::max<std::size_t>(settings_.cache_entries, 1);
}

JobLogFiles::~JobLogFiles() {
  for (const auto& [id, p] : parked_)
    ::close(p.fd);
}

std::filesystem::path JobLogFiles::PathFor(std::int64_t log_date_ms, std::int64_t log_id) const {
  return settings_.dir / UtcDay(log_date_ms) / (std::to_string(log_id) + ".log");
}

void JobLogFiles::Append(std::int64_t log_date_ms, std::int64_t log_id, std::string_view text) {
  bool shared = true;
  Fd fd(TakeParked(log_date_ms, log_id, shared));
  if (!fd.ok()) {
    fd = Fd(OpenForAppend(PathFor(log_date_ms, log_id)));
    if (!fd.ok()) {
      spdlog::warn("job log {}: cannot open: {}", PathFor(log_date_ms, log_id).string(), ErrnoText(errno));
      return;
    }
  }
  if (shared) EndLastLine(fd.get());
  if (!WriteAll(fd.get(), Entry(clock_, text))) {
    spdlog::warn("job log {}: write failed: {}", PathFor(log_date_ms, log_id).string(), ErrnoText(errno));
  }
}

void JobLogFiles::Park(std::int64_t log_date_ms, std::int64_t log_id, int fd, bool shared) {
  std::vector<int> to_close;
  {
    std::lock_guard lock(parked_mu_);
    const auto serial = ++parked_serial_;
    auto [it, inserted] = parked_.try_emplace(log_id, Parked{log_date_ms, fd, shared, serial});
    if (!inserted) {  // the same log id run again (after its redelivery window): keep the newer descriptor
      to_close.push_back(it->second.fd);
      it->second = Parked{log_date_ms, fd, shared, serial};
    }
    parked_order_.emplace_back(serial, log_id);
    // Oldest first: entries whose descriptor was taken are dropped; live ones are closed while there
    // are too many (or they are so old that their callback line is not coming).
    const auto cap = settings_.parked_files;
    while (!parked_order_.empty() && (parked_.size() > cap || parked_order_.size() > 2 * cap + 16)) {
      const auto [oldest_serial, oldest_id] = parked_order_.front();
      parked_order_.pop_front();
      const auto old = parked_.find(oldest_id);
      if (old == parked_.end() || old->second.serial != oldest_serial) continue;
      to_close.push_back(old->second.fd);
      parked_.erase(old);
    }
  }
  for (const int f : to_close)
    ::close(f);
}

int JobLogFiles::TakeParked(std::int64_t log_date_ms, std::int64_t log_id, bool& shared) {
  std::lock_guard lock(parked_mu_);
  const auto it = parked_.find(log_id);
  if (it == parked_.end() || it->second.log_date_ms != log_date_ms) return -1;
  const int fd = it->second.fd;
  shared = it->second.shared;
  parked_.erase(it);
  return fd;
}

JobLogFiles::Index& JobLogFiles::IndexFor(const std::string& key) {
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    if (cache_.size() >= settings_.cache_entries) {
      const auto lru = std::min_element(cache_.begin(), cache_.end(), [](const auto& a, const auto& b) {
        return a.second.last_used < b.second.last_used;
      });
      cache_.erase(lru);
    }
    it = cache_.emplace(key, Index{}).first;
  }
  it->second.last_used = ++use_counter_;
  return it->second;
}

xxljob::LogResult JobLogFiles::Read(const xxljob::LogParam& p) {
  xxljob::LogResult r;
  r.from_line_num = p.from_line_num;
  const auto path = PathFor(p.log_date_tim, p.log_id);
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.ok()) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      r.log_content = "readLog fail, logFile not exists";
      r.is_end = true;
    } else {
      r.log_content = fmt::format("readLog fail, {}: {}", path.filename().string(), ErrnoText(err));
    }
    return r;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    r.log_content = fmt::format("readLog fail, {}", ErrnoText(errno));
    return r;
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const std::int64_t first = std::max(p.from_line_num, 1);
  std::array<char, kChunk> buf{};

  // 1. Bring the index up to date, scanning only bytes it has not seen.
  std::uint64_t offset = 0;
  std::int64_t skip = 0;
  std::uint64_t end = 0;
  {
    std::lock_guard lock(mu_);
    Index& ix = IndexFor(path.string());
    if (ix.checkpoints.empty() || ix.dev != st.st_dev || ix.ino != st.st_ino || size < ix.scanned) {
      ix = Index{st.st_dev, st.st_ino, 0, 0, {0}, ix.last_used};
    }
    std::uint64_t pos = ix.scanned;
    while (pos < size) {
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, size - pos));
      const auto n = ::pread(fd.get(), buf.data(), want, static_cast<off_t>(pos));
      if (n <= 0) break;
      bytes_scanned_ += static_cast<std::uint64_t>(n);
      for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
        if (buf[i] != '\n') continue;
        ++ix.lines;
        ix.scanned = pos + i + 1;
        if (ix.lines % kCheckpointEvery == 0) ix.checkpoints.push_back(ix.scanned);
      }
      pos += static_cast<std::uint64_t>(n);
    }
    if (first > ix.lines) return r;  // nothing new: toLineNum 0, isEnd false
    const auto k = static_cast<std::size_t>((first - 1) / kCheckpointEvery);
    offset = ix.checkpoints[k];
    skip = (first - 1) - static_cast<std::int64_t>(k) * kCheckpointEvery;
    end = ix.scanned;
  }
  // The bytes before `end` are complete lines of an append-only file: read them without the lock.

  // 2. Skip from the checkpoint to the first wanted line.
  while (skip > 0 && offset < end) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, end - offset));
    const auto n = ::pread(fd.get(), buf.data(), want, static_cast<off_t>(offset));
    if (n <= 0) return r;
    std::size_t i = 0;
    for (; i < static_cast<std::size_t>(n) && skip > 0; ++i) {
      if (buf[i] == '\n') --skip;
    }
    offset += i;
  }

  // 3. Copy whole lines up to the byte cap.
  const std::size_t cap = settings_.max_read_bytes;
  std::string& out = r.log_content;
  std::int64_t line = first - 1;  // last complete line copied
  std::size_t complete = 0;       // bytes of `out` that are complete lines
  bool cutting = false;           // the first line is longer than the cap: skipping its rest
  while (offset < end) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, end - offset));
    const auto n = ::pread(fd.get(), buf.data(), want, static_cast<off_t>(offset));
    if (n <= 0) break;
    const std::string_view chunk(buf.data(), static_cast<std::size_t>(n));
    std::size_t i = 0;
    bool full = false;
    while (i < chunk.size()) {
      const auto nl = chunk.find('\n', i);
      const std::size_t stop = nl == std::string_view::npos ? chunk.size() : nl + 1;
      if (!cutting) out.append(chunk.substr(i, stop - i));
      i = stop;
      if (!cutting && out.size() > cap) {
        if (complete > 0) {  // the line in progress does not fit: stop before it
          out.resize(complete);
          full = true;
          break;
        }
        cutting = true;  // a single line longer than the cap: keep its head, mark it
        out.resize(cap);
        out += " [... line cut at " + std::to_string(cap) + " bytes]\n";
      }
      if (nl != std::string_view::npos) {
        ++line;
        if (cutting) {
          full = true;
          break;
        }
        complete = out.size();
      }
    }
    if (full) break;
    offset += chunk.size();
  }
  if (!cutting) out.resize(complete);
  r.to_line_num = line >= first ? static_cast<int>(std::min<std::int64_t>(line, INT32_MAX)) : 0;
  return r;
}

int JobLogFiles::DeleteExpired(int retention_days) {
  if (retention_days < 3) return 0;
  const auto today = std::chrono::floor<days>(clock_.WallNow());
  int deleted = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(settings_.dir, ec)) {
    const auto day = ParseDay(entry.path().filename().string());
    if (!day || !entry.is_directory(ec)) continue;
    if ((today - *day).count() < retention_days) continue;
    std::error_code rm;
    std::filesystem::remove_all(entry.path(), rm);
    if (rm) {
      spdlog::warn("log retention: cannot delete {}: {}", entry.path().string(), rm.message());
    } else {
      spdlog::info("log retention: deleted {} (older than {} days)", entry.path().string(), retention_days);
      ++deleted;
    }
  }
  return deleted;
}

std::size_t JobLogFiles::CachedIndexes() const {
  std::lock_guard lock(mu_);
  return cache_.size();
}

std::uint64_t JobLogFiles::BytesScanned() const {
  std::lock_guard lock(mu_);
  return bytes_scanned_;
}

// --- JobLogFile ----------------------------------------------------------------------------------------

JobLogFile::JobLogFile(JobLogFiles& files, std::int64_t log_date_ms, std::int64_t log_id)
    : files_(files), log_date_ms_(log_date_ms), log_id_(log_id), path_(files.PathFor(log_date_ms, log_id)) {
  fd_ = OpenForAppend(path_);
  if (fd_ < 0) spdlog::warn("job log {}: cannot open: {}", path_.string(), ErrnoText(errno));
}

JobLogFile::~JobLogFile() {
  if (fd_ >= 0) files_.Park(log_date_ms_, log_id_, fd_, shared_.load(std::memory_order_relaxed));
}

void JobLogFile::Write(std::string_view text) {
  WriteLines({text});
}

void JobLogFile::WriteLines(std::initializer_list<std::string_view> lines) {
  std::string text;
  const auto timestamp = UtcTimestamp(files_.clock().NowMs());
  for (const auto line : lines)
    AppendEntry(text, timestamp, line);
  std::lock_guard lock(mu_);
  if (fd_ < 0) return;
  // Only a file someone else was given (Path()) can end inside a line: this one writes whole lines.
  if (shared_.load(std::memory_order_relaxed)) EndLastLine(fd_);
  if (!WriteAll(fd_, text)) spdlog::warn("job log {}: write failed: {}", path_.string(), ErrnoText(errno));
}

std::filesystem::path JobLogFile::Path() const {
  shared_.store(true, std::memory_order_relaxed);
  return path_;
}

// --- LogRetention --------------------------------------------------------------------------------------

LogRetention::LogRetention(Settings settings, JobLogFiles& files, ringwheel::Clock& clock)
    : settings_(settings), files_(files), clock_(clock) {}

LogRetention::~LogRetention() {
  Stop();
}

void LogRetention::Start() {
  if (settings_.retention_days < 3 || task_) return;
  task_ = std::make_unique<PeriodicTask>(
      PeriodicTask::Settings{
          .name = "log retention",
          .interval = std::chrono::duration_cast<std::chrono::milliseconds>(settings_.interval)},
      clock_, [this] { files_.DeleteExpired(settings_.retention_days); });
}

void LogRetention::Stop() {
  task_.reset();
}

}  // namespace cronwheel::executor
