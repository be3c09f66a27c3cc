// Package offheap lends memory that the Go garbage collector neither scans
// nor counts: anonymous mappings from the operating system where it has
// them (Linux, macOS and the BSDs), ordinary slices elsewhere.
//
// A run keeps a record of every finished request in compact form. On the Go
// heap such a store costs about twice its size in resident memory, because
// the collector lets the heap grow to twice what is live before it runs
// (GOGC=100), and it cannot return a scratch buffer's pages to the operating
// system before the next collection. Memory from an Arena costs what is
// written to it: a page becomes resident when it is first touched, and Free
// gives every page back at once.
//
// Only values without pointers may live there (bytes, numbers): the
// collector does not see this memory, so a pointer kept in it would not
// keep its target alive. The views this package offers are of such types.
package offheap

import (
	"fmt"
	"reflect"
	"unsafe"
)

// An Arena owns the regions it lends until Free. It is not safe for
// concurrent use.
type Arena struct {
	regions []region
}

// region is one mapping (or, where there is none, one slice).
type region struct {
	mem    []byte
	mapped bool // mem came from mapMemory and goes back with unmapMemory
}

// Bytes returns n zeroed bytes owned by a until a.Free. A request the
// operating system refuses is served from the Go heap instead, so that a
// run does not fail for want of a mapping.
func (a *Arena) Bytes(n int) []byte {
	if n <= 0 {
		return nil
	}
	mem, err := mapMemory(n)
	r := region{mem: mem, mapped: err == nil}
	if err != nil {
		r.mem = make([]byte, n)
	}
	a.regions = append(a.regions, r)
	return r.mem[:n:n]
}

// Make returns n zero values of T owned by a until a.Free. T must hold no
// pointers (strings, slices, maps and interfaces are pointers): Make panics
// otherwise, as the collector would not see them.
func Make[T any](a *Arena, n int) []T {
	var zero T
	if t := reflect.TypeOf(zero); t == nil || hasPointers(t) {
		panic(fmt.Sprintf("offheap: %v holds pointers", t))
	}
	size := int(unsafe.Sizeof(zero))
	if n <= 0 || size == 0 {
		return nil
	}
	b := a.Bytes(n * size)
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// hasPointers reports whether a value of t holds a pointer the collector
// would have to see.
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return true // pointers, strings, slices, maps, channels, funcs, interfaces; uintptr too, to be safe
}

// Free gives back every region; nothing a lent may be used afterwards.
func (a *Arena) Free() {
	for _, r := range a.regions {
		r.free()
	}
	a.regions = nil
}

// Size is the number of bytes a has lent and not given back (address space:
// only the pages written to are resident).
func (a *Arena) Size() int {
	n := 0
	for _, r := range a.regions {
		n += len(r.mem)
	}
	return n
}

func (r region) free() {
	if r.mapped {
		unmapMemory(r.mem)
	}
}
