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
#include <map>
#include <system_error>

#include "cronwheel/mutex.hpp"
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
  int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, kPrivateFileMode);
  if (fd < 0 && errno == ENOENT) {
    std::error_code ec;
    MakePrivateDirs(path.parent_path(), ec);
    fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, kPrivateFileMode);
  }
  return fd;
}

// The log id of an own file's name without ".log" (decimal digits only).
std::optional<std::int64_t> ParseLogId(std::string_view stem) {
  std::int64_t id = 0;
  const auto [end, ec] = std::from_chars(stem.data(), stem.data() + stem.size(), id);
  if (stem.empty() || stem.front() == '-' || ec != std::errc{} || end != stem.data() + stem.size()) {
    return std::nullopt;
  }
  return id;
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

// Copies whole lines into `out` up to `cap` bytes (a single line longer than the cap is cut and marked);
// fed with text that starts at the beginning of line `first`.
class LineCopier {
 public:
  LineCopier(std::string& out, std::size_t cap, std::int64_t first)
      : out_(out), cap_(cap), line_(first - 1) {}

  // false once the cap is reached (stop feeding).
  bool Feed(std::string_view chunk) {
    std::size_t i = 0;
    while (i < chunk.size()) {
      const auto nl = chunk.find('\n', i);
      const std::size_t stop = nl == std::string_view::npos ? chunk.size() : nl + 1;
      if (!cutting_) out_.append(chunk.substr(i, stop - i));
      i = stop;
      if (!cutting_ && out_.size() > cap_) {
        if (complete_ > 0) {  // the line in progress does not fit: stop before it
          out_.resize(complete_);
          return false;
        }
        cutting_ = true;  // a single line longer than the cap: keep its head, mark it
        out_.resize(cap_);
        out_ += " [... line cut at " + std::to_string(cap_) + " bytes]\n";
      }
      if (nl != std::string_view::npos) {
        ++line_;
        if (cutting_) return false;
        complete_ = out_.size();
      }
    }
    return true;
  }

  // Drops an unfinished last line; returns the last complete line copied (first - 1 if none).
  std::int64_t Finish() {
    if (!cutting_) out_.resize(complete_);
    return line_;
  }

 private:
  std::string& out_;
  std::size_t cap_;
  std::int64_t line_;         // last complete line copied
  std::size_t complete_ = 0;  // bytes of `out_` that are complete lines
  bool cutting_ = false;      // the first line is longer than the cap: skipping its rest
};

int ToLineNum(std::int64_t line, std::int64_t first) {
  return line >= first ? static_cast<int>(std::min<std::int64_t>(line, INT32_MAX)) : 0;
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
    : settings_(std::move(settings)),
      clock_(clock),
      segments_(LogSegments::Settings{settings_.dir, settings_.segment_bytes}) {
  settings_.max_read_bytes = std::max<std::size_t>(settings_.max_read_bytes, 64);
  settings_.cache_entries = std::max<std::size_t>(settings_.cache_entries, 1);
}

JobLogFiles::~JobLogFiles() = default;

std::filesystem::path JobLogFiles::PathFor(std::int64_t log_date_ms, std::int64_t log_id) const {
  return settings_.dir / UtcDay(log_date_ms) / (std::to_string(log_id) + ".log");
}

bool JobLogFiles::AppendToOwnFile(const std::filesystem::path& path, const std::string& entry) {
  const Fd fd(::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC));
  if (!fd.ok()) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return false;  // no own file: the log is in segments
    spdlog::warn("job log {}: cannot open: {}", path.string(), ErrnoText(err));
    return true;  // it exists: the line is lost, not put where a reader would not look
  }
  EndLastLine(fd.get());
  if (!WriteAll(fd.get(), entry))
    spdlog::warn("job log {}: write failed: {}", path.string(), ErrnoText(errno));
  return true;
}

void JobLogFiles::Append(std::int64_t log_date_ms, std::int64_t log_id, std::string_view text) {
  AppendEach({Target{log_date_ms, log_id}}, text);
}

void JobLogFiles::AppendEach(const std::vector<Target>& fires, std::string_view text) {
  const auto entry = Entry(clock_, text);
  std::map<std::string, std::vector<LogSegments::Record>> by_day;
  // Held until the records are written: MakeOwnFile (which copies a log's records) happens wholly before
  // or wholly after, so a line lands in the copy or in the file, never in a record nobody reads.
  cronwheel::MutexLock lock(mu_);
  for (const auto& f : fires) {
    auto day = UtcDay(f.log_date_ms);
    if (OwnFilesLocked(day).contains(f.log_id) && AppendToOwnFile(PathFor(f.log_date_ms, f.log_id), entry))
      continue;
    by_day[std::move(day)].push_back(LogSegments::Record{f.log_id, entry});
  }
  for (const auto& [day, records] : by_day)
    segments_.Append(day, records);
}

std::unordered_set<std::int64_t>& JobLogFiles::OwnFilesLocked(const std::string& day) {
  const auto [it, listed_now] = own_files_.try_emplace(day);
  if (listed_now) {
    // Own files made before this process started (or by an executor that gave every fire one): "<id>.log".
    std::error_code ec;
    for (std::filesystem::directory_iterator d(settings_.dir / day, ec), end; !ec && d != end;
         d.increment(ec)) {
      const auto name = d->path().filename().string();
      if (!name.ends_with(".log")) continue;
      if (const auto id = ParseLogId(std::string_view(name).substr(0, name.size() - 4)))
        it->second.insert(*id);
    }
  }
  return it->second;
}

int JobLogFiles::MakeOwnFile(const std::string& day, std::int64_t log_id) {
  const auto path = settings_.dir / day / (std::to_string(log_id) + ".log");
  cronwheel::MutexLock lock(mu_);  // no line of any log is appended through AppendEach meanwhile
  const auto before = segments_.Read(day, log_id).value_or("");
  // A file of the same log id already there (a fire delivered again after a restart): its lines stay, and
  // this fire's follow, as XXL-JOB appends to the fire's file.
  int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (fd >= 0) {
    if (!WriteAll(fd, before)) spdlog::warn("job log {}: write failed: {}", path.string(), ErrnoText(errno));
  } else {
    // Written whole under another name, then renamed: a /log read sees the records or the whole file.
    auto tmp = path;
    tmp += ".tmp";
    ::unlink(tmp.c_str());
    fd = OpenForAppend(tmp);
    if (fd < 0) {
      spdlog::warn("job log {}: cannot create: {}", tmp.string(), ErrnoText(errno));
      return -1;
    }
    if (!WriteAll(fd, before) || ::rename(tmp.c_str(), path.c_str()) != 0) {
      spdlog::warn("job log {}: cannot create: {}", path.string(), ErrnoText(errno));
      ::close(fd);
      ::unlink(tmp.c_str());
      return -1;
    }
  }
  OwnFilesLocked(day).insert(log_id);
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
  const std::int64_t first = std::max(p.from_line_num, 1);
  const auto path = PathFor(p.log_date_tim, p.log_id);
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.ok()) return ReadFile(path, fd.get(), p.from_line_num);
  xxljob::LogResult r;
  r.from_line_num = p.from_line_num;
  const int err = errno;
  if (err != ENOENT && err != ENOTDIR) {
    r.log_content = fmt::format("readLog fail, {}: {}", path.filename().string(), ErrnoText(err));
    return r;
  }
  const auto text = segments_.Read(UtcDay(p.log_date_tim), p.log_id);
  if (!text) {
    r.log_content = "readLog fail, logFile not exists";
    r.is_end = true;
    return r;
  }
  // A log in segments is small (a fire's lines): skip to the first wanted line in memory.
  std::string_view rest(*text);
  for (std::int64_t skip = first - 1; skip > 0 && !rest.empty(); --skip) {
    const auto nl = rest.find('\n');
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
  }
  LineCopier copy(r.log_content, settings_.max_read_bytes, first);
  copy.Feed(rest);
  r.to_line_num = ToLineNum(copy.Finish(), first);
  return r;
}

std::optional<std::string> JobLogFiles::Text(std::int64_t log_date_ms, std::int64_t log_id) {
  const auto path = PathFor(log_date_ms, log_id);
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    std::string out;
    const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    std::array<char, kChunk> buf{};
    for (ssize_t n = 0; fd.ok() && (n = ::read(fd.get(), buf.data(), buf.size())) > 0;)
      out.append(buf.data(), static_cast<std::size_t>(n));
    return out;
  }
  return segments_.Read(UtcDay(log_date_ms), log_id);
}

xxljob::LogResult JobLogFiles::ReadFile(const std::filesystem::path& path, int fd_no, int from_line_num) {
  xxljob::LogResult r;
  r.from_line_num = from_line_num;
  const std::int64_t first = std::max(from_line_num, 1);
  struct stat st {};
  if (::fstat(fd_no, &st) != 0) {
    r.log_content = fmt::format("readLog fail, {}", ErrnoText(errno));
    return r;
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  std::array<char, kChunk> buf{};

  // 1. Bring the index up to date, scanning only bytes it has not seen.
  std::uint64_t offset = 0;
  std::int64_t skip = 0;
  std::uint64_t end = 0;
  {
    cronwheel::MutexLock lock(mu_);
    Index& ix = IndexFor(path.string());
    if (ix.checkpoints.empty() || ix.dev != st.st_dev || ix.ino != st.st_ino || size < ix.scanned) {
      ix = Index{st.st_dev, st.st_ino, 0, 0, {0}, ix.last_used};
    }
    std::uint64_t pos = ix.scanned;
    while (pos < size) {
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, size - pos));
      const auto n = ::pread(fd_no, buf.data(), want, static_cast<off_t>(pos));
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
    const auto n = ::pread(fd_no, buf.data(), want, static_cast<off_t>(offset));
    if (n <= 0) return r;
    std::size_t i = 0;
    for (; i < static_cast<std::size_t>(n) && skip > 0; ++i) {
      if (buf[i] == '\n') --skip;
    }
    offset += i;
  }

  // 3. Copy whole lines up to the byte cap.
  LineCopier copy(r.log_content, settings_.max_read_bytes, first);
  while (offset < end) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, end - offset));
    const auto n = ::pread(fd_no, buf.data(), want, static_cast<off_t>(offset));
    if (n <= 0 || !copy.Feed(std::string_view(buf.data(), static_cast<std::size_t>(n)))) break;
    offset += static_cast<std::uint64_t>(n);
  }
  r.to_line_num = ToLineNum(copy.Finish(), first);
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
    segments_.Forget(entry.path().filename().string());
    {
      cronwheel::MutexLock lock(mu_);
      own_files_.erase(entry.path().filename().string());
    }
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
  cronwheel::MutexLock lock(mu_);
  return cache_.size();
}

std::uint64_t JobLogFiles::BytesScanned() const {
  cronwheel::MutexLock lock(mu_);
  return bytes_scanned_;
}

// --- JobLogFile ----------------------------------------------------------------------------------------

JobLogFile::JobLogFile(JobLogFiles& files, std::int64_t log_date_ms, std::int64_t log_id)
    : files_(files), log_date_ms_(log_date_ms), log_id_(log_id), day_(UtcDay(log_date_ms)) {
  if (files_.callback_log_bytes() > 0) kept_.emplace(files_.callback_log_bytes());
}

JobLogFile::~JobLogFile() {
  if (fd_ >= 0) ::close(fd_);
}

void JobLogFile::Write(std::string_view text) {
  WriteLines({text});
}

void JobLogFile::WriteLines(std::initializer_list<std::string_view> lines) {
  std::string text;
  const auto timestamp = UtcTimestamp(files_.clock().NowMs());
  for (const auto line : lines)
    AppendEntry(text, timestamp, line);
  cronwheel::MutexLock lock(mu_);
  if (fd_ < 0) {
    files_.segments().Append(day_, {LogSegments::Record{log_id_, text}});
    if (kept_) kept_->Append(text);
    return;
  }
  // The file was handed out (Path()): a child may have left its last line unterminated.
  EndLastLine(fd_);
  if (!WriteAll(fd_, text)) spdlog::warn("job log {}.log: write failed: {}", log_id_, ErrnoText(errno));
}

std::filesystem::path JobLogFile::Path() const {
  auto path = files_.PathFor(log_date_ms_, log_id_);
  cronwheel::MutexLock lock(mu_);  // this fire's own Writes wait: none lands between the copy and the file
  if (fd_ >= 0) return path;
  // From now on the file is the log: it starts with the lines written so far.
  const int fd = files_.MakeOwnFile(day_, log_id_);
  if (fd < 0) return {};
  fd_ = fd;
  return path;
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
