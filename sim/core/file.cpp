#include "sim/core/file.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include "sim/core/error.h"
#include "sim/core/limits.h"

namespace ps {

std::string read_file_bytes(const std::string& path) {
  // Checked before reading: only regular files (a scene naming /dev/zero or a
  // FIFO would otherwise read forever), and no more than the size limit.
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st))
    throw InputError(SourceLoc{path, 0, 0}, "", "cannot open file: no such file");
  if (std::filesystem::is_directory(st))
    throw InputError(SourceLoc{path, 0, 0}, "", "is a folder, not a file");
  if (!std::filesystem::is_regular_file(st))
    throw InputError(SourceLoc{path, 0, 0}, "", "not a regular file (device, pipe or socket)");
  const uintmax_t size = std::filesystem::file_size(path, ec);
  const int64_t limit = input_limits().max_file_bytes;
  if (ec) throw InputError(SourceLoc{path, 0, 0}, "", "cannot read the file size: " + ec.message());
  if (size > static_cast<uintmax_t>(limit))
    throw InputError(SourceLoc{path, 0, 0}, "",
                     "file too large: " + std::to_string(size) + " bytes (the limit is " +
                         std::to_string(limit) + ")");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLoc{path, 0, 0}, "", "cannot open file");
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (in.gcount() != static_cast<std::streamsize>(size))
    throw InputError(SourceLoc{path, 0, 0}, "", "read failed (the file changed while it was read)");
  return text;
}

}  // namespace ps
