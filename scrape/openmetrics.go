package scrape

import (
	"bytes"
	"fmt"
	"strings"
)

// OpenMetrics 1.0 is read by translating it, line for line, into the
// Prometheus text format and running expfmt's text parser on the result.
//
// Why not expfmt's own OpenMetrics decoder: it validates every line against
// the ABNF grammar and takes about 7 ms per line here, so a real vLLM-Omni
// exposition (about 1,400 lines with stats on) would take ten seconds to
// read. The translation is a few string operations per line and keeps line
// numbers identical, so parse errors still point at the right line.
//
// The translation:
//   - `# TYPE x counter` becomes `# TYPE x_total counter` (and HELP alike),
//     because OpenMetrics names the counter family without the suffix its
//     samples carry;
//   - `unknown` becomes `untyped`, `gaugehistogram` becomes
//     `gauge_histogram` with `_gcount`/`_gsum` read as `_count`/`_sum`,
//     `info` and `stateset` become gauges;
//   - `<x>_created` samples become an untyped `<x>_created` family, exactly
//     what the Python text format exposes, and are linked to x the same way;
//   - timestamps and exemplars are dropped (omnibench does not use them);
//   - in label values, a backslash before a character the text format does
//     not escape (`\z`) stands for itself in OpenMetrics and becomes `\\z`;
//   - UNIT lines are remembered and blanked; `# EOF` must be the last line.

// omTranslate returns the text-format equivalent of an OpenMetrics body
// (already LF-normalised and newline-terminated) and the units it declared.
func omTranslate(body []byte) ([]byte, map[string]string, error) {
	lines := bytes.Split(body, []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1] // the split after the final newline
	}
	types := map[string]string{}
	for _, d := range scanMetadata(body, false) {
		types[d.name] = d.typ
	}
	units := map[string]string{}
	var out bytes.Buffer
	out.Grow(len(body) + len(body)/8)
	eof := -1
	for i, raw := range lines {
		line := string(raw)
		if eof >= 0 {
			if strings.TrimSpace(line) != "" {
				return nil, nil, &omError{line: i + 1, msg: fmt.Sprintf("data after # EOF (line %d)", eof+1)}
			}
			out.WriteByte('\n')
			continue
		}
		switch {
		case line == "# EOF" || strings.TrimSpace(line) == "# EOF":
			eof = i
		case strings.HasPrefix(line, "#"):
			out.WriteString(omDescriptor(line, types, units))
		default:
			out.WriteString(omSample(line, types))
		}
		out.WriteByte('\n')
	}
	if eof < 0 {
		return nil, nil, &omError{line: len(lines) + 1, msg: "data does not end with # EOF"}
	}
	return out.Bytes(), units, nil
}

// omError is a translation error; parse turns it into a *ParseError.
type omError struct {
	line int
	msg  string
}

func (e *omError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// omDescriptor translates a HELP, TYPE or UNIT line.
func omDescriptor(line string, types, units map[string]string) string {
	rest := strings.TrimLeft(line[1:], " \t")
	kw, after, _ := strings.Cut(rest, " ")
	name, value := splitName(strings.TrimLeft(after, " \t"))
	if name == "" || strings.HasPrefix(strings.TrimLeft(after, " \t"), `"`) {
		return line
	}
	typ := types[name]
	textName := name
	switch typ {
	case TypeCounter:
		if !strings.HasSuffix(name, "_total") {
			textName = name + "_total"
		}
	case "info":
		if !strings.HasSuffix(name, "_info") {
			textName = name + "_info"
		}
	}
	switch kw {
	case "HELP":
		return "# HELP " + textName + " " + escapeTextHelp(unescapeHelp(value))
	case "TYPE":
		return "# TYPE " + textName + " " + omTextType(typ)
	case "UNIT":
		units[textName] = strings.TrimSpace(value)
		return ""
	}
	return line // a plain comment: the text format ignores it too
}

func omTextType(typ string) string {
	switch typ {
	case "unknown", "":
		return TypeUntyped
	case TypeGaugeHistogram:
		return "gauge_histogram"
	case "info", "stateset":
		return TypeGauge
	}
	return typ
}

// escapeTextHelp escapes a HELP text for the text format (backslash and
// newline only; quotes stay as they are).
func escapeTextHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

// omSample translates a sample line: renames gauge-histogram sums and counts
// and drops the timestamp and exemplar.
func omSample(line string, types map[string]string) string {
	if line == "" || line[0] == '{' {
		return line
	}
	nameEnd := strings.IndexAny(line, "{ \t")
	if nameEnd < 0 {
		return line // the text parser will say what is wrong
	}
	name := line[:nameEnd]
	labelsEnd := nameEnd
	if line[nameEnd] == '{' {
		end, ok := closingBrace(line, nameEnd)
		if !ok {
			return line
		}
		labelsEnd = end + 1
	}
	fields := strings.Fields(line[labelsEnd:])
	if len(fields) == 0 {
		return line
	}
	for _, suffix := range [][2]string{{"_gcount", "_count"}, {"_gsum", "_sum"}} {
		if base, ok := strings.CutSuffix(name, suffix[0]); ok && types[base] == TypeGaugeHistogram {
			name = base + suffix[1]
		}
	}
	return name + textLabelEscapes(line[nameEnd:labelsEnd]) + " " + fields[0]
}

// textLabelEscapes doubles each backslash of a label set that escapes
// none of \\, \" and n: OpenMetrics keeps such a backslash as written
// (`\z` is a backslash and a z), the text format has no such escape.
func textLabelEscapes(labels string) string {
	if strings.IndexByte(labels, '\\') < 0 {
		return labels
	}
	var b strings.Builder
	b.Grow(len(labels) + 8)
	for i := 0; i < len(labels); i++ {
		c := labels[i]
		if c != '\\' || i+1 >= len(labels) {
			b.WriteByte(c)
			continue
		}
		switch next := labels[i+1]; next {
		case '\\', '"', 'n':
			b.WriteByte(c)
			b.WriteByte(next)
			i++
		default:
			b.WriteString(`\\`)
		}
	}
	return b.String()
}

// closingBrace finds the '}' that closes the label set opening at open,
// skipping quoted label values with escapes.
func closingBrace(line string, open int) (int, bool) {
	inQuote := false
	for i := open + 1; i < len(line); i++ {
		switch c := line[i]; {
		case inQuote && c == '\\':
			i++
		case c == '"':
			inQuote = !inQuote
		case !inQuote && c == '}':
			return i, true
		}
	}
	return 0, false
}
