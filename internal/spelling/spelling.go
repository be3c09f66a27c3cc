// Package spelling finds the names a user probably meant when a name they
// typed is unknown (a flag, a command, a scenario, an SLO figure): the
// "did you mean" of every error about a misspelt name.
package spelling

import (
	"slices"
	"strings"
)

// MaxDistance is the largest edit distance at which Nearest still offers a
// name: two typos, or one letter swapped.
const MaxDistance = 2

// Nearest returns the known names within MaxDistance edits of typed
// (ignoring case), and those typed is a prefix of, nearest first and then
// in the order given; at most three. None when typed is known.
func Nearest(typed string, known []string) []string {
	if slices.Contains(known, typed) {
		return nil
	}
	type candidate struct {
		name string
		d    int
	}
	var found []candidate
	lower := strings.ToLower(typed)
	for _, k := range known {
		d := Distance(lower, strings.ToLower(k))
		if d > MaxDistance && (typed == "" || !strings.HasPrefix(k, typed)) {
			continue
		}
		found = append(found, candidate{k, d})
	}
	slices.SortStableFunc(found, func(a, b candidate) int { return a.d - b.d })
	var out []string
	for _, c := range found[:min(len(found), 3)] {
		out = append(out, c.name)
	}
	return out
}

// Distance is the Levenshtein distance between a and b, in runes.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Phrase is the "; did you mean X or Y?" to append to an error about an
// unknown name, with prefix before each name (-- for a flag); "" when
// there is nothing to suggest.
func Phrase(prefix string, names []string) string {
	if len(names) == 0 {
		return ""
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = prefix + n
	}
	return "; did you mean " + strings.Join(quoted, " or ") + "?"
}
