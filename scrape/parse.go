package scrape

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Format names used in errors and reports.
const (
	FormatText        = "text"
	FormatOpenMetrics = "OpenMetrics"
	FormatProtobuf    = "protobuf"
)

// ParseError says where an exposition is malformed, in terms a user can act
// on: the source (URL or file), the format, the line and what is wrong.
type ParseError struct {
	Source string // URL or file; "" when Parse was called on bare bytes
	Format string // FormatText, FormatOpenMetrics or FormatProtobuf
	Line   int    // 1-based line of the source; 0 for protobuf
	Msg    string
	Err    error // the decoder's own error
}

func (e *ParseError) Error() string {
	src := e.Source
	if src == "" {
		src = "exposition"
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s: %s format, line %d: %s", src, e.Format, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s format: %s", src, e.Format, e.Msg)
}

func (e *ParseError) Unwrap() error { return e.Err }

// NotExpositionError reports a body that is plainly something else, such as
// a login page or a JSON API answer.
type NotExpositionError struct {
	Source      string // URL or file
	ContentType string // media type as served, "" when unknown
	What        string // "an HTML page", "a JSON document", ...
}

func (e *NotExpositionError) Error() string {
	src := e.Source
	if src == "" {
		src = "body"
	}
	if e.ContentType != "" {
		return fmt.Sprintf("%s returned %s (%s), not a Prometheus exposition", src, e.ContentType, e.What)
	}
	return fmt.Sprintf("%s holds %s, not a Prometheus exposition", src, e.What)
}

// Parse decodes an exposition body according to its Content-Type (as a
// server sent it; "" to detect from the body).
//
// Detection without a usable Content-Type: a body ending in `# EOF` is
// OpenMetrics, other valid UTF-8 is the text format, anything else is tried
// as delimited protobuf.
//
// Protobuf is decoded with expfmt's decoder (after checking the length
// prefixes, which it trusts), the text format with expfmt's text parser, and
// OpenMetrics by translating it line for line into the text format (see
// openmetrics.go for why). Families declared by HELP/TYPE without samples
// are kept, empty: the decoders drop them, but a checker needs them.
//
// For the text formats, CRLF line ends are turned into LF and a missing final
// newline is added before parsing: the Prometheus parser rejects both, yet
// they are harmless and common in hand-edited or Windows-saved files. Line
// numbers in errors are unaffected by this.
func Parse(contentType string, body []byte) (Families, error) {
	return parse("", contentType, body, 0, DefaultMaxSamples)
}

// DefaultMaxSamples caps the samples an exposition may hold before it is
// decoded (Options.MaxSamples raises it). A sample is one line with a value
// in the text formats (a histogram series has one per bucket plus _sum and
// _count) and the same count for protobuf. Decoding costs about 2 KB per
// sample, so the cap bounds a scrape at about 500 MB; a real vLLM-Omni server
// exposes a few thousand samples.
const DefaultMaxSamples = 250_000

// parse is Parse with a source name for errors, the number of lines that
// precede body in the source (a snapshot's header line) and the sample cap
// (0: DefaultMaxSamples).
func parse(source, contentType string, body []byte, lineOffset, maxSamples int) (Families, error) {
	if maxSamples <= 0 {
		maxSamples = DefaultMaxSamples
	}
	kind, format := detectFormat(contentType, body)
	if kind != FormatProtobuf {
		// Counted before decoding: the decoders' memory is what the cap bounds.
		if n := countTextSamples(body, maxSamples); n > maxSamples {
			return nil, &LimitError{Source: sourceName(source), What: "samples", Limit: int64(maxSamples)}
		}
	}
	if kind != FormatProtobuf {
		if what, ok := foreign(contentType, body); ok {
			shown := ""
			if strings.TrimSpace(contentType) != "" {
				shown = mediaType(contentType)
			}
			return nil, &NotExpositionError{Source: source, ContentType: shown, What: what}
		}
	}
	var (
		mfs   []*dto.MetricFamily
		decl  []declared
		units map[string]string
		err   error
	)
	switch kind {
	case FormatProtobuf:
		if err = checkFrames(body); err == nil {
			mfs, err = decodeAll(expfmt.NewDecoder(bytes.NewReader(body), format), maxSamples)
			var le *LimitError
			if errors.As(err, &le) {
				le.Source = sourceName(source)
				return nil, le
			}
		}
	case FormatOpenMetrics:
		text := normaliseText(body)
		decl = scanMetadata(text, true)
		var translated []byte
		if translated, units, err = omTranslate(text); err == nil {
			mfs, err = parseText(translated)
		}
	default:
		text := normaliseText(body)
		decl = scanMetadata(text, false)
		mfs, err = parseText(text)
	}
	if err != nil {
		return nil, parseError(source, kind, lineOffset, err)
	}
	fs := build(mfs, decl, kind != FormatProtobuf)
	for name, unit := range units {
		if f, ok := fs[Canonical(name)]; ok {
			f.Unit = unit
		}
	}
	return fs, nil
}

// parseText runs the Prometheus text parser (UTF-8 names allowed).
func parseText(text []byte) ([]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	byName, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		return nil, err
	}
	mfs := make([]*dto.MetricFamily, 0, len(byName))
	for _, mf := range byName {
		mfs = append(mfs, mf)
	}
	return mfs, nil
}

// decodeAll runs a decoder to io.EOF, stopping with a *LimitError once the
// families decoded hold more than maxSamples samples (counted as the text
// format would print them).
func decodeAll(dec expfmt.Decoder, maxSamples int) ([]*dto.MetricFamily, error) {
	var out []*dto.MetricFamily
	samples := 0
	for {
		mf := &dto.MetricFamily{}
		err := dec.Decode(mf)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		for _, m := range mf.GetMetric() {
			samples++
			if h := m.GetHistogram(); h != nil {
				samples += len(h.GetBucket()) + 2
			}
			if sm := m.GetSummary(); sm != nil {
				samples += len(sm.GetQuantile()) + 2
			}
		}
		if samples > maxSamples {
			return nil, &LimitError{What: "samples", Limit: int64(maxSamples)}
		}
		out = append(out, mf)
	}
}

// countTextSamples counts the sample lines (not blank, not a # comment) of
// a text or OpenMetrics body, stopping once past limit.
func countTextSamples(body []byte, limit int) int {
	n := 0
	for len(body) > 0 && n <= limit {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		line = bytes.TrimLeft(line, " \t")
		if len(line) > 0 && line[0] != '#' && line[0] != '\r' {
			n++
		}
	}
	return n
}

func sourceName(source string) string {
	if source == "" {
		return "exposition"
	}
	return source
}

// checkFrames walks the length prefixes of a delimited protobuf body before
// it is decoded: expfmt's decoder allocates whatever a prefix says (and
// panics on absurd sizes), so a garbage body must be refused first.
func checkFrames(body []byte) error {
	for off, n := 0, 1; off < len(body); n++ {
		size, k := binary.Uvarint(body[off:])
		if k <= 0 {
			return fmt.Errorf("message %d at byte %d: bad length prefix", n, off)
		}
		if size > uint64(len(body)-off-k) {
			return fmt.Errorf("message %d at byte %d: length %d runs past the end of the body (%d bytes)", n, off, size, len(body))
		}
		off += k + int(size)
	}
	return nil
}

func parseError(source, kind string, lineOffset int, err error) error {
	pe := &ParseError{Source: source, Format: kind, Msg: err.Error(), Err: err}
	var (
		ep expfmt.ParseError
		oe *omError
	)
	if errors.As(err, &oe) {
		pe.Line = oe.line + lineOffset
		pe.Msg = oe.msg
	} else if errors.As(err, &ep) {
		pe.Line = ep.Line + lineOffset
		pe.Msg = ep.Msg
	} else if kind == FormatProtobuf && errors.Is(err, io.ErrUnexpectedEOF) {
		pe.Msg = "truncated protobuf message: " + err.Error()
	}
	return pe
}

// detectFormat picks the decoder from the Content-Type, falling back to the
// body when the type is absent or unknown.
func detectFormat(contentType string, body []byte) (string, expfmt.Format) {
	f := expfmt.ResponseFormat(http.Header{"Content-Type": []string{contentType}})
	switch f.FormatType() {
	case expfmt.TypeProtoDelim:
		return FormatProtobuf, f.WithEscapingScheme(model.NoEscaping)
	case expfmt.TypeOpenMetrics:
		return FormatOpenMetrics, f.WithEscapingScheme(model.NoEscaping)
	case expfmt.TypeTextPlain:
		return FormatText, f
	}
	if mediaType(contentType) == "text/plain" {
		return FormatText, expfmt.NewFormat(expfmt.TypeTextPlain)
	}
	switch {
	case endsWithEOF(body):
		return FormatOpenMetrics, expfmt.FmtOpenMetrics_1_0_0.WithEscapingScheme(model.NoEscaping)
	case utf8.Valid(body):
		return FormatText, expfmt.NewFormat(expfmt.TypeTextPlain)
	}
	return FormatProtobuf, expfmt.FmtProtoDelim.WithEscapingScheme(model.NoEscaping)
}

func mediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(contentType))
	}
	return mt
}

// endsWithEOF reports whether the last non-blank line is `# EOF`.
func endsWithEOF(body []byte) bool {
	t := bytes.TrimRight(body, " \t\r\n")
	i := bytes.LastIndexByte(t, '\n')
	return string(bytes.TrimSpace(t[i+1:])) == "# EOF"
}

// foreign recognises bodies that are not expositions at all, so that the
// user reads "an HTML page" instead of a parser complaint about line 1.
func foreign(contentType string, body []byte) (string, bool) {
	switch mt := mediaType(contentType); {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return "an HTML page", true
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return "a JSON document", true
	case mt == "application/xml" || mt == "text/xml":
		return "an XML document", true
	}
	t := bytes.TrimLeft(body, " \t\r\n\ufeff")
	if len(t) == 0 {
		return "", false
	}
	switch t[0] {
	case '<':
		// No exposition line starts with '<'.
		head := strings.ToLower(string(t[:min(len(t), 64)]))
		switch {
		case strings.HasPrefix(head, "<?xml"):
			return "an XML document", true
		default:
			return "an HTML page", true
		}
	case '{', '[':
		// A text exposition line may start with '{' (quoted UTF-8 metric
		// names), but never forms a whole JSON document.
		if json.Valid(t) {
			return "a JSON document", true
		}
	}
	return "", false
}

// normaliseText makes CRLF line ends LF and adds a missing final newline.
func normaliseText(body []byte) []byte {
	out := body
	if bytes.Contains(out, []byte("\r\n")) {
		out = bytes.ReplaceAll(out, []byte("\r\n"), []byte("\n"))
	}
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out[:len(out):len(out)], '\n')
	}
	return out
}

// declared is a family's metadata as written in HELP/TYPE/UNIT lines. The
// decoders drop families without samples; a labelled family that never
// observed anything is still "present" for a checker, so the metadata is
// collected separately.
type declared struct {
	name, typ, help, unit string
}

// scanMetadata collects the families named in HELP, TYPE and UNIT lines, in
// order of first appearance. In OpenMetrics a counter is declared without
// its `_total` suffix, which the decoder adds; the scan does the same.
func scanMetadata(text []byte, openMetrics bool) []declared {
	var (
		out   []declared
		index = map[string]int{}
	)
	for line := range bytes.SplitSeq(text, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte("#"))
		if !ok {
			continue
		}
		rest = bytes.TrimLeft(rest, " \t")
		var kw string
		for _, k := range []string{"HELP", "TYPE", "UNIT"} {
			if after, ok := bytes.CutPrefix(rest, []byte(k)); ok && (len(after) == 0 || after[0] == ' ' || after[0] == '\t') {
				kw, rest = k, bytes.TrimLeft(after, " \t")
				break
			}
		}
		if kw == "" || (kw == "UNIT" && !openMetrics) {
			continue
		}
		name, value := splitName(string(rest))
		if name == "" {
			continue
		}
		i, seen := index[name]
		if !seen {
			i = len(out)
			index[name] = i
			out = append(out, declared{name: name})
		}
		switch kw {
		case "HELP":
			out[i].help = unescapeHelp(value)
		case "TYPE":
			out[i].typ = strings.ToLower(strings.TrimSpace(value))
			if out[i].typ == "unknown" {
				out[i].typ = TypeUntyped
			}
		case "UNIT":
			out[i].unit = strings.TrimSpace(value)
		}
	}
	if openMetrics {
		for i := range out {
			if out[i].typ == TypeCounter && !strings.HasSuffix(out[i].name, "_total") {
				out[i].name += "_total"
			}
		}
	}
	return out
}

// splitName splits `name rest` where name may be a quoted UTF-8 name.
func splitName(s string) (name, rest string) {
	if strings.HasPrefix(s, `"`) {
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '"':
				return unescapeHelp(s[1:i]), strings.TrimLeft(s[i+1:], " \t")
			}
		}
		return "", ""
	}
	name, rest, _ = strings.Cut(s, " ")
	if n, r, ok := strings.Cut(name, "\t"); ok {
		name, rest = n, r+" "+rest
	}
	return name, rest
}

func unescapeHelp(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			case '\\', '"':
				b.WriteByte(s[i+1])
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// build turns decoded families plus declared-only metadata into Families.
// infRequired is true for the text formats, where le="+Inf" must be written.
func build(mfs []*dto.MetricFamily, decl []declared, infRequired bool) Families {
	sort.Slice(mfs, func(i, j int) bool { return mfs[i].GetName() < mfs[j].GetName() })
	fs := Families{}
	for _, mf := range mfs {
		fs.add(fromProto(mf, infRequired))
	}
	for _, d := range decl {
		if _, ok := fs[Canonical(d.name)]; ok {
			continue
		}
		typ := d.typ
		if typ == "" {
			typ = TypeUntyped
		}
		fs.add(&Family{Name: Canonical(d.name), Original: d.name, Type: typ, Help: d.help, Unit: d.unit})
	}
	fs.linkCreated()
	return fs
}

// add stores f, resolving a family exposed under both pipeline prefixes in
// favour of the original metrics design's spelling (vllm:omni_).
func (fs Families) add(f *Family) {
	prev, ok := fs[f.Name]
	if !ok {
		fs[f.Name] = f
		return
	}
	keep, drop := prev, f
	if !strings.HasPrefix(prev.Original, prefixDesign) && strings.HasPrefix(f.Original, prefixDesign) {
		keep, drop = f, prev
	}
	if keep.AlsoExposedAs == "" {
		keep.AlsoExposedAs = drop.Original
	}
	fs[f.Name] = keep
}

// linkCreated marks Python-style `<base>_created` gauge families and copies
// their values into the base family's series.
func (fs Families) linkCreated() {
	for name, f := range fs {
		base, ok := strings.CutSuffix(name, "_created")
		if !ok || (f.Type != TypeGauge && f.Type != TypeUntyped) {
			continue
		}
		var target *Family
		if t, ok := fs[base+"_total"]; ok && t.Type == TypeCounter {
			target = t
		} else if t, ok := fs[base]; ok && (t.Type == TypeHistogram || t.Type == TypeSummary || t.Type == TypeGaugeHistogram) {
			target = t
		}
		if target == nil {
			continue
		}
		f.CreatedFor = target.Name
		for _, s := range f.Series {
			if bs, ok := target.Find(s.Labels); ok {
				bs.Created = s.Value
			}
		}
	}
}

func typeName(t dto.MetricType) string {
	switch t {
	case dto.MetricType_COUNTER:
		return TypeCounter
	case dto.MetricType_GAUGE:
		return TypeGauge
	case dto.MetricType_SUMMARY:
		return TypeSummary
	case dto.MetricType_HISTOGRAM:
		return TypeHistogram
	case dto.MetricType_GAUGE_HISTOGRAM:
		return TypeGaugeHistogram
	}
	return TypeUntyped
}

func fromProto(mf *dto.MetricFamily, infRequired bool) *Family {
	f := &Family{
		Name:     Canonical(mf.GetName()),
		Original: mf.GetName(),
		Type:     typeName(mf.GetType()),
		Help:     mf.GetHelp(),
		Unit:     mf.GetUnit(),
		Raw:      mf,
	}
	for _, m := range mf.GetMetric() {
		if m == nil {
			continue
		}
		s := Series{Labels: map[string]string{}}
		for _, lp := range m.GetLabel() {
			s.Labels[lp.GetName()] = lp.GetValue()
		}
		s.Key = LabelKey(s.Labels)
		switch {
		case m.Counter != nil:
			s.Value = m.Counter.GetValue()
			s.Created = seconds(m.Counter.GetCreatedTimestamp().AsTime().UnixNano(), m.Counter.CreatedTimestamp != nil)
		case m.Gauge != nil:
			s.Value = m.Gauge.GetValue()
		case m.Untyped != nil:
			s.Value = m.Untyped.GetValue()
		case m.Histogram != nil:
			s.Histogram = histogramFromProto(m.Histogram, infRequired)
			s.Created = seconds(m.Histogram.GetCreatedTimestamp().AsTime().UnixNano(), m.Histogram.CreatedTimestamp != nil)
		case m.Summary != nil:
			s.Summary = &Summary{Count: float64(m.Summary.GetSampleCount()), Sum: m.Summary.GetSampleSum(), Quantiles: map[float64]float64{}}
			for _, q := range m.Summary.GetQuantile() {
				s.Summary.Quantiles[q.GetQuantile()] = q.GetValue()
			}
			s.Created = seconds(m.Summary.GetCreatedTimestamp().AsTime().UnixNano(), m.Summary.CreatedTimestamp != nil)
		}
		f.Series = append(f.Series, s)
	}
	sort.SliceStable(f.Series, func(i, j int) bool { return f.Series[i].Key < f.Series[j].Key })
	return f
}

func seconds(unixNano int64, ok bool) float64 {
	if !ok {
		return 0
	}
	return float64(unixNano) / 1e9
}

func histogramFromProto(h *dto.Histogram, infRequired bool) *Histogram {
	out := &Histogram{Count: float64(h.GetSampleCount()), Sum: h.GetSampleSum()}
	if c := h.GetSampleCountFloat(); c > 0 {
		out.Count = c
	}
	for _, b := range h.GetBucket() {
		c := float64(b.GetCumulativeCount())
		if cf := b.GetCumulativeCountFloat(); cf > 0 {
			c = cf
		}
		out.Buckets = append(out.Buckets, Bucket{UpperBound: b.GetUpperBound(), Count: c})
	}
	sort.SliceStable(out.Buckets, func(i, j int) bool { return out.Buckets[i].UpperBound < out.Buckets[j].UpperBound })
	if n := len(out.Buckets); n == 0 || !math.IsInf(out.Buckets[n-1].UpperBound, 1) {
		out.InfMissing = infRequired
		out.Buckets = append(out.Buckets, Bucket{UpperBound: math.Inf(1), Count: out.Count})
	}
	return out
}
