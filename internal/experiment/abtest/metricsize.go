package abtest

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/omnibench/omnibench/scrape"
)

// MetricsSize describes one /metrics exposition: how much a scraper reads
// and stores, and which families carry nothing.
type MetricsSize struct {
	URL      string `json:"url"`
	Snapshot string `json:"snapshot,omitempty"`     // the saved snapshot file, when written
	Format   string `json:"content_type,omitempty"` // as served

	Bytes int `json:"bytes"`
	// Lines counts the lines of the body as served (`curl | wc -l`), in the
	// text format abtest asks for: the original metrics design's measure
	// (1358 lines with stats on, 124 with stats off; see
	// docs/reference/metric-families.md, section 7).
	Lines int `json:"lines"`
	// Families counts metric families, not counting the `_created`
	// companions Python servers expose beside counters and histograms.
	Families int `json:"families"`
	// Series counts the samples a Prometheus server would store: one per
	// counter, gauge or untyped series, buckets + _sum + _count per
	// histogram series, quantiles + _sum + _count per summary series, and
	// one per `_created` value.
	Series int `json:"series"`
	// EmptyFamilies are the families declared (HELP/TYPE) without any
	// sample, as exposed: a labelled family that never observed anything,
	// which is what stats off leaves of the pipeline families.
	EmptyFamilies []string `json:"empty_families"`
	// PipelineFamilies counts vllm:omni_* / vllm_omni:* families;
	// UpstreamFamilies counts the other vllm:* families (stage/replica
	// engine metrics, registered only with stats on).
	PipelineFamilies int `json:"pipeline_families"`
	UpstreamFamilies int `json:"upstream_families"`

	Error string `json:"error,omitempty"` // why the scrape or its parse failed; the other fields are then partial
}

// Upstream reports whether the upstream vllm: families are present.
func (m *MetricsSize) Upstream() bool { return m.UpstreamFamilies > 0 }

// MeasureMetrics measures a /metrics snapshot.
func MeasureMetrics(snap *scrape.Snapshot) (MetricsSize, error) {
	var m MetricsSize
	m.URL = snap.URL
	err := m.measure(snap)
	return m, err
}

func (m *MetricsSize) measure(snap *scrape.Snapshot) error {
	m.Format = snap.ContentType
	m.Bytes = len(snap.Body)
	m.Lines = countLines(snap.Body)
	fams, err := snap.Families()
	if err != nil {
		return fmt.Errorf("parsing %s: %w", snap.Source(), err)
	}
	m.EmptyFamilies = nil
	m.Families, m.Series, m.PipelineFamilies, m.UpstreamFamilies = 0, 0, 0, 0
	for _, name := range fams.Names() {
		f := fams[name]
		m.Series += samples(f)
		if f.CreatedFor != "" {
			continue
		}
		m.Families++
		if len(f.Series) == 0 {
			shown := f.Original
			if shown == "" {
				shown = f.Name
			}
			m.EmptyFamilies = append(m.EmptyFamilies, shown)
		}
		switch {
		case scrape.IsPipeline(f.Name):
			m.PipelineFamilies++
		case strings.HasPrefix(f.Name, "vllm:"):
			m.UpstreamFamilies++
		}
	}
	sort.Strings(m.EmptyFamilies)
	return nil
}

// samples counts the stored samples of a family (see MetricsSize.Series).
func samples(f *scrape.Family) int {
	n := 0
	for _, s := range f.Series {
		switch {
		case s.Histogram != nil:
			n += len(s.Histogram.Buckets) + 2
		case s.Summary != nil:
			n += len(s.Summary.Quantiles) + 2
		default:
			n++
		}
	}
	return n
}

// countLines counts lines as wc -l would, plus a last line without a
// newline.
func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}
