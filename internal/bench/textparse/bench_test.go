package textparse

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"

	"github.com/omnibench/omnibench/internal/bench/expositions"
	"github.com/omnibench/omnibench/internal/breakdown"
	"github.com/omnibench/omnibench/scrape"
)

const contentType = "text/plain; version=0.0.4"

// scrapeInterval is the default interval of periodic scrapes: a parse's
// share of one core is its time over this interval.
const scrapeInterval = 5 * time.Second

// pipeline keeps the vLLM-Omni pipeline families (either prefix).
var pipeline = scrape.Filter{Prefixes: []string{"vllm:omni_"}}

// BenchmarkParsers parses each simulator exposition (stats on, after
// traffic through every replica) with scrape.Parse (every family decoded),
// scrape.ParseSelected (the pipeline families kept, the rest skipped; the
// breakdown's families; and nothing kept: the cost of skipping alone), a
// scrape.Selector keeping the breakdown's families (its first scrape, and
// its steady state: two scrapes of one simulator after different numbers of
// requests, in turn, each decoded by its values) and Prometheus's text
// parser (every sample's labels and value read, as its scrape loop does),
// side by side. Besides MB/s and allocations it reports the share of one
// core a parse every 5 s costs ("core-%@5s").
func BenchmarkParsers(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, size := range expositions.Sizes {
		texts, err := expositions.Texts(ctx, size, 2)
		if err != nil {
			b.Fatal(err)
		}
		body := texts[0]
		run := func(name string, parse func([]byte) error) {
			b.Run(size.String()+"/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if err := parse(texts[i%2]); err != nil {
						b.Fatal(err)
					}
				}
				perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				b.ReportMetric(100*perOp/float64(scrapeInterval.Nanoseconds()), "core-%@5s")
			})
		}
		run("Parse", func(body []byte) error {
			_, err := scrape.Parse(contentType, body)
			return err
		})
		run("ParseSelected", func(body []byte) error {
			fs, err := scrape.ParseSelected(contentType, body, pipeline)
			if err == nil && len(fs) == 0 {
				err = errors.New("no pipeline family kept")
			}
			return err
		})
		run("ParseSelected-breakdown", func(body []byte) error {
			_, err := scrape.ParseSelected(contentType, body, breakdown.Filter())
			return err
		})
		run("Selector-first", func(body []byte) error {
			_, err := scrape.NewSelector(breakdown.Filter()).Select(&scrape.Snapshot{ContentType: contentType, Body: body})
			return err
		})
		// The template is the second scrape: every measured one differs.
		sel := scrape.NewSelector(breakdown.Filter())
		if _, err := sel.Select(&scrape.Snapshot{ContentType: contentType, Body: texts[1]}); err != nil {
			b.Fatal(err)
		}
		run("Selector", func(body []byte) error {
			before := sel.Reused()
			_, err := sel.Select(&scrape.Snapshot{ContentType: contentType, Body: body})
			if err == nil && sel.Reused() == before {
				err = errors.New("a scrape after the first was decoded in full")
			}
			return err
		})
		run("ParseSelected-nothing", func(body []byte) error {
			_, err := scrape.ParseSelected(contentType, body, scrape.Filter{})
			return err
		})
		run("prometheus-textparse", promParse)
	}
}

// promParse reads every entry of body with Prometheus's text parser.
func promParse(body []byte) error {
	p, err := textparse.New(body, contentType, labels.NewSymbolTable(), textparse.ParserOptions{})
	if err != nil {
		return err
	}
	var lset labels.Labels
	for {
		entry, err := p.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch entry {
		case textparse.EntrySeries:
			p.Series()
			p.Labels(&lset)
		case textparse.EntryHistogram:
			p.Histogram()
			p.Labels(&lset)
		case textparse.EntryType:
			p.Type()
		case textparse.EntryHelp:
			p.Help()
		}
	}
}
