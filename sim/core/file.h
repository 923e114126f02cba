/// Reading an input file whole, safely: regular files only, size checked
/// against input_limits() before anything is allocated. Every reader of user
/// files goes through this (sim/io/text.h's read_file_text wraps it).
#pragma once
#include <string>

namespace ps {

/// Whole file as bytes. Throws InputError naming the file when it does not
/// exist, is a folder, device, pipe or socket, is larger than
/// input_limits().max_file_bytes, or cannot be read.
std::string read_file_bytes(const std::string& path);

}  // namespace ps
