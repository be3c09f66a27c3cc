package secret

import (
	"bytes"
	"encoding/base64"
	"strings"
)

// The credentials of the HTTP authentication schemes are masked wherever
// they appear, known or not: a server or proxy that quotes a request's
// headers back quotes credentials the run may not have been told about (a
// proxy's from the environment, a token a gateway added on the way).
//
// A Bearer token is masked unless it is a short lowercase word ("Bearer
// token required"), a Basic token when it decodes to user:password.

// schemeNames are the schemes, lowercase and with the space that follows.
func schemeNames() [2]string { return [2]string{"bearer ", "basic "} }

// schemeTails are the tails of the scheme words as hasScheme looks for
// them before a space: in lower and in upper case.
func schemeTails() [4]string { return [4]string{"earer", "EARER", "asic", "ASIC"} }

// hasScheme is a quick test for a possible scheme word in b: a space after
// the tail of one (schemeTails). It is one pass over b from space to space
// (a search per spelling was four, over bodies of megabytes such as a
// large server's /metrics exposition), looking back only from a space
// after the tails' last letter.
func hasScheme(b []byte) bool {
	for i := 0; ; i++ {
		j := bytes.IndexByte(b[i:], ' ')
		if j < 0 {
			return false
		}
		if i += j; i == 0 {
			continue
		}
		switch b[i-1] {
		case 'r', 'R', 'c', 'C':
			for _, tail := range schemeTails() {
				if bytes.HasSuffix(b[:i], []byte(tail)) {
					return true
				}
			}
		}
	}
}

// maskSchemes replaces the token after each "Bearer " and "Basic "
// (any case) by Mask.
func maskSchemes(s string) string {
	if !hasScheme([]byte(s)) {
		return s
	}
	lower := asciiLower(s)
	var b strings.Builder
	done := 0
	for i := 0; i < len(s); {
		name, at := nextScheme(lower, i)
		if at < 0 {
			break
		}
		start := at + len(name)
		for start < len(s) && s[start] == ' ' {
			start++
		}
		end := start
		for end < len(s) && isTokenByte(s[end]) {
			end++
		}
		if end > start && isCredential(name, s[start:end]) {
			b.WriteString(s[done:start])
			b.WriteString(Mask)
			done = end
		}
		i = max(end, at+1)
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// nextScheme finds the first scheme word at or after i in lower that starts
// a word; it returns the scheme and its offset, or -1.
func nextScheme(lower string, i int) (string, int) {
	best, bestAt := "", -1
	for _, name := range schemeNames() {
		for j := i; j < len(lower); {
			k := strings.Index(lower[j:], name)
			if k < 0 {
				break
			}
			at := j + k
			if at == 0 || !isAlnum(lower[at-1]) {
				if bestAt < 0 || at < bestAt {
					best, bestAt = name, at
				}
				break
			}
			j = at + 1
		}
	}
	return best, bestAt
}

// isCredential tells a token from a word that happens to follow a scheme
// name in prose.
func isCredential(scheme, token string) bool {
	if scheme == "basic " {
		dec, err := base64.StdEncoding.DecodeString(token)
		return err == nil && strings.Contains(string(dec), ":")
	}
	if len(token) >= 16 {
		return true
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; c < 'a' || c > 'z' {
			return true
		}
	}
	return false
}

// schemeTail returns where a token starts when s ends inside one (after a
// scheme name, with at least one token byte), else -1: a clipped message
// cut in the middle of a token keeps nothing of it, whatever it is.
func schemeTail(s string) int {
	end := len(s)
	start := end
	for start > 0 && isTokenByte(s[start-1]) {
		start--
	}
	if start == end {
		return -1
	}
	sp := start
	for sp > 0 && s[sp-1] == ' ' {
		sp--
	}
	if sp == start {
		return -1
	}
	lower := asciiLower(s[:sp])
	for _, name := range schemeNames() {
		word := strings.TrimSuffix(name, " ")
		if strings.HasSuffix(lower, word) && (len(lower) == len(word) || !isAlnum(lower[len(lower)-len(word)-1])) {
			return start
		}
	}
	return -1
}

// isTokenByte reports whether c may be part of an authentication token
// (RFC 9110's token68: letters, digits, -._~+/ and trailing '=').
func isTokenByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-._~+/=", c) >= 0
}

// isAlnum reports whether c is an ASCII letter or digit: a scheme name
// preceded by one is inside another word.
func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// asciiLower lowercases the ASCII letters of s and leaves every other byte
// as it is, so that offsets into the result are offsets into s
// (strings.ToLower changes lengths: invalid UTF-8, some non-ASCII letters).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
