package offheap

import "testing"

// TestAlloc: small and large sizes alike give n zeroed, writable bytes,
// and releasing them is safe.
func TestAlloc(t *testing.T) {
	for _, n := range []int{0, 100, 1<<20 - 1, 1 << 20, 3<<20 + 5} {
		b, release := Alloc(n)
		if len(b) != n {
			t.Fatalf("Alloc(%d): %d bytes", n, len(b))
		}
		if n > 0 && b[n-1] != 0 {
			t.Errorf("Alloc(%d): last byte %d, not zero", n, b[n-1])
		}
		for i := 0; i < n; i += 4093 {
			if b[i] != 0 {
				t.Fatalf("Alloc(%d): byte %d is %d, not zero", n, i, b[i])
			}
			b[i] = 0xa5
			if b[i] != 0xa5 {
				t.Fatalf("Alloc(%d): byte %d not writable", n, i)
			}
		}
		release()
	}
}
