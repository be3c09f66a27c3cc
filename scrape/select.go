package scrape

import (
	"bytes"
	"strings"
)

// Filter chooses families by canonical name (see Canonical): a family is
// kept when its name is one of Names or starts with one of Prefixes. Names
// and prefixes are made canonical too, so `vllm_omni:` and `vllm:omni_`
// select the same families (exposed under either spelling). The zero Filter
// keeps nothing.
type Filter struct {
	Names    []string
	Prefixes []string
}

// Match reports whether the family with the given name is kept.
func (f Filter) Match(name string) bool {
	name = Canonical(name)
	for _, n := range f.Names {
		if Canonical(n) == name {
			return true
		}
	}
	for _, p := range f.Prefixes {
		if strings.HasPrefix(name, Canonical(p)) {
			return true
		}
	}
	return false
}

// ParseSelected is Parse restricted to the families keep matches: it returns
// what Parse returns with every other family removed, at a fraction of the
// cost when few families are kept.
//
// In the text format the lines of families that are not kept are skipped
// after reading their metric name, without decoding or copying them, so
// they are not validated either: a malformed line in a skipped family is
// not an error. The sample cap counts the kept samples only. OpenMetrics
// and protobuf bodies, and text bodies with quoted (UTF-8) metric names,
// are parsed whole and then filtered. Errors are always those of Parse on
// the whole body, with its line numbers.
func ParseSelected(contentType string, body []byte, keep Filter) (Families, error) {
	return parseSelected("", contentType, body, 0, DefaultMaxSamples, keep)
}

// Select is Families restricted to the families keep matches (see
// ParseSelected).
func (s *Snapshot) Select(keep Filter) (Families, error) {
	return parseSelected(s.Source(), s.ContentType, s.Body, s.bodyLine, s.MaxSamples, keep)
}

// parseSelected is ParseSelected with parse's source, line offset and cap.
func parseSelected(source, contentType string, body []byte, lineOffset, maxSamples int, keep Filter) (Families, error) {
	fs, _, err := parseKept(source, contentType, body, lineOffset, maxSamples, keep)
	if err != nil {
		return nil, err
	}
	return keep.prune(fs), nil
}

// parseKept is parseSelected before the families keep does not match are
// pruned (the `_created` companions of kept families are among them). When
// the kept lines alone were parsed, it also returns them (else nil): the
// text the families were decoded from, which a Selector's template needs.
func parseKept(source, contentType string, body []byte, lineOffset, maxSamples int, keep Filter) (Families, []byte, error) {
	if kind, _ := detectFormat(contentType, body); kind == FormatText {
		if kept, ok := newLineSelector(keep).selectLines(normaliseText(body)); ok {
			if fs, err := parse(source, ctTextFormat, kept, 0, maxSamples); err == nil {
				if kept == nil {
					kept = []byte{} // nothing kept, but selected all the same
				}
				return fs, kept, nil
			}
			// Parsed again whole below, so that the error (or, should the
			// selection have been wrong, the result) is that of Parse.
		}
	}
	fs, err := parse(source, contentType, body, lineOffset, maxSamples)
	return fs, nil, err
}

// ctTextFormat is the media type of the text format.
const ctTextFormat = "text/plain; version=0.0.4"

// prune removes the families keep does not match.
func (f Filter) prune(fs Families) Families {
	for name := range fs {
		if !f.Match(name) {
			delete(fs, name)
		}
	}
	return fs
}

// familyKind is what the text parser knows of a family name: whether its
// TYPE makes `_count`, `_sum` (and `_bucket`) samples part of it.
type familyKind uint8

const (
	kindOther familyKind = iota
	kindSummary
	kindHistogram
)

// lineSelector picks the lines of the kept families out of a text
// exposition. It assigns every line to a family exactly as the Prometheus
// text parser does (setOrCreateCurrentMF in expfmt): a sample belongs to
// the family of its own name once that family exists (declared or sampled
// before), else to the family without its `_count`/`_sum`/`_bucket` suffix
// when that one is a declared summary or histogram, else it starts a family
// of its own name.
type lineSelector struct {
	names    map[string]struct{} // kept names, canonical
	prefixes []string            // kept prefixes, canonical
	families map[string]familyKind
	// Names built without allocating: a `_created` family's base with
	// `_total`, and the canonical form of a name.
	total, canonical []byte

	// The decision for the previous sample name, valid until the next
	// comment line (which may declare a family and change it).
	lastName []byte
	lastKeep bool
}

func newLineSelector(keep Filter) *lineSelector {
	s := &lineSelector{names: make(map[string]struct{}, len(keep.Names)), families: map[string]familyKind{}}
	for _, n := range keep.Names {
		s.names[Canonical(n)] = struct{}{}
	}
	for _, p := range keep.Prefixes {
		s.prefixes = append(s.prefixes, Canonical(p))
	}
	return s
}

// selectLines returns the kept lines of a normalised text body (every line
// ends in '\n'), or false when a line is beyond what the selector follows
// (a quoted name, or a line the text parser rejects) and the body must be
// parsed whole.
func (s *lineSelector) selectLines(text []byte) ([]byte, bool) {
	var out []byte
	ok := s.eachKept(text, func(line []byte) bool {
		out = append(out, line...)
		return true
	})
	return out, ok
}

// eachKept calls kept with every kept line of a normalised text body, in
// order ('\n' included, leading blanks kept), and reports false when a line
// is beyond what the selector follows (see selectLines) or kept returned
// false, which ends the walk.
func (s *lineSelector) eachKept(text []byte, kept func(line []byte) bool) bool {
	for len(text) > 0 {
		end := bytes.IndexByte(text, '\n') + 1
		if end == 0 {
			return false // not normalised: left to the whole parse
		}
		line := text[:end]
		text = text[end:]
		keep, ok := s.line(bytes.TrimLeft(line, " \t"))
		if !ok || keep && !kept(line) {
			return false
		}
	}
	return true
}

// line decides one line (leading blanks removed, '\n' included).
func (s *lineSelector) line(line []byte) (keep, ok bool) {
	switch line[0] {
	case '\n':
		return false, true
	case '#':
		s.lastName = nil
		return s.comment(line[1:])
	}
	name := metricName(line)
	if len(name) == 0 || (line[len(name)] != '{' && line[len(name)] != ' ' && line[len(name)] != '\t') {
		return false, false
	}
	if bytes.Equal(name, s.lastName) {
		return s.lastKeep, true
	}
	family := s.sampleFamily(name)
	s.lastName, s.lastKeep = name, s.wanted(family)
	return s.lastKeep, true
}

// comment decides a comment line (after the '#'): HELP and TYPE lines
// declare a family and belong to it; other comments are dropped.
func (s *lineSelector) comment(rest []byte) (keep, ok bool) {
	rest = bytes.TrimLeft(rest, " \t")
	i := bytes.IndexAny(rest, " \t\n")
	keyword := rest[:i]
	if (string(keyword) != "HELP" && string(keyword) != "TYPE") || rest[i] == '\n' {
		return false, true
	}
	rest = bytes.TrimLeft(rest[i:], " \t")
	name := metricName(rest)
	if len(name) == 0 && rest[0] == '\n' || rest[len(name)] == '\n' {
		// Ignored by the text parser, which does not even create the family.
		return false, true
	}
	if len(name) == 0 || (rest[len(name)] != ' ' && rest[len(name)] != '\t') {
		return false, false
	}
	kind, seen := s.families[string(name)]
	declared := kind
	if string(keyword) == "TYPE" {
		declared = typeKind(rest[len(name):])
	}
	if !seen || declared != kind {
		s.families[string(name)] = declared
	}
	return s.wanted(name), true
}

// typeKind reads the type of a TYPE line (after the name) as the text
// parser does: in any case, Unicode upper-casing included.
func typeKind(typ []byte) familyKind {
	switch strings.ToUpper(string(bytes.TrimSpace(typ))) {
	case "SUMMARY":
		return kindSummary
	case "HISTOGRAM", "GAUGEHISTOGRAM", "GAUGE_HISTOGRAM":
		return kindHistogram
	}
	return kindOther
}

// sampleFamily is the family a sample named name belongs to (see
// lineSelector), recording a family it starts.
func (s *lineSelector) sampleFamily(name []byte) []byte {
	if _, ok := s.families[string(name)]; ok {
		return name
	}
	if base, suffix := cutSampleSuffix(name); base != nil {
		switch kind := s.families[string(base)]; {
		case kind == kindHistogram, kind == kindSummary && suffix != "_bucket":
			return base
		}
	}
	s.families[string(name)] = kindOther
	return name
}

// cutSampleSuffix splits a `_count`, `_sum` or `_bucket` suffix off name
// (nil base when it has none), as the text parser does.
func cutSampleSuffix(name []byte) (base []byte, suffix string) {
	for _, suffix := range []string{"_count", "_sum", "_bucket"} {
		if len(name) > len(suffix) && string(name[len(name)-len(suffix):]) == suffix {
			return name[:len(name)-len(suffix)], suffix
		}
	}
	return nil, ""
}

// wanted reports whether the lines of family are kept: those of a kept
// family and of the Python-style `<base>_created` companion of a kept
// counter (`<base>_total`), histogram or summary (`<base>`), whose values
// Parse copies into the kept family's series.
func (s *lineSelector) wanted(family []byte) bool {
	if s.match(family) {
		return true
	}
	base, ok := bytes.CutSuffix(family, []byte("_created"))
	if !ok {
		return false
	}
	if s.match(base) {
		return true
	}
	s.total = append(append(s.total[:0], base...), "_total"...)
	return s.match(s.total)
}

// match reports whether the family named name (as exposed) is kept.
func (s *lineSelector) match(name []byte) bool {
	if rest, ok := bytes.CutPrefix(name, []byte(prefixCurrent)); ok {
		s.canonical = append(append(s.canonical[:0], prefixDesign...), rest...)
		name = s.canonical
	}
	if _, ok := s.names[string(name)]; ok {
		return true
	}
	for _, p := range s.prefixes {
		if len(name) >= len(p) && string(name[:len(p)]) == p {
			return true
		}
	}
	return false
}

// metricName returns the unquoted metric name line starts with, empty when
// it starts with anything else.
func metricName(line []byte) []byte {
	for i, c := range line {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return line[:i]
		}
	}
	return line
}
