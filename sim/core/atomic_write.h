/// Saving without half-written files. Every saver of the library, the runner
/// and the window (scene JSON, SGF sets, P4P / P4C, ID lists, colour CSVs,
/// dumps, PNGs, the verification report, the window settings) goes through
/// write_file_atomic or write_files_atomic:
///
///   1. the new bytes go to a temporary file in the target's own folder
///      (".<name>.tmp-<random>", which no loader picks up), every write(2)
///      checked, then fsync and close, both checked;
///   2. rename(2) puts it in place: atomic on POSIX, so a reader (or a crash)
///      sees either the whole old file or the whole new one;
///   3. the folder is fsynced (best effort) so the rename survives a power cut.
///
/// On any failure the temporary is removed, the previous file is left as it
/// was, and a WriteError names the file, the step that failed and the OS
/// reason ("out/a.json: write failed: No space left on device (the previous
/// file is unchanged)").
#pragma once
#include <cerrno>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ps {

/// A save that failed: what() is "PATH: STEP: REASON (NOTE)".
class WriteError : public std::runtime_error {
 public:
  WriteError(const std::string& path, const std::string& message, int os_error)
      : std::runtime_error(path + ": " + message), path_(path), os_error_(os_error) {}
  /// The file the caller asked to write (not the temporary).
  const std::string& path() const { return path_; }
  /// The errno value of the failed call (0 when the failure is not the OS's).
  int os_error() const { return os_error_; }

 private:
  std::string path_;
  int os_error_ = 0;
};

/// Replaces (or creates) `path` with `bytes` as described above. The folder
/// must exist. A symlink is followed: the file it points to is replaced and
/// the link kept. An existing file keeps its permission bits. Throws WriteError.
void write_file_atomic(const std::string& path, const std::string& bytes);

/// One file of a multi-file save.
struct FileWrite {
  std::string path;
  std::string bytes;
};

/// Saves several files (distinct paths) as one: every temporary is written,
/// synced and closed first, so a failure there (disk full, I/O error) changes
/// no target at all. Then the temporaries are renamed over their targets in
/// the given order (put an index that names the others last). Should a rename
/// fail, the files already renamed are put back (their old versions are kept
/// as hard links until the end) or removed when they are new, so the set is
/// all old or all new. Throws WriteError naming the file that failed.
void write_files_atomic(const std::vector<FileWrite>& files);

// [SECTION] Test hook ---------------------------------------------------------------

/// Simulated failures for tests (a full disk cannot be had on demand, and
/// read-only folders do not stop root). Process-wide; WriteFault{} turns it off.
struct WriteFault {
  /// >= 0: once this many bytes have been written in all since the hook was
  /// set, writes fail with `error` (the write that crosses it is cut short
  /// there, then fails: a disk that fills up). -1: off.
  int64_t after_bytes = -1;
  /// >= 0: the rename with this 0-based index, counted since the hook was
  /// set, fails with `error` (and so do no others). -1: off.
  int rename_index = -1;
  int error = ENOSPC;
};
void set_write_fault_for_tests(const WriteFault& fault);

}  // namespace ps
