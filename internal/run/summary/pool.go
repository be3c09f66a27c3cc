package summary

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"

	"github.com/omnibench/omnibench/internal/run/offheap"
	"github.com/omnibench/omnibench/stats"
)

// A pool holds one per-event distribution of a run (text gaps, stamp
// delays: tens of values per request) so that its figures stay exact, in
// bounded memory however long the run:
//
//   - its first max values are kept in memory (the Set's arena: only the
//     part written to is resident), 8 bytes and a ramp bit each;
//   - every further value goes to a temporary file, 9 bytes each (spill),
//     which the figures read back in a few passes (stats.SummarizeStream,
//     exact selection of the order statistics the percentiles need), so
//     that the percentiles are those of sorting every value;
//   - only when that file cannot be created or written does the pool
//     become a uniform sample of all the values (Vitter's algorithm R over
//     the values in memory, fed again with what the file held), and the
//     summary warns, giving the reason.
type pool struct {
	name   string    // the figure and what it is of, for the warning
	values []float64 // len: the values in memory
	ramp   []uint64  // bit i: values[i] is of a ramp-phase request
	ramps  int       // values in memory of ramp-phase requests
	seen   int       // values added
	max    int       // values kept in memory
	rng    *rand.Rand
	dir    string // where the spill file goes; "" is os.TempDir()

	spill *spill
	// spillErr is why the values past max could not go to the file: from
	// then on the pool is a sample.
	spillErr error
}

// add takes one value of the Set s (whose arena and lifetime the pool's
// memory and file follow).
func (p *pool) add(s *Set, v float64, ramp bool) {
	if p.values == nil {
		p.values = offheap.Make[float64](s.arena, max(p.max, 1))[:0]
		p.ramp = offheap.Make[uint64](s.arena, max(p.max, 1)/64+1)
	}
	if len(p.values) < p.max {
		p.seen++
		p.values = append(p.values, v)
		p.setRamp(len(p.values)-1, ramp)
		return
	}
	if p.spillErr == nil && p.spill == nil {
		p.spill, p.spillErr = newSpill(s.arena, p.dir)
		if p.spillErr == nil {
			// The file goes when the Set does (s is not reachable from it).
			runtime.AddCleanup(s, (*spill).close, p.spill)
		}
	}
	if p.spillErr != nil {
		p.sample(v, ramp)
		return
	}
	p.seen++
	if err := p.spill.add(v, ramp); err != nil {
		p.fallBack(err) // which samples v too: it is pending in the block
	}
}

// setRamp sets the ramp bit of the value in memory at j.
func (p *pool) setRamp(j int, ramp bool) {
	if was := p.ramp[j/64]&(1<<(j%64)) != 0; was != ramp {
		p.ramp[j/64] ^= 1 << (j % 64)
		p.ramps += b2i(ramp) - b2i(was)
	}
}

// sample is one step of the reservoir sampling of a pool whose values no
// longer all fit.
func (p *pool) sample(v float64, ramp bool) {
	p.seen++
	if j := p.rng.IntN(p.seen); j < len(p.values) {
		p.values[j] = v
		p.setRamp(j, ramp)
	}
}

// fallBack turns a pool whose file failed (err) into a sample: what the
// file holds goes through the reservoir as it would have, then the file
// is given up.
func (p *pool) fallBack(err error) {
	sp := p.spill
	p.spill, p.spillErr = nil, err
	p.seen = len(p.values)
	replayed := 0
	readErr := sp.each(func(v float64, ramp bool) {
		p.sample(v, ramp)
		replayed++
	})
	if readErr != nil {
		// Values that could not be read back are counted, not sampled.
		p.seen += sp.n - replayed
		p.spillErr = fmt.Errorf("%w; then %w", err, readErr)
	}
	sp.close()
}

// sampled reports whether the pool is a sample rather than every value.
func (p *pool) sampled() bool { return p.seen > len(p.values)+p.spilled() }

func (p *pool) spilled() int {
	if p.spill == nil {
		return 0
	}
	return p.spill.n
}

// sampleWarning says that the figures are a sample's, and why.
func (p *pool) sampleWarning() string {
	return fmt.Sprintf("%s: %d values, more than the %d kept in memory: its figures are from a uniform random sample of them, "+
		"as the rest could not be written to a temporary file (%v)", p.name, p.seen, len(p.values), p.spillErr)
}

// offHeapBytes is the memory the pool fills outside the Go heap.
func (p *pool) offHeapBytes() int {
	n := 8*len(p.values) + (len(p.values)+7)/8
	if p.spill != nil {
		n += len(p.spill.buf) + len(p.spill.read)
	}
	return n
}

// each calls yield with every value, ramp ones only with includeRamp, in the
// order added; it returns the error of reading the file back, which cut the
// values short.
func (p *pool) each(includeRamp bool, yield func(float64)) error {
	for i, v := range p.values {
		if includeRamp || p.ramps == 0 || p.ramp[i/64]&(1<<(i%64)) == 0 {
			yield(v)
		}
	}
	if p.spill == nil {
		return nil
	}
	return p.spill.each(func(v float64, ramp bool) {
		if includeRamp || !ramp {
			yield(v)
		}
	})
}

// summary describes the pool's values (ramp ones only with includeRamp),
// with their population standard deviation, in the working memory of sc.
// err is the file's read error: the figures are then not the values'.
func (p *pool) summary(includeRamp bool, percentiles []float64, sc *scratch) (sum stats.Summary, populationStd float64, err error) {
	each := func(yield func(float64)) {
		if e := p.each(includeRamp, yield); e != nil && err == nil {
			err = e
		}
	}
	sum, populationStd = stats.SummarizeStream(each, percentiles, sc.words(poolWorkWords))
	if err != nil {
		return stats.Summary{}, math.NaN(), fmt.Errorf("reading back the %s past the %d kept in memory: %w", p.name, len(p.values), err)
	}
	return sum, populationStd, nil
}

// poolWorkWords is the working memory of a pool's figures (8 bytes a word,
// outside the Go heap): a pool held in memory is collected and sorted in
// one pass, a larger one narrowed a 16-bit digit at a time, several
// buckets per pass.
const poolWorkWords = 4 * stats.StreamWorkWords

// spill is the temporary file of a pool's values past those in memory:
// each value as 8 bytes (its float64 bits, little-endian) and a byte that
// is 1 for a ramp-phase request's, written in blocks of spillBlock bytes.
type spill struct {
	f    *os.File
	path string // to remove at close: "" once removed (at creation, where the OS allows it)
	buf  []byte // a block; len: the pending bytes
	read []byte // a block to read back into, made at the first read
	// n counts the values, written or pending; written is the file's size.
	n       int
	written int64
	arena   *offheap.Arena
}

const (
	spillRecord = 9
	spillBlock  = spillRecord * 7281 // about 64 KiB
)

// newSpill creates the file in dir ("" for the system's temporary
// directory) and removes its name at once, so that nothing is left behind
// whatever happens to the process, where the OS allows that while the file
// is open; elsewhere close removes it.
func newSpill(arena *offheap.Arena, dir string) (*spill, error) {
	f, err := os.CreateTemp(dir, "omnibench-values-*")
	if err != nil {
		return nil, fmt.Errorf("creating the temporary file: %w", err)
	}
	sp := &spill{f: f, path: f.Name(), buf: offheap.Make[byte](arena, spillBlock)[:0], arena: arena}
	if os.Remove(sp.path) == nil {
		sp.path = ""
	}
	return sp, nil
}

// add appends one value, writing the block when it is full.
func (sp *spill) add(v float64, ramp bool) error {
	sp.buf = binary.LittleEndian.AppendUint64(sp.buf, math.Float64bits(v))
	sp.buf = append(sp.buf, byte(b2i(ramp)))
	sp.n++
	if len(sp.buf) < spillBlock {
		return nil
	}
	if _, err := sp.f.Write(sp.buf); err != nil {
		// The block stays pending: a replay (pool.fallBack) reads it.
		return fmt.Errorf("writing %s: %w", sp.f.Name(), err)
	}
	sp.written += int64(len(sp.buf))
	sp.buf = sp.buf[:0]
	return nil
}

// each calls yield with every value in the order added: the file's, read
// back a block at a time, then the pending ones. It returns the read error
// that cut them short.
func (sp *spill) each(yield func(v float64, ramp bool)) error {
	if sp.read == nil {
		sp.read = offheap.Make[byte](sp.arena, spillBlock)
	}
	for off := int64(0); off < sp.written; {
		block := sp.read[:min(int64(spillBlock), sp.written-off)]
		if n, err := sp.f.ReadAt(block, off); n < len(block) {
			return fmt.Errorf("reading %s at byte %d: %w", sp.f.Name(), off+int64(n), err)
		}
		records(block, yield)
		off += int64(len(block))
	}
	records(sp.buf, yield)
	return nil
}

// records calls yield with each value of whole records in b.
func records(b []byte, yield func(v float64, ramp bool)) {
	for ; len(b) >= spillRecord; b = b[spillRecord:] {
		yield(math.Float64frombits(binary.LittleEndian.Uint64(b)), b[8] != 0)
	}
}

// close closes the file and removes it if its name is still there.
func (sp *spill) close() {
	sp.f.Close()
	if sp.path != "" {
		os.Remove(sp.path)
		sp.path = ""
	}
}
