package omnimetrics

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Gatherer returns a Gatherer over the private registry that also returns
// every family registered by this package that has no children yet, as a
// MetricFamily with name, HELP and TYPE and no metrics. The registry's own
// Gather drops such families (client_golang prunes empty families), but the
// servers print their HELP and TYPE lines (docs/reference/metric-families.md,
// section 2). Families are
// sorted by name, like the registry's.
func (m *Metrics) Gatherer() prometheus.Gatherer { return gathererWithDeclared{m} }

type gathererWithDeclared struct{ m *Metrics }

func (g gathererWithDeclared) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := g.m.reg.Gather()
	present := make(map[string]bool, len(mfs))
	for _, mf := range mfs {
		present[mf.GetName()] = true
	}
	added := false
	for _, d := range g.m.declared {
		if present[d.name] {
			continue
		}
		// Fresh values each time: callers may modify what they gather.
		name, help, typ := d.name, d.help, d.typ
		mfs = append(mfs, &dto.MetricFamily{Name: &name, Help: &help, Type: &typ})
		added = true
	}
	if added {
		slices.SortFunc(mfs, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	}
	return mfs, err
}

// Handler serves the metrics with content negotiation: Prometheus text,
// OpenMetrics 1.0 and delimited protobuf, as
// promhttp.HandlerFor(registry, promhttp.HandlerOpts{EnableOpenMetrics: true})
// does. Families without children are included as HELP and TYPE only. The
// OpenMetrics and protobuf encoders handle such families, so those formats
// go to promhttp; expfmt's text encoder rejects them ("MetricFamily has no
// metrics"), so the text format is written here (uncompressed).
func (m *Metrics) Handler() http.Handler {
	g := m.Gatherer()
	inner := promhttp.HandlerFor(g, promhttp.HandlerOpts{
		EnableOpenMetrics:                   true,
		EnableOpenMetricsTextCreatedSamples: m.created,
	})
	// The same offer list promhttp uses with EnableOpenMetrics, so both
	// negotiations agree.
	offered := expfmt.DefaultOpenMetricsAcceptedFormats()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		format := expfmt.NegotiateAccept(r.Header, offered...)
		if format.FormatType() != expfmt.TypeTextPlain {
			inner.ServeHTTP(w, r)
			return
		}
		mfs, err := g.Gather()
		if err != nil {
			http.Error(w, "An error has occurred while serving metrics:\n\n"+err.Error(), http.StatusInternalServerError)
			return
		}
		if names := r.URL.Query()["name[]"]; len(names) > 0 {
			mfs = slices.DeleteFunc(mfs, func(mf *dto.MetricFamily) bool { return !slices.Contains(names, mf.GetName()) })
		}
		var buf bytes.Buffer
		if err := writeText(&buf, mfs, format.ToEscapingScheme(), m.created); err != nil {
			http.Error(w, "An error has occurred while serving metrics:\n\n"+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Add("Vary", "Accept")
		w.Header().Set("Content-Type", string(format))
		_, _ = w.Write(buf.Bytes()) // a failed write means the scraper went away
	})
}

// writeText writes mfs in the Prometheus text format. A family without
// metrics prints only its HELP and TYPE lines, as Python's prometheus_client
// does for a labelled family with no children. With created, every counter,
// histogram and summary family with metrics is followed by its Python-style
// `_created` gauge family.
func writeText(w io.Writer, mfs []*dto.MetricFamily, scheme model.EscapingScheme, created bool) error {
	bw := bufio.NewWriter(w)
	for _, mf := range mfs {
		mf = model.EscapeMetricFamily(mf, scheme)
		if len(mf.GetMetric()) > 0 {
			if _, err := expfmt.MetricFamilyToText(bw, mf); err != nil {
				return fmt.Errorf("omnimetrics: encode family %s as text: %w", mf.GetName(), err)
			}
			if cf := createdFamily(mf); created && cf != nil {
				if _, err := expfmt.MetricFamilyToText(bw, cf); err != nil {
					return fmt.Errorf("omnimetrics: encode family %s as text: %w", cf.GetName(), err)
				}
			}
			continue
		}
		// Only this package's families reach here, and New checked their
		// names are legacy-valid, so the name needs no quoting.
		if mf.Help != nil {
			fmt.Fprintf(bw, "# HELP %s %s\n", mf.GetName(), escapeHelp(mf.GetHelp()))
		}
		fmt.Fprintf(bw, "# TYPE %s %s\n", mf.GetName(), strings.ToLower(mf.GetType().String()))
	}
	return bw.Flush()
}

// escapeHelp escapes a HELP text as the text format requires: backslash and
// line feed.
func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

// createdFamily returns the `<base>_created` gauge family Python's
// prometheus_client exposes for a counter, histogram or summary family
// (docs/reference/metric-families.md, section 4.1): base is the name without a counter's `_total`, the
// HELP is the family's, and each series carries its creation time in Unix
// seconds. It returns nil for other types or when no series has a creation
// time.
func createdFamily(mf *dto.MetricFamily) *dto.MetricFamily {
	base := mf.GetName()
	switch mf.GetType() {
	case dto.MetricType_COUNTER:
		base = strings.TrimSuffix(base, "_total")
	case dto.MetricType_HISTOGRAM, dto.MetricType_SUMMARY:
	default:
		return nil
	}
	var metrics []*dto.Metric
	for _, m := range mf.GetMetric() {
		var ts interface{ AsTime() time.Time }
		switch {
		case m.GetCounter().GetCreatedTimestamp() != nil:
			ts = m.GetCounter().GetCreatedTimestamp()
		case m.GetHistogram().GetCreatedTimestamp() != nil:
			ts = m.GetHistogram().GetCreatedTimestamp()
		case m.GetSummary().GetCreatedTimestamp() != nil:
			ts = m.GetSummary().GetCreatedTimestamp()
		default:
			continue
		}
		v := float64(ts.AsTime().UnixNano()) / 1e9
		metrics = append(metrics, &dto.Metric{Label: m.GetLabel(), Gauge: &dto.Gauge{Value: &v}})
	}
	if len(metrics) == 0 {
		return nil
	}
	name := base + "_created"
	typ := dto.MetricType_GAUGE
	return &dto.MetricFamily{Name: &name, Help: mf.Help, Type: &typ, Metric: metrics}
}
