package wer

import (
	"regexp"
	"strings"
	"unicode"
)

// Normalize returns the words of text in the package's normalization, the
// one both the reference (the text asked for) and the hypothesis (the
// transcript) go through before they are aligned:
//
//   - Letters are lower-cased (Unicode simple case mapping).
//   - Numbers are spelled as English words, so "23" and "twenty-three" agree:
//     whole numbers 0 to 999,999 as cardinals ("1,250" is "one thousand two
//     hundred fifty", no "and"), with an ordinal suffix as ordinals ("21st" is
//     "twenty first"), decimals with "point" and their digits one by one
//     ("3.05" is "three point zero five"); larger numbers and numbers with a
//     leading zero ("007") digit by digit.
//   - An apostrophe (straight or curly) between two letters stays ("don't");
//     every other punctuation mark and symbol separates words and is dropped
//     (a hyphen too: "well-known" is "well known").
//
// English first: other languages keep their letters, lower-cased; digits
// are the ASCII ones, spelled in English (other digits separate words).
func Normalize(text string) []string {
	var words []string
	for _, piece := range strings.FieldsFunc(text, isSeparator) {
		piece = strings.ToLower(piece)
		last := 0
		for _, m := range numberRe.FindAllStringSubmatchIndex(piece, -1) {
			words = appendLetters(words, piece[last:m[0]])
			words = appendNumber(words, piece, m)
			last = m[1]
		}
		words = appendLetters(words, piece[last:])
	}
	return words
}

// isSeparator tells the runes that always separate words: all but letters,
// digits, apostrophes and the comma and point inside numbers.
func isSeparator(r rune) bool {
	return !(unicode.IsLetter(r) || '0' <= r && r <= '9' || isApostrophe(r) || r == ',' || r == '.')
}

func isApostrophe(r rune) bool { return r == '\'' || r == '\u2019' }

// numberRe matches a number: digits (with thousands commas in groups of
// three), an optional decimal part, an optional ordinal suffix.
var numberRe = regexp.MustCompile(`(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(st|nd|rd|th)?`)

// appendLetters appends the words of s, a stretch without numbers: runs of
// letters joined by single inner apostrophes.
func appendLetters(words []string, s string) []string {
	runes := []rune(s)
	start := -1
	for i := 0; i <= len(runes); i++ {
		inWord := i < len(runes) && (unicode.IsLetter(runes[i]) ||
			isApostrophe(runes[i]) && start >= 0 && i+1 < len(runes) && unicode.IsLetter(runes[i+1]))
		if inWord && start < 0 {
			start = i
		}
		if !inWord && start >= 0 {
			words = append(words, strings.ReplaceAll(string(runes[start:i]), "\u2019", "'"))
			start = -1
		}
	}
	return words
}

// appendNumber appends the words of the number numberRe matched at m in s.
func appendNumber(words []string, s string, m []int) []string {
	whole := strings.ReplaceAll(s[m[2]:m[3]], ",", "")
	decimal := m[4] >= 0
	ordinal := m[6] >= 0 && !decimal
	if len(whole) > 6 || len(whole) > 1 && whole[0] == '0' {
		words = appendDigits(words, whole)
	} else {
		n := 0
		for _, d := range whole {
			n = n*10 + int(d-'0')
		}
		words = appendCardinal(words, n)
		if ordinal {
			words[len(words)-1] = ordinalOf(words[len(words)-1])
		}
	}
	if decimal {
		words = append(words, "point")
		words = appendDigits(words, s[m[4]:m[5]])
	}
	if m[6] >= 0 && !ordinal {
		words = append(words, s[m[6]:m[7]])
	}
	return words
}

var (
	ones = [...]string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
		"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
	tens = [...]string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}
	// ordinals whose form is not the cardinal plus "th" (the tens drop their y).
	irregularOrdinals = map[string]string{"one": "first", "two": "second", "three": "third", "five": "fifth",
		"eight": "eighth", "nine": "ninth", "twelve": "twelfth"}
)

func appendDigits(words []string, digits string) []string {
	for _, d := range digits {
		words = append(words, ones[d-'0'])
	}
	return words
}

// appendCardinal appends n (0..999999) in words.
func appendCardinal(words []string, n int) []string {
	if n == 0 {
		return append(words, "zero")
	}
	if n >= 1000 {
		words = appendBelowThousand(words, n/1000)
		words = append(words, "thousand")
		n %= 1000
	}
	return appendBelowThousand(words, n)
}

// appendBelowThousand appends n (0..999, nothing for 0) in words.
func appendBelowThousand(words []string, n int) []string {
	if n >= 100 {
		words = append(words, ones[n/100], "hundred")
		n %= 100
	}
	switch {
	case n >= 20:
		words = append(words, tens[n/10])
		if n%10 != 0 {
			words = append(words, ones[n%10])
		}
	case n > 0:
		words = append(words, ones[n])
	}
	return words
}

func ordinalOf(cardinal string) string {
	if o, ok := irregularOrdinals[cardinal]; ok {
		return o
	}
	if strings.HasSuffix(cardinal, "y") {
		return strings.TrimSuffix(cardinal, "y") + "ieth"
	}
	return cardinal + "th"
}
