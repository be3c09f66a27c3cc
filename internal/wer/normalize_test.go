package wer

import (
	"strings"
	"testing"
	"unicode"
)

func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Hello, World!", "hello world"},
		{"Don't stop—it's 'fine'.", "don't stop it's fine"},
		{"Don\u2019t", "don't"},
		{"rock 'n' roll", "rock n roll"},
		{"well-known state-of-the-art", "well known state of the art"},
		{"0 7 10 13 20 21 99", "zero seven ten thirteen twenty twenty one ninety nine"},
		{"100 101 115 999", "one hundred one hundred one one hundred fifteen nine hundred ninety nine"},
		{"1,250 and 1250", "one thousand two hundred fifty and one thousand two hundred fifty"},
		{"999999", "nine hundred ninety nine thousand nine hundred ninety nine"},
		{"100000 20000", "one hundred thousand twenty thousand"},
		{"1000000", "one zero zero zero zero zero zero"},
		{"007", "zero zero seven"},
		{"3.05 and 0.5", "three point zero five and zero point five"},
		{"1st 2nd 3rd 4th 5th 8th 9th 12th 20th 21st 100th", "first second third fourth fifth eighth ninth twelfth twentieth twenty first one hundredth"},
		{"It ends in 1999.", "it ends in one thousand nine hundred ninety nine"},
		{"mp3 files, 5%", "mp three files five"},
		{"12,34", "twelve thirty four"},
		{"e.g. U.S.", "e g u s"},
		{"ÉCOLE Straße", "école straße"},
		{"  ", ""},
		{"'quoted' ''", "quoted"},
	} {
		if got := strings.Join(Normalize(tc.in), " "); got != tc.want {
			t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzNormalize: any text gives non-empty words of letters and inner
// apostrophes, normalizing the joined words changes nothing, and scoring
// the text against itself and against a fixed sentence gives counts that
// add up to both lengths.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"Hello, 21st world!", "1,234.5th", "don't'", "ÀÉ ß 9,999,999", "\xff\xfe12"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words := Normalize(s)
		checkScores(t, s, words)
		for _, w := range words {
			if w == "" || strings.HasPrefix(w, "'") || strings.HasSuffix(w, "'") {
				t.Fatalf("word %q in %q", w, words)
			}
			for _, r := range w {
				if !(unicode.IsLetter(r) || r == '\'') {
					t.Fatalf("word %q has %q", w, r)
				}
			}
		}
		again := Normalize(strings.Join(words, " "))
		if strings.Join(again, " ") != strings.Join(words, " ") {
			t.Fatalf("not idempotent: %q then %q", words, again)
		}
	})
}

func checkScores(t *testing.T, s string, words []string) {
	var a Aligner
	if w, c, err := a.Score(s, s); err != nil || w.Errors() != 0 || c.Errors() != 0 || w.Correct != len(words) {
		t.Fatalf("%q against itself: words %v chars %v err %v", s, w, c, err)
	}
	other := Normalize("the 3 cats sat on a mat")
	w, err := a.Words(other, words)
	if err != nil || w.Correct+w.Substitutions+w.Deletions != len(other) || w.Correct+w.Substitutions+w.Insertions != len(words) {
		t.Fatalf("%q: %v (%v) does not add up to %d and %d words", s, w, err, len(other), len(words))
	}
}
