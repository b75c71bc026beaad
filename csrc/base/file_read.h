// Positioned reads of a file range straight into memory, for loading tensors
// from files (lib/io): the bytes go from the page cache to their destination
// with no copy in between (NOTE [ File reads ] in file_read.cpp).
#pragma once
#include <cstddef>
#include <cstdint>

namespace gx::core {

// Fills `dst` with the `nbytes` bytes at `offset` of the open file `fd`, from
// several threads at once (gx::parallel_for) where the range is large. Throws
// a Value error when the file ends first (it was truncated under us) and one
// carrying strerror when a read fails. Safe off the JS thread.
void read_file_range(int fd, int64_t offset, void* dst, size_t nbytes);

}  // namespace gx::core
