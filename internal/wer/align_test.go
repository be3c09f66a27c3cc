package wer

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/sclite_golden.txt from sclite's counts (needs sclite)")

func words(s string) []string { return strings.Fields(s) }

// TestWordsByHand: alignments worked out by hand with sclite's rules.
func TestWordsByHand(t *testing.T) {
	for _, tc := range []struct {
		ref, hyp   string
		c, s, d, i int
	}{
		{"", "", 0, 0, 0, 0},
		{"a b c", "", 0, 0, 3, 0},
		{"", "a b", 0, 0, 0, 2},
		{"a b c d", "a x c", 2, 1, 1, 0},
		// Two substitutions (8) lose to a deletion and an insertion (6).
		{"the cat sat on the mat", "the cat sat the hat mat", 5, 0, 1, 1},
		// Three substitutions (12) tie with two deletions and two
		// insertions (12): the substitution wins the tie.
		{"a b c", "x y z", 0, 3, 0, 0},
		// A shift: one deletion and one insertion (6), not six
		// substitutions (24).
		{"a b c d e f", "b c d e f g", 5, 0, 1, 1},
	} {
		var a Aligner
		got, err := a.Words(words(tc.ref), words(tc.hyp))
		want := Counts{tc.c, tc.s, tc.d, tc.i}
		if err != nil || got != want {
			t.Errorf("%q vs %q: %v, %v; want %v", tc.ref, tc.hyp, got, err, want)
		}
	}
}

// TestMoreErrorsThanLevenshtein: a pair where sclite's weights count more
// errors than the fewest edits.
func TestMoreErrorsThanLevenshtein(t *testing.T) {
	// Levenshtein: 4 (three substitutions and a deletion, cost 15 in
	// sclite's weights); sclite's choices at tied cells trace three
	// deletions and two insertions, also cost 15.
	ref, hyp := words("a a a b c"), words("b c c b")
	var a Aligner
	got, _ := a.Words(ref, hyp)
	if lev := levenshtein(ref, hyp); got.Errors() <= lev {
		t.Errorf("%v: %d errors, Levenshtein %d; this pair was chosen for sclite to count more", got, got.Errors(), lev)
	}
}

func TestRate(t *testing.T) {
	for _, tc := range []struct {
		c    Counts
		rate float64
		ok   bool
	}{
		{Counts{Correct: 3, Substitutions: 1}, 0.25, true},
		{Counts{Correct: 1, Insertions: 3}, 3, true},
		{Counts{}, 0, true},
		{Counts{Insertions: 2}, 0, false},
	} {
		if r, ok := tc.c.Rate(); r != tc.rate || ok != tc.ok {
			t.Errorf("%v: rate %v %v, want %v %v", tc.c, r, ok, tc.rate, tc.ok)
		}
	}
	if got := (Counts{1, 2, 3, 4}).Add(Counts{10, 20, 30, 40}); got != (Counts{11, 22, 33, 44}) {
		t.Errorf("Add: %v", got)
	}
}

func TestScore(t *testing.T) {
	var a Aligner
	w, c, err := a.Score("I have 23 apples.", "i have twenty-three apple")
	if err != nil || w != (Counts{Correct: 4, Substitutions: 1}) || c != (Counts{Correct: 21, Deletions: 1}) {
		t.Errorf("words %v chars %v err %v", w, c, err)
	}
}

func TestTooLong(t *testing.T) {
	var a Aligner
	long := make([]string, MaxTokens+1)
	for i := range long {
		long[i] = "w"
	}
	if _, err := a.Words(long, words("a")); !errors.Is(err, ErrTooLong) {
		t.Errorf("words: %v", err)
	}
	if _, err := a.Chars(words("a"), []string{strings.Repeat("x", MaxTokens+1)}); !errors.Is(err, ErrTooLong) {
		t.Errorf("chars: %v", err)
	}
}

// TestAlignerReuseAllocatesNothing: once its rows are big enough, an
// Aligner allocates nothing per alignment.
func TestAlignerReuseAllocatesNothing(t *testing.T) {
	var a Aligner
	ref, hyp := words("the quick brown fox jumps over the lazy dog"), words("a quick brown fox jumped over lazy dogs")
	if _, err := a.Chars(ref, hyp); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(20, func() { a.Words(ref, hyp); a.Chars(ref, hyp) }); n != 0 {
		t.Errorf("%v allocations per alignment", n)
	}
}

// levenshtein is the plain unit-cost edit distance, written independently
// of align as a comparison.
func levenshtein(ref, hyp []string) int {
	d := make([]int, len(hyp)+1)
	for j := range d {
		d[j] = j
	}
	for i := 1; i <= len(ref); i++ {
		diag := d[0]
		d[0] = i
		for j := 1; j <= len(hyp); j++ {
			up := d[j]
			sub := diag
			if ref[i-1] != hyp[j-1] {
				sub++
			}
			d[j] = min(sub, up+1, d[j-1]+1)
			diag = up
		}
	}
	return d[len(hyp)]
}

// golden is one pair with sclite's word and character counts.
type golden struct {
	ref, hyp     string
	words, chars Counts
}

const goldenPath = "testdata/sclite_golden.txt"

// TestGolden: the arithmetic against counts sclite gave on a fixed table
// (testdata/sclite_golden.txt, written by TestSclite -update-golden), so it
// is checked where sclite is not installed.
func TestGolden(t *testing.T) {
	table, err := readGolden(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(table) < 50 {
		t.Fatalf("%s: %d pairs, want at least 50", goldenPath, len(table))
	}
	checkPairs(t, table)
}

func checkPairs(t *testing.T, table []golden) {
	t.Helper()
	var a Aligner
	for i, g := range table {
		w, err1 := a.Words(words(g.ref), words(g.hyp))
		c, err2 := a.Chars(words(g.ref), words(g.hyp))
		if err1 != nil || err2 != nil || w != g.words || c != g.chars {
			t.Errorf("pair %d %q vs %q: words %v chars %v (%v %v); sclite: words %v chars %v", i, g.ref, g.hyp, w, c, err1, err2, g.words, g.chars)
		}
	}
}

// readGolden reads lines "ref|hyp|C S D I|C S D I" (words, then chars).
func readGolden(path string) ([]golden, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var table []golden
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		fields := strings.Split(sc.Text(), "|")
		if len(fields) != 4 {
			return nil, fmt.Errorf("%s:%d: %d fields, want 4", path, line, len(fields))
		}
		g := golden{ref: fields[0], hyp: fields[1]}
		if _, err := fmt.Sscan(fields[2], &g.words.Correct, &g.words.Substitutions, &g.words.Deletions, &g.words.Insertions); err != nil {
			return nil, fmt.Errorf("%s:%d: words: %w", path, line, err)
		}
		if _, err := fmt.Sscan(fields[3], &g.chars.Correct, &g.chars.Substitutions, &g.chars.Deletions, &g.chars.Insertions); err != nil {
			return nil, fmt.Errorf("%s:%d: chars: %w", path, line, err)
		}
		table = append(table, g)
	}
	return table, sc.Err()
}

func writeGolden(path string, table []golden) error {
	var b strings.Builder
	b.WriteString("# reference|hypothesis|words C S D I|characters C S D I, counted by sclite (sctk 2.4.10); rewrite with: go test ./internal/wer -run TestSclite -update-golden\n")
	for _, g := range table {
		w, c := g.words, g.chars
		fmt.Fprintf(&b, "%s|%s|%d %d %d %d|%d %d %d %d\n", g.ref, g.hyp, w.Correct, w.Substitutions, w.Deletions, w.Insertions,
			c.Correct, c.Substitutions, c.Deletions, c.Insertions)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// randomPairs returns n seeded pairs over a small vocabulary, so that
// words repeat and alignments have ties; half are edits of the reference,
// half unrelated.
func randomPairs(n int) [][2][]string {
	rng := rand.New(rand.NewPCG(29, 1))
	vocab := words("a an the cat hat sat on mat at it is tea eat ate")
	pick := func(k int) []string {
		w := make([]string, k)
		for i := range w {
			w[i] = vocab[rng.IntN(len(vocab))]
		}
		return w
	}
	pairs := make([][2][]string, n)
	for p := range pairs {
		ref := pick(1 + rng.IntN(12))
		var hyp []string
		if p%2 == 0 {
			hyp = pick(rng.IntN(13))
		} else {
			for _, w := range ref {
				switch rng.IntN(6) {
				case 0: // deleted
				case 1:
					hyp = append(hyp, vocab[rng.IntN(len(vocab))])
				case 2:
					hyp = append(hyp, w, vocab[rng.IntN(len(vocab))])
				default:
					hyp = append(hyp, w)
				}
			}
		}
		pairs[p] = [2][]string{ref, hyp}
	}
	return pairs
}
