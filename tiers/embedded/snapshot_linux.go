package embedded

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing [off, off+n) of f to
// disk without waiting for it, so the disk works while the store is still
// being walked and the final sync has little left to do. Left alone, the
// kernel would hold a snapshot of a few GiB in dirty pages until the sync.
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
