package spelling

import (
	"slices"
	"testing"
)

func TestNearest(t *testing.T) {
	flags := []string{"url", "scenario", "concurrency", "requests", "rate", "no-probe"}
	for _, tc := range []struct {
		typed string
		want  []string
	}{
		{"urll", []string{"url"}},
		{"concurency", []string{"concurrency"}},
		{"scenraio", []string{"scenario"}},
		{"Rate", []string{"rate"}},
		{"no-", []string{"no-probe"}},
		{"url", nil},
		{"xyzzy", nil},
		{"", nil},
	} {
		if got := Nearest(tc.typed, flags); !slices.Equal(got, tc.want) {
			t.Errorf("Nearest(%q) = %q, want %q", tc.typed, got, tc.want)
		}
	}
	if got := Nearest("cap", []string{"capacity", "cat"}); !slices.Equal(got, []string{"cat", "capacity"}) {
		t.Errorf("Nearest(cap) = %q, want the nearer first", got)
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"ttfp", "tftp", 2}, {"é", "e", 1}} {
		if got := Distance(tc.a, tc.b); got != tc.d || Distance(tc.b, tc.a) != tc.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

func TestPhrase(t *testing.T) {
	if got := Phrase("--", []string{"url", "rate"}); got != "; did you mean --url or --rate?" {
		t.Errorf("Phrase = %q", got)
	}
	if Phrase("--", nil) != "" {
		t.Error("Phrase of nothing is not empty")
	}
}
