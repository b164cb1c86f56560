package embedded

import "testing"

func TestMemoryLimit(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct{ budget, want int64 }{
		{0, 0},
		{64 * mib, 64*mib + 8*mib + 32*mib},
		{1088 * mib, 1088*mib + 136*mib + 32*mib},
	} {
		if got := MemoryLimit(c.budget); got != c.want {
			t.Errorf("MemoryLimit(%d MiB) = %d MiB, want %d MiB", c.budget/mib, got/mib, c.want/mib)
		}
	}
}
