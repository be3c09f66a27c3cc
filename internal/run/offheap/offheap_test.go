package offheap

import (
	"runtime"
	"testing"
)

// TestArenaLendsZeroedWritableMemory: what an arena lends is zeroed, as
// long as asked, writable, counted in Size until Free, and of plain types
// only.
func TestArenaLendsZeroedWritableMemory(t *testing.T) {
	var a Arena
	type plain struct {
		X    float64
		N    [3]int32
		Flag bool
	}
	xs := Make[plain](&a, 10_000)
	fs := Make[float64](&a, 3)
	if len(xs) != 10_000 || len(fs) != 3 {
		t.Fatalf("lengths %d and %d, want 10000 and 3", len(xs), len(fs))
	}
	for i := range xs {
		if xs[i] != (plain{}) {
			t.Fatalf("element %d is %+v, want zero", i, xs[i])
		}
		xs[i] = plain{X: float64(i), N: [3]int32{int32(i)}, Flag: true}
	}
	for i := range xs {
		if xs[i].X != float64(i) || xs[i].N[0] != int32(i) || !xs[i].Flag {
			t.Fatalf("element %d reads back as %+v", i, xs[i])
		}
	}
	if got, want := a.Size(), 10_000*24+3*8; got != want {
		t.Errorf("Size %d, want %d", got, want)
	}
	a.Free()
	if a.Size() != 0 {
		t.Errorf("Size %d after Free, want 0", a.Size())
	}
	if b := a.Bytes(0); b != nil {
		t.Errorf("Bytes(0) = %v, want nil", b)
	}
}

// TestMakeRefusesPointers: a type the collector would have to scan is
// refused, however deep its pointer.
func TestMakeRefusesPointers(t *testing.T) {
	type inner struct{ Name string }
	for name, lend := range map[string]func(*Arena){
		"pointer": func(a *Arena) { Make[*int](a, 1) },
		"string":  func(a *Arena) { Make[string](a, 1) },
		"slice":   func(a *Arena) { Make[[]byte](a, 1) },
		"nested":  func(a *Arena) { Make[[2]struct{ In inner }](a, 1) },
		"any":     func(a *Arena) { Make[any](a, 1) },
	} {
		func() {
			var a Arena
			defer a.Free()
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Make did not panic", name)
				}
			}()
			lend(&a)
		}()
	}
}

// TestArenaIsOutsideTheHeap: a large loan does not grow the Go heap where
// the system has anonymous mappings.
func TestArenaIsOutsideTheHeap(t *testing.T) {
	if _, err := mapMemory(1); err != nil {
		t.Skipf("no anonymous mappings here: %v", err)
	}
	before := heapInUse()
	var a Arena
	defer a.Free()
	xs := Make[float64](&a, 1<<20)
	for i := range xs {
		xs[i] = 1
	}
	if grown := heapInUse() - before; grown > 1<<20 {
		t.Errorf("the heap grew by %d bytes for an 8 MiB loan", grown)
	}
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
