#include "sim/core/atomic_write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <random>
#include <set>
#include <system_error>

namespace fs = std::filesystem;

namespace ps {

namespace {

// [SECTION] Test hook ------------------------------------------------------------------

std::mutex g_fault_mutex;
std::atomic<bool> g_fault_on{false};  // fast path: savers only take the mutex when a fault is set
WriteFault g_fault;
int64_t g_fault_written = 0;
int g_fault_renames = 0;

/// How many of `n` bytes the next write may pass; 0 with *err set when it must fail.
size_t fault_write_allowance(size_t n, int* err) {
  *err = 0;
  if (!g_fault_on.load(std::memory_order_acquire)) return n;
  std::lock_guard<std::mutex> lock(g_fault_mutex);
  if (g_fault.after_bytes < 0) return n;
  const int64_t left = g_fault.after_bytes - g_fault_written;
  if (left <= 0) {
    *err = g_fault.error;
    return 0;
  }
  const size_t allowed = std::min<size_t>(n, static_cast<size_t>(left));
  g_fault_written += static_cast<int64_t>(allowed);
  return allowed;
}

/// The errno a commit rename must fail with, or 0.
int fault_rename() {
  if (!g_fault_on.load(std::memory_order_acquire)) return 0;
  std::lock_guard<std::mutex> lock(g_fault_mutex);
  return g_fault.rename_index >= 0 && g_fault_renames++ == g_fault.rename_index ? g_fault.error : 0;
}

// [SECTION] Helpers --------------------------------------------------------------------

std::string os_reason(int err) { return std::system_category().message(err); }

std::string folder_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

/// The file a save must replace: a symlink's target (the link stays a link).
std::string resolve_target(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    std::error_code ec;
    const fs::path real = fs::canonical(path, ec);
    if (!ec) return real.string();
  }
  return path;
}

/// ".<name>.<tag>-<16 hex>" next to `target`; the name part is shortened so a
/// long (but legal) file name still leaves room for the suffix.
std::string sibling_name(const std::string& target, const char* tag) {
  static std::mutex m;
  static std::mt19937_64 rng(std::random_device{}() ^ (static_cast<uint64_t>(::getpid()) << 32));
  uint64_t r;
  {
    std::lock_guard<std::mutex> lock(m);
    r = rng();
  }
  char hex[17];
  for (int i = 0; i < 16; ++i) hex[i] = "0123456789abcdef"[(r >> (4 * i)) & 15];
  hex[16] = '\0';
  std::string name = fs::path(target).filename().string();
  if (name.size() > 100) name.resize(100);
  return (fs::path(folder_of(target)) / ("." + name + "." + tag + "-" + hex)).string();
}

/// Writes all of `bytes` to `fd` (short writes and EINTR handled). Returns 0 or an errno.
int write_all(int fd, const std::string& bytes) {
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    int err = 0;
    const size_t chunk = fault_write_allowance(std::min<size_t>(left, size_t{1} << 30), &err);
    if (err) return err;
    const ssize_t n = ::write(fd, p, chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;  // no progress and no error: do not spin
    p += n;
    left -= static_cast<size_t>(n);
  }
  return 0;
}

void fsync_folder(const std::string& dir) {
  // Durability of the rename only; a folder that cannot be synced (some file
  // systems refuse) does not make the save fail: the file itself is synced.
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

/// One file on its way: `shown` is the caller's path (errors name it),
/// `target` the file actually replaced, `temp` the new bytes, synced.
struct Staged {
  std::string shown, target, temp;
  bool had_old = false;   // the target existed before the save
  const char* note = "";  // what a failure leaves, for the message
  std::string backup;     // hard link to the old file (multi-file saves), or ""
};

constexpr const char* kSetNote = " (no file of the set was changed)";

/// Phase 1 for one file: temporary written, synced and closed. Throws
/// WriteError (the temporary already removed) on failure.
Staged stage(const std::string& path, const std::string& bytes, bool in_set) {
  Staged s;
  s.shown = path;
  s.target = resolve_target(path);
  struct stat old;
  s.had_old = ::stat(s.target.c_str(), &old) == 0;
  s.note = in_set      ? kSetNote
           : s.had_old ? " (the previous file is unchanged)"
                       : " (nothing was written)";
  const char* note = s.note;
  const std::string dir = folder_of(s.target);
  int fd = -1;
  for (int attempt = 0; attempt < 64 && fd < 0; ++attempt) {
    s.temp = sibling_name(s.target, "tmp");
    // 0666 and the process umask, like any new file; O_EXCL: never reuse a name.
    fd = ::open(s.temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    const int err = errno;
    throw WriteError(
        path, "cannot create a temporary file in " + dir + ": " + os_reason(err) + note, err);
  }
  if (s.had_old && S_ISREG(old.st_mode))
    (void)::fchmod(fd, old.st_mode & 07777);  // keep the old mode
  auto fail = [&](const char* step, int err) {
    if (fd >= 0) ::close(fd);
    ::unlink(s.temp.c_str());
    throw WriteError(path, std::string(step) + ": " + os_reason(err) + note, err);
  };
  if (int err = write_all(fd, bytes)) fail("write failed", err);
  if (::fsync(fd) != 0) fail("fsync failed", errno);
  const int rc = ::close(fd);
  fd = -1;
  if (rc != 0) fail("close failed", errno);
  return s;
}

}  // namespace

void set_write_fault_for_tests(const WriteFault& fault) {
  std::lock_guard<std::mutex> lock(g_fault_mutex);
  g_fault = fault;
  g_fault_written = 0;
  g_fault_renames = 0;
  g_fault_on.store(fault.after_bytes >= 0 || fault.rename_index >= 0, std::memory_order_release);
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  Staged s = stage(path, bytes, false);
  int err = fault_rename();
  if (err == 0 && ::rename(s.temp.c_str(), s.target.c_str()) != 0) err = errno;
  if (err) {
    ::unlink(s.temp.c_str());
    throw WriteError(path, "cannot replace the file: " + os_reason(err) + s.note, err);
  }
  fsync_folder(folder_of(s.target));
}

void write_files_atomic(const std::vector<FileWrite>& files) {
  if (files.size() == 1) return write_file_atomic(files[0].path, files[0].bytes);
  // Phase 1: every temporary written and synced; nothing replaced yet.
  std::vector<Staged> staged;
  staged.reserve(files.size());
  try {
    for (const FileWrite& f : files) staged.push_back(stage(f.path, f.bytes, true));
  } catch (...) {
    for (const Staged& s : staged) ::unlink(s.temp.c_str());
    throw;
  }
  // Phase 2: rename in order. The old version of each target stays reachable
  // through a hard link until every rename succeeded, for the rollback.
  for (size_t i = 0; i < staged.size(); ++i) {
    Staged& s = staged[i];
    if (s.had_old) {
      for (int attempt = 0; attempt < 64; ++attempt) {
        const std::string b = sibling_name(s.target, "old");
        if (::link(s.target.c_str(), b.c_str()) == 0) {
          s.backup = b;
          break;
        }
        if (errno != EEXIST) break;  // no hard links here (or a folder): no rollback for this file
      }
    }
    int err = fault_rename();
    if (err == 0 && ::rename(s.temp.c_str(), s.target.c_str()) != 0) err = errno;
    if (err == 0) continue;
    // Rollback, newest first: old versions back, new files removed.
    std::string lost;
    for (size_t j = i; j-- > 0;) {
      Staged& r = staged[j];
      if (!r.backup.empty()) {
        if (::rename(r.backup.c_str(), r.target.c_str()) == 0)
          r.backup.clear();
        else
          lost += (lost.empty() ? "" : ", ") + r.shown + " (the old one is " + r.backup + ")";
      } else if (!r.had_old) {
        ::unlink(r.target.c_str());
      } else {
        lost += (lost.empty() ? "" : ", ") + r.shown;
      }
    }
    if (!s.backup.empty()) ::unlink(s.backup.c_str());  // its target was never touched
    for (size_t j = i; j < staged.size(); ++j) ::unlink(staged[j].temp.c_str());
    throw WriteError(
        s.shown,
        "cannot replace the file: " + os_reason(err) +
            (lost.empty() ? std::string(kSetNote)
                          : " (these files of the set were replaced and could not be put back: " +
                                lost + ")"),
        err);
  }
  // Phase 3: the old versions go; folders synced so the renames are durable.
  std::set<std::string> dirs;
  for (const Staged& s : staged) {
    if (!s.backup.empty()) ::unlink(s.backup.c_str());
    dirs.insert(folder_of(s.target));
  }
  for (const std::string& d : dirs) fsync_folder(d);
}

}  // namespace ps
