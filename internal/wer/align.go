// Package wer scores a transcript against the text that was asked for: word
// error rate (WER) and character error rate (CER), with a stated text
// normalization and the alignment of NIST's sclite, so that a figure
// reported here is the figure sclite reports on the same normalized text.
//
// # Alignment
//
// The edit distance is not plain Levenshtein. sclite weights a substitution
// 4 and an insertion or a deletion 3 (a correct word 0), and takes at every
// cell of the dynamic programme the substitution (or match) when it costs no
// more than either alternative, else the deletion when it costs strictly
// less than the insertion, else the insertion. The counts are those of the
// path these choices trace back from the end. Because a deletion and an
// insertion (6) cost less than two substitutions (8), and because ties are
// broken cell by cell, sclite sometimes reports more errors than the fewest
// edits: "a a a b c" against "b c c b" is four edits (three substitutions
// and a deletion, weighted 15) but sclite's path, weighted 15 as well, is
// three deletions and two insertions. On random pairs over a small
// vocabulary this happens to a few pairs in a thousand; the tests compare
// the counts with sclite's own.
//
// The programme keeps two rows of cells, each with its path's cost and
// counts, so memory grows with the hypothesis length only and an Aligner
// reused across requests allocates nothing once its rows are big enough.
package wer

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// sclite's weights.
const (
	costSub    = 4
	costInsDel = 3
)

// MaxTokens bounds each side of an alignment: the time is the product of
// the two lengths, and a transcript comes from a server. 20,000 characters
// is over half an hour of speech.
const MaxTokens = 20000

// ErrTooLong is wrapped by the error of an alignment over MaxTokens.
var ErrTooLong = errors.New("wer: text too long to align")

// Counts are the outcome of one alignment (or a sum of several).
type Counts struct {
	Correct       int `json:"correct"`
	Substitutions int `json:"substitutions"`
	Deletions     int `json:"deletions"`
	Insertions    int `json:"insertions"`
}

// Errors returns substitutions + deletions + insertions.
func (c Counts) Errors() int { return c.Substitutions + c.Deletions + c.Insertions }

// RefLen returns the reference length: correct + substitutions + deletions.
func (c Counts) RefLen() int { return c.Correct + c.Substitutions + c.Deletions }

// Rate returns Errors / RefLen, sclite's error rate (it can exceed 1 when
// the hypothesis inserts more than the reference has). An empty reference
// gives 0 when the hypothesis is empty too, and ok false otherwise: the rate
// is undefined, not infinite.
func (c Counts) Rate() (rate float64, ok bool) {
	if c.RefLen() == 0 {
		return 0, c.Insertions == 0
	}
	return float64(c.Errors()) / float64(c.RefLen()), true
}

// Add returns the sum of c and o, for a corpus rate over many requests
// (the sum of errors over the sum of reference lengths, as sclite's summary).
func (c Counts) Add(o Counts) Counts {
	return Counts{c.Correct + o.Correct, c.Substitutions + o.Substitutions, c.Deletions + o.Deletions, c.Insertions + o.Insertions}
}

func (c Counts) String() string {
	return fmt.Sprintf("C=%d S=%d D=%d I=%d", c.Correct, c.Substitutions, c.Deletions, c.Insertions)
}

// cell is one cell of the programme: its path's cost and counts. Correct
// is not stored: it is the reference tokens consumed less S and D.
type cell struct {
	cost          int
	sub, del, ins int32
}

// Aligner aligns token sequences with sclite's weights. The zero value is
// ready; it keeps its rows between calls. It is not safe for concurrent use.
type Aligner struct {
	prev, cur []cell
	refRunes  []rune
	hypRunes  []rune
}

// Score normalizes both texts (Normalize) and aligns the hypothesis against
// the reference by words and by characters.
func (a *Aligner) Score(reference, hypothesis string) (words, chars Counts, err error) {
	ref, hyp := Normalize(reference), Normalize(hypothesis)
	if words, err = a.Words(ref, hyp); err != nil {
		return Counts{}, Counts{}, err
	}
	if chars, err = a.Chars(ref, hyp); err != nil {
		return Counts{}, Counts{}, err
	}
	return words, chars, nil
}

// Words aligns hyp against ref word by word.
func (a *Aligner) Words(ref, hyp []string) (Counts, error) {
	if err := checkLen("words", len(ref), len(hyp)); err != nil {
		return Counts{}, err
	}
	return align(a, len(ref), len(hyp), func(i, j int) bool { return ref[i] == hyp[j] }), nil
}

func checkLen(what string, n, m int) error {
	if n > MaxTokens || m > MaxTokens {
		return fmt.Errorf("%w: %d reference and %d hypothesis %s (at most %d each)", ErrTooLong, n, m, what, MaxTokens)
	}
	return nil
}

// Chars aligns the characters (runes) of the words of hyp against those of
// ref, word boundaries dropped, as sclite's -c option does.
func (a *Aligner) Chars(ref, hyp []string) (Counts, error) {
	if err := checkLen("characters", runeCount(ref), runeCount(hyp)); err != nil {
		return Counts{}, err
	}
	a.refRunes = appendRunes(a.refRunes[:0], ref)
	a.hypRunes = appendRunes(a.hypRunes[:0], hyp)
	r, h := a.refRunes, a.hypRunes
	return align(a, len(r), len(h), func(i, j int) bool { return r[i] == h[j] }), nil
}

func runeCount(words []string) int {
	n := 0
	for _, w := range words {
		n += utf8.RuneCountInString(w)
	}
	return n
}

func appendRunes(dst []rune, words []string) []rune {
	for _, w := range words {
		for _, r := range w {
			dst = append(dst, r)
		}
	}
	return dst
}

// align runs the programme over n reference and m hypothesis tokens; eq
// tells whether reference token i equals hypothesis token j.
func align(a *Aligner, n, m int, eq func(i, j int) bool) Counts {
	if cap(a.prev) < m+1 {
		a.prev, a.cur = make([]cell, m+1), make([]cell, m+1)
	}
	prev, cur := a.prev[:m+1], a.cur[:m+1]
	// Row 0: the hypothesis so far is all insertions.
	for j := range prev {
		prev[j] = cell{cost: costInsDel * j, ins: int32(j)}
	}
	for i := 1; i <= n; i++ {
		cur[0] = cell{cost: costInsDel * i, del: int32(i)}
		for j := 1; j <= m; j++ {
			diag := prev[j-1]
			if !eq(i-1, j-1) {
				diag.cost += costSub
				diag.sub++
			}
			del := prev[j]
			del.cost += costInsDel
			del.del++
			ins := cur[j-1]
			ins.cost += costInsDel
			ins.ins++
			switch {
			case diag.cost <= del.cost && diag.cost <= ins.cost:
				cur[j] = diag
			case del.cost < ins.cost:
				cur[j] = del
			default:
				cur[j] = ins
			}
		}
		prev, cur = cur, prev
	}
	end := prev[m]
	return Counts{
		Correct:       n - int(end.sub) - int(end.del),
		Substitutions: int(end.sub),
		Deletions:     int(end.del),
		Insertions:    int(end.ins),
	}
}
