package exposition

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzValidate holds the scanner to three properties on any input: it
// never panics, every violation names a line of the input, and whatever it
// accepts as text format, expfmt's text parser accepts too.
func FuzzValidate(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(uint8(s.format), s.body)
	}
	f.Fuzz(func(t *testing.T, sel uint8, body []byte) {
		format := Format(sel % 2)
		res := Validate(body, format)
		for _, v := range res.Violations {
			if v.Line < 1 || v.Line > res.Lines || v.Rule == "" {
				t.Fatalf("violation outside the input's %d lines: %+v", res.Lines, v)
			}
		}
		if format == Text && len(res.Violations) == 0 {
			if err := expfmtAccepts(body); err != nil {
				t.Fatalf("accepted, but expfmt says: %v\n%q", err, body)
			}
		}
	})
}

// maxSeed is the size FuzzValidate's seeds aim at. The fuzzer minimizes
// every input that finds new code before it goes on, and on a loaded
// machine minimizing a mutation of a 7 KB exposition took it the whole
// run; so the real-world expositions go in as pieces of whole families,
// and a family over twice this size stays out (the corpus' small cases
// have histograms too).
const maxSeed = 512

type fuzzSeed struct {
	format Format
	body   []byte
}

// fuzzSeeds is the seed corpus of FuzzValidate: the real-world expositions
// in pieces, and every invalid corpus case.
func fuzzSeeds(t testing.TB) []fuzzSeed {
	var seeds []fuzzSeed
	for path, format := range realWorld(t) {
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, piece := range pieces(body, format) {
			if len(piece) <= 2*maxSeed {
				seeds = append(seeds, fuzzSeed{format, piece})
			}
		}
	}
	invalid, _ := filepath.Glob(filepath.Join(corpus, "invalid", "*"))
	for _, path := range invalid {
		if filepath.Base(path) == "EXPECT" {
			continue
		}
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, fuzzSeed{formatOf(t, path), body})
	}
	return seeds
}

var eofLine = []byte("# EOF\n")

// pieces splits an exposition at its family boundaries (a metadata line
// after a sample) into expositions of whole families, each at most
// maxSeed bytes unless one family alone is longer. An OpenMetrics piece
// ends in its own # EOF.
func pieces(body []byte, f Format) [][]byte {
	if f == OpenMetrics {
		if i := bytes.LastIndex(body, eofLine[:5]); i >= 0 && (i == 0 || body[i-1] == '\n') {
			body = body[:i]
		}
	}
	var families [][]byte
	start, afterSample := 0, false
	for i := 0; i < len(body); {
		end := len(body)
		if nl := bytes.IndexByte(body[i:], '\n'); nl >= 0 {
			end = i + nl + 1
		}
		meta := body[i] == '#'
		if meta && afterSample {
			families = append(families, body[start:i])
			start = i
		}
		afterSample = !meta
		i = end
	}
	families = append(families, body[start:])

	var out [][]byte
	var cur []byte
	for _, fam := range families {
		if len(cur) > 0 && len(cur)+len(fam) > maxSeed {
			out = append(out, cur)
			cur = nil
		}
		cur = append(cur, fam...)
	}
	out = append(out, cur)
	if f == OpenMetrics {
		for i := range out {
			out[i] = append(out[i], eofLine...)
		}
	}
	return out
}

// TestFuzzSeedsAreSmall: FuzzValidate's seeds stay small, and the pieces
// of each real-world exposition hold all of its lines, in order.
func TestFuzzSeedsAreSmall(t *testing.T) {
	for _, s := range fuzzSeeds(t) {
		if len(s.body) > 2*maxSeed {
			t.Errorf("a %d-byte seed (%s): make it smaller\n%.200s", len(s.body), s.format, s.body)
		}
	}
	for path, format := range realWorld(t) {
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var joined []byte
		for _, p := range pieces(body, format) {
			if format == OpenMetrics {
				p = bytes.TrimSuffix(p, eofLine)
			}
			joined = append(joined, p...)
		}
		want := body
		if format == OpenMetrics {
			want = body[:bytes.LastIndex(body, eofLine[:5])]
		}
		if !bytes.Equal(joined, want) {
			t.Errorf("%s: the pieces do not add up to the exposition", path)
		}
	}
}
