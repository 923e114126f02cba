// Atomic saves (sim/core/atomic_write.h): a failed save never leaves a
// half-written file or a temporary behind, keeps the previous file's bytes and
// says which file failed and why. The suite runs as root in CI, where a
// read-only folder does not stop a write, so the failures used here are ones
// that stop root too: a path through a regular file (ENOTDIR), a missing
// folder (ENOENT), a folder where the file should be (EISDIR), a simulated
// full disk (the WriteFault hook: ENOSPC after N bytes, or the N-th rename
// failing) and, where the kernel lets the test make one, a real read-only and
// a real full tmpfs in a private mount namespace.
#include <catch2/catch.hpp>

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include "render/cpu/settings.h"
#include "sim/core/atomic_write.h"
#include "sim/core/image.h"
#include "sim/io/dump.h"
#include "sim/io/json.h"
#include "sim/io/p4.h"
#include "sim/io/text.h"
#include "sim/scene/scene.h"
#include "sim/sgf/sgf.h"
#include "sim/specimen/specimen.h"

using namespace ps;
namespace fs = std::filesystem;

#include "tests/temp_files.h"

using ps::test::put;
using ps::test::slurp;
using ps::test::TempDir;

namespace {

/// Every entry of a folder (names, hidden ones included) with its bytes
/// ("<dir>" for subfolders): what a failed save must leave exactly as it was.
std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> m;
  for (const auto& de : fs::directory_iterator(dir))
    m[de.path().filename().string()] =
        de.is_directory() ? std::string("<dir>") : slurp(de.path().string());
  return m;
}

/// Turns the fault hook off whatever happens in the test.
struct FaultGuard {
  explicit FaultGuard(const WriteFault& f) { set_write_fault_for_tests(f); }
  ~FaultGuard() { set_write_fault_for_tests(WriteFault{}); }
};

WriteFault disk_full_after(int64_t bytes) {
  WriteFault f;
  f.after_bytes = bytes;
  f.error = ENOSPC;
  return f;
}

WriteFault rename_fails(int index) {
  WriteFault f;
  f.rename_index = index;
  f.error = EIO;
  return f;
}

/// Runs `save`, which must throw a WriteError; returns it (what(), os error).
WriteError expect_write_error(const std::function<void()>& save) {
  try {
    save();
  } catch (const WriteError& e) {
    return e;
  }
  FAIL("the save did not throw WriteError");
  return WriteError("", "", 0);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::string reason(int err) { return std::strerror(err); }

SgfGroup group(const std::string& name, std::vector<uint32_t> ids, std::vector<SgfEntry> entries) {
  SgfGroup g;
  g.name = name;
  g.ids = std::move(ids);
  g.entries = std::move(entries);
  return g;
}

bool same_set(const SgfSet& a, const SgfSet& b) {
  if (a.groups.size() != b.groups.size()) return false;
  for (size_t g = 0; g < a.groups.size(); ++g) {
    const SgfGroup &x = a.groups[g], &y = b.groups[g];
    if (x.name != y.name || x.ids != y.ids || x.entries.size() != y.entries.size()) return false;
    for (int c = 0; c < 3; ++c)
      if (x.color[c] != y.color[c]) return false;
    for (size_t e = 0; e < x.entries.size(); ++e) {
      const SgfEntry &p = x.entries[e], &q = y.entries[e];
      if (p.s0 != q.s0 || p.s1 != q.s1 || p.fx != q.fx || p.fy != q.fy || p.fz != q.fz)
        return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("Atomic write: replaces the whole file, keeps its mode and symlinks, leaves no temporary",
          "[atomic]") {
  TempDir d("atomic_ok");
  const std::string f = d / "a.txt";
  write_file_atomic(f, "first version\n");
  CHECK(slurp(f) == "first version\n");
  ::chmod(f.c_str(), 0640);
  write_file_atomic(f, "second");
  CHECK(slurp(f) == "second");
  struct stat st;
  REQUIRE(::stat(f.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  write_file_atomic(f, "");  // empty files are files too
  CHECK(fs::exists(f));
  CHECK(fs::file_size(f) == 0);

  // Through a symlink: the file it points to changes, the link stays a link.
  const std::string link = d / "link.txt";
  fs::create_symlink("a.txt", link);
  write_file_atomic(link, "via the link");
  CHECK(fs::is_symlink(link));
  CHECK(slurp(f) == "via the link");

  // A long (legal) name: the temporary's name is shortened, the save works.
  const std::string long_name = d / std::string(250, 'n');
  write_file_atomic(long_name, "long");
  CHECK(slurp(long_name) == "long");

  // Several files at once.
  write_files_atomic({{d / "x.csv", "x"}, {d / "y.csv", "y"}, {d / "a.txt", "a"}});
  CHECK(slurp(d / "x.csv") == "x");
  CHECK(slurp(d / "a.txt") == "a");
  const auto snap = snapshot(d.path);
  CHECK(snap.size() ==
        5);  // a.txt, link.txt, the long one, x.csv, y.csv: no temporaries, no backups
  for (const auto& kv : snap) CHECK(kv.first[0] != '.');
}

TEST_CASE("Atomic write: a path through a regular file fails with ENOTDIR, naming the file",
          "[atomic]") {
  TempDir d("atomic_enotdir");
  put(d / "plain.txt", "plain bytes");
  const std::string target = d / "plain.txt/out.txt";
  WriteError e = expect_write_error([&] { write_file_atomic(target, "new"); });
  CHECK(e.os_error() == ENOTDIR);
  CHECK(e.path() == target);
  CHECK(contains(e.what(), target + ": cannot create a temporary file in " + (d / "plain.txt")));
  CHECK(contains(e.what(), reason(ENOTDIR)));
  CHECK(slurp(d / "plain.txt") == "plain bytes");
  CHECK(snapshot(d.path).size() == 1);
}

TEST_CASE("Atomic write: a missing folder fails with ENOENT and creates nothing", "[atomic]") {
  TempDir d("atomic_enoent");
  const std::string target = d / "missing/out.txt";
  WriteError e = expect_write_error([&] { write_file_atomic(target, "new"); });
  CHECK(e.os_error() == ENOENT);
  CHECK(contains(e.what(), target));
  CHECK(contains(e.what(), reason(ENOENT)));
  CHECK(contains(e.what(), "(nothing was written)"));
  CHECK(snapshot(d.path).empty());
}

TEST_CASE("Atomic write: a folder in the file's place fails at the rename and the temporary goes",
          "[atomic]") {
  TempDir d("atomic_eisdir");
  fs::create_directories(d / "target/inner");
  put(d / "target/inner/keep.txt", "kept");
  const std::string target = d / "target";
  WriteError e = expect_write_error([&] { write_file_atomic(target, "new bytes"); });
  CHECK(e.os_error() == EISDIR);
  CHECK(contains(e.what(), target + ": cannot replace the file: " + reason(EISDIR)));
  CHECK(slurp(d / "target/inner/keep.txt") == "kept");
  CHECK(snapshot(d.path) == std::map<std::string, std::string>{{"target", "<dir>"}});
}

TEST_CASE("Atomic write: a full disk (ENOSPC part way) keeps the previous bytes and no temporary",
          "[atomic]") {
  TempDir d("atomic_enospc");
  const std::string f = d / "state.txt";
  const std::string old_bytes = "the previous, complete file\n";
  put(f, old_bytes);
  std::string new_bytes;
  for (int i = 0; i < 2000; ++i) new_bytes += "row " + std::to_string(i) + "\n";
  for (int64_t budget :
       {int64_t{0}, int64_t{1}, int64_t{100}, static_cast<int64_t>(new_bytes.size()) - 1}) {
    INFO("disk full after " << budget << " bytes");
    FaultGuard guard(disk_full_after(budget));
    WriteError e = expect_write_error([&] { write_file_atomic(f, new_bytes); });
    CHECK(e.os_error() == ENOSPC);
    CHECK(e.path() == f);
    CHECK(std::string(e.what()) ==
          f + ": write failed: " + reason(ENOSPC) + " (the previous file is unchanged)");
    CHECK(slurp(f) == old_bytes);
    CHECK(snapshot(d.path).size() == 1);
  }
  {
    FaultGuard guard(disk_full_after(static_cast<int64_t>(new_bytes.size())));  // just enough room
    write_file_atomic(f, new_bytes);
  }
  CHECK(slurp(f) == new_bytes);
  // A new file that cannot be written does not appear at all.
  {
    FaultGuard guard(disk_full_after(3));
    WriteError e = expect_write_error([&] { write_file_atomic(d / "new.txt", "abcdef"); });
    CHECK(contains(e.what(), "(nothing was written)"));
  }
  CHECK_FALSE(fs::exists(d / "new.txt"));
  CHECK(snapshot(d.path).size() == 1);
}

TEST_CASE("Atomic write: every saver goes through it (disk full: old bytes kept, file named)",
          "[atomic]") {
  TempDir d("atomic_savers");
  P4ParticleFrame frame;
  frame.particles.push_back(P4Particle{1, 0, 1.0, 2.0, 0.5, 0.25, 0.0, 0.0, 0.0, 0.0});
  P4ContactFrame cframe;
  cframe.contacts.push_back(P4Contact{1, 2, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1});
  Specimen spec;
  spec.id = {1, 2};
  spec.pos_px = spec.pos = {Vec2{0.f, 0.f}, Vec2{1.f, 0.f}};
  spec.rgb = {{{10, 20, 30}}, {{200, 210, 220}}};
  ParticleTable table;
  table.id = {1};
  table.material = {0};
  table.group = {0};
  table.x = table.y = table.vx = table.vy = table.mass = table.radius = {0.5f};
  Json doc = Json::object();
  doc.set("name", Json::string("atomic"));
  Image img;
  img.resize(4, 3, 10, 20, 30);

  struct Saver {
    const char* name;
    std::function<void(const std::string&)> save;
  };
  std::vector<Saver> savers = {
      {"write_file_text", [](const std::string& p) { write_file_text(p, "text bytes\n"); }},
      {"save_p4p", [&](const std::string& p) { save_p4p(p, {frame}); }},
      {"save_p4c", [&](const std::string& p) { save_p4c(p, {cframe}); }},
      {"save_json_file", [&](const std::string& p) { save_json_file(p, doc); }},
      {"save_color_csv", [&](const std::string& p) { save_color_csv(spec, p); }},
      {"save_id_list",
       [](const std::string& p) {
         save_id_list({4, 5, 6}, p);
       }},
      {"write_dump csv", [&](const std::string& p) { write_dump(p, DumpFormat::CSV, table); }},
      {"write_dump vtk", [&](const std::string& p) { write_dump(p, DumpFormat::VTK, table); }},
  };
  if (image_io_available())
    savers.push_back({"save_png", [&](const std::string& p) { save_png(p, img); }});
  for (const Saver& s : savers) {
    INFO(s.name);
    const std::string f = d / (std::string(s.name) + ".out");
    put(f, "old");
    {
      FaultGuard guard(disk_full_after(1));
      WriteError e = expect_write_error([&] { s.save(f); });
      CHECK(e.os_error() == ENOSPC);
      CHECK(contains(e.what(), f + ": write failed: " + reason(ENOSPC)));
    }
    CHECK(slurp(f) == "old");
    s.save(f);  // and without the fault it saves
    CHECK(slurp(f) != "old");
    CHECK(fs::file_size(f) > 0);
  }
  // The window's settings: best effort, never throws, says why.
  SettingsFile settings;
  settings.set("view.grid", "1");
  const std::string sf = d / "settings.ini";
  put(sf, "view.grid = 0\n");
  {
    FaultGuard guard(disk_full_after(5));
    std::string err;
    CHECK_FALSE(settings.save(sf, &err));
    CHECK(contains(err, sf + ": write failed: " + reason(ENOSPC)));
  }
  CHECK(slurp(sf) == "view.grid = 0\n");
  CHECK(settings.save(sf));
  CHECK(contains(slurp(sf), "view.grid = 1"));
  for (const auto& kv : snapshot(d.path)) CHECK(kv.first[0] != '.');  // no temporaries left
}

TEST_CASE("Atomic write: a multi-file save that fails part way changes no file", "[atomic]") {
  TempDir d("atomic_multi");
  put(d / "a.csv", "old a");
  put(d / "b.csv", "old b");
  const auto before = snapshot(d.path);
  const std::vector<FileWrite> set = {
      {d / "a.csv", "new a!"}, {d / "c.csv", "new c"}, {d / "b.csv", "new b"}};
  // A full disk anywhere while the temporaries are written.
  for (int64_t budget = 0; budget < 16; ++budget) {
    INFO("disk full after " << budget << " bytes");
    FaultGuard guard(disk_full_after(budget));
    WriteError e = expect_write_error([&] { write_files_atomic(set); });
    CHECK(e.os_error() == ENOSPC);
    CHECK(contains(e.what(), "(no file of the set was changed)"));
    CHECK(snapshot(d.path) == before);
  }
  // A rename failing after others succeeded: those are put back.
  for (int k = 0; k < 3; ++k) {
    INFO("rename " << k << " fails");
    FaultGuard guard(rename_fails(k));
    WriteError e = expect_write_error([&] { write_files_atomic(set); });
    CHECK(e.path() == set[static_cast<size_t>(k)].path);
    CHECK(contains(e.what(), ": cannot replace the file: " + reason(EIO) +
                                 " (no file of the set was changed)"));
    CHECK(snapshot(d.path) == before);
  }
  write_files_atomic(set);
  CHECK(snapshot(d.path) == std::map<std::string, std::string>{
                                {"a.csv", "new a!"}, {"b.csv", "new b"}, {"c.csv", "new c"}});
}

TEST_CASE("SGF set: a save that fails half way leaves the previous set loadable, identical",
          "[atomic][sgf]") {
  TempDir d("atomic_sgfset");
  const std::string dir = d / "set";
  SgfSet old_set;
  old_set.groups.push_back(
      group("left", {1, 2, 3}, {{1, 10, 0.5, 0.0, 0.0}, {20, 30, -0.5, 0.0, 0.0}}));
  old_set.groups.push_back(
      group("right", {7, 8}, {{1, 10, 0.0, 2.0, 0.0}, {40, 50, 0.0, -2.0, 0.0}}));
  save_sgf_set(old_set, dir);
  const auto before = snapshot(dir);
  REQUIRE(before.size() == 4);  // SGF1-10, SGF20-30, SGF40-50, groups.json
  const SgfSetLoadResult loaded0 = load_sgf_set(dir);
  REQUIRE(loaded0.ok());
  REQUIRE(same_set(loaded0.set, old_set));

  // The new set rewrites SGF1-10.csv, adds SGF5-6.csv and SGF60-70.csv, drops SGF20-30 and SGF40-50.
  SgfSet new_set;
  new_set.groups.push_back(
      group("left", {1, 2, 3, 4}, {{1, 10, 0.25, 0.0, 0.0}, {60, 70, 1.0, 1.0, 0.0}}));
  new_set.groups.push_back(group("new", {9}, {{5, 6, 0.0, 0.0, 3.0}}));
  int64_t total = 0;
  {
    TempDir scratch("sgfsize");
    save_sgf_set(new_set, scratch.path);
    for (const auto& kv : snapshot(scratch.path)) total += static_cast<int64_t>(kv.second.size());
  }
  auto unchanged = [&] {
    CHECK(snapshot(dir) == before);  // names and bytes, no temporaries, no backups
    const SgfSetLoadResult r = load_sgf_set(dir);
    CHECK(r.ok());
    CHECK(same_set(r.set, old_set));
  };
  // Disk full at every point while the new files are written ...
  for (int64_t budget = 0; budget < total; budget += std::max<int64_t>(1, total / 40)) {
    INFO("disk full after " << budget << " of " << total << " bytes");
    FaultGuard guard(disk_full_after(budget));
    WriteError e = expect_write_error([&] { save_sgf_set(new_set, dir); });
    CHECK(e.os_error() == ENOSPC);
    CHECK(contains(e.what(), dir));
    unchanged();
  }
  // ... and each rename failing (3 CSVs, then groups.json), the earlier ones put back.
  for (int k = 0; k < 4; ++k) {
    INFO("rename " << k << " fails");
    FaultGuard guard(rename_fails(k));
    WriteError e = expect_write_error([&] { save_sgf_set(new_set, dir); });
    CHECK(contains(e.path(), k == 3 ? std::string(kSgfIndexName) : std::string("SGF")));
    unchanged();
  }
  // The flat form too.
  {
    FaultGuard guard(disk_full_after(10));
    expect_write_error([&] { save_sgf_folder(sgf_flatten(new_set), dir); });
    unchanged();
  }
  // Without a fault the new set replaces the old one, stale files removed.
  save_sgf_set(new_set, dir);
  const SgfSetLoadResult r = load_sgf_set(dir);
  CHECK(r.ok());
  CHECK(same_set(r.set, new_set));
  const auto after = snapshot(dir);
  CHECK(after.size() == 4);  // SGF1-10, SGF5-6, SGF60-70, groups.json
  CHECK(after.count("SGF20-30.csv") == 0);
  CHECK(after.count("SGF5-6.csv") == 1);
}

TEST_CASE("SGF set: a save into a path through a file names the folder and the reason",
          "[atomic][sgf]") {
  TempDir d("atomic_sgfnotdir");
  put(d / "file", "x");
  SgfSet set;
  set.groups.push_back(group("g", {1}, {{1, 2, 1.0, 0.0, 0.0}}));
  WriteError e = expect_write_error([&] { save_sgf_set(set, d / "file/sgf"); });
  CHECK(contains(e.what(), (d / "file/sgf") + ": cannot create the folder: "));
  CHECK(contains(e.what(), reason(ENOTDIR)));
  WriteError e2 = expect_write_error([&] { save_sgf_set(set, d / "file"); });
  CHECK(contains(e2.what(), (d / "file") + ": cannot create the folder: "));
  CHECK(slurp(d / "file") == "x");
}

// A real read-only file system and a real full one: tmpfs mounts in a private
// mount namespace of a child process (needs CAP_SYS_ADMIN, as root in most
// containers and CI). Without it the test says so and skips.
TEST_CASE("Atomic write: a real read-only and a real full file system", "[atomic]") {
  TempDir d("atomic_mount");
  const std::string mnt = d / "mnt";
  fs::create_directories(mnt);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // Child: no Catch2 here; the exit code is the verdict (77: cannot set up).
    if (::unshare(CLONE_NEWNS) != 0) ::_exit(77);
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(77);
    if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k") != 0) ::_exit(77);
    const std::string f = mnt + "/state.txt";
    try {
      write_file_atomic(f, "old");
    } catch (...) {
      ::_exit(10);
    }
    // Full: a megabyte does not fit in 64 KiB.
    try {
      write_file_atomic(f, std::string(1 << 20, 'x'));
      ::_exit(11);
    } catch (const WriteError& e) {
      if (e.os_error() != ENOSPC || !contains(e.what(), f) || !contains(e.what(), reason(ENOSPC)))
        ::_exit(12);
    }
    if (slurp(f) != "old" || snapshot(mnt).size() != 1) ::_exit(13);
    // Read-only.
    if (::mount(nullptr, mnt.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr) != 0) ::_exit(77);
    try {
      write_file_atomic(f, "new");
      ::_exit(14);
    } catch (const WriteError& e) {
      if (e.os_error() != EROFS || !contains(e.what(), f) || !contains(e.what(), reason(EROFS)))
        ::_exit(15);
    }
    if (slurp(f) != "old" || snapshot(mnt).size() != 1) ::_exit(16);
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  const int code = WEXITSTATUS(status);
  if (code == 77) {
    WARN(
        "skipped: this process cannot unshare a mount namespace and mount tmpfs "
        "(the ENOSPC / EROFS behaviour is covered through the WriteFault hook above)");
    return;
  }
  INFO("child exit code " << code << " (see the test's source for what each code means)");
  CHECK(code == 0);
}

// Without root a read-only folder is enough; as root it is not (root writes
// anyway), so the test says so and skips.
TEST_CASE("Atomic write: a folder without write permission", "[atomic]") {
  if (::geteuid() == 0) {
    WARN(
        "skipped: running as root, which ignores folder permissions "
        "(the ENOTDIR, EISDIR, ENOSPC and EROFS tests cover failing saves)");
    return;
  }
  TempDir d("atomic_perm");
  put(d / "a.txt", "old");
  ::chmod(d.path.c_str(), 0555);
  WriteError e = expect_write_error([&] { write_file_atomic(d / "a.txt", "new"); });
  ::chmod(d.path.c_str(), 0755);
  CHECK(e.os_error() == EACCES);
  CHECK(contains(e.what(), d / "a.txt"));
  CHECK(slurp(d / "a.txt") == "old");
}
