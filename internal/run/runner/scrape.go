package runner

import (
	"errors"

	"github.com/omnibench/omnibench/internal/tlsconf"
	"github.com/omnibench/omnibench/scrape"
)

// ScrapeOptions are the bounds of every /metrics scrape of the run (ab uses
// them for its own scrapes of each arm).
func (cfg *Config) ScrapeOptions() scrape.Options {
	return scrape.Options{
		Accept:     cfg.Accept,
		Timeout:    cfg.ScrapeTimeout,
		MaxBytes:   cfg.ScrapeMaxBytes,
		MaxSamples: cfg.ScrapeMaxSamples,
		Client:     tlsconf.Client(cfg.Client.TLSConfig),
		Redact:     cfg.Redact,
	}
}

// intervalScrapeOptions are ScrapeOptions for the scrapes taken during
// the load, which must cost the client and the server under test little:
// the text format unless --accept names another (the format the selector
// decodes by its values alone; Prometheus itself asks for the text formats
// first unless it scrapes native histograms, which a breakdown does not
// read), and no compression (see scrape.Options.Uncompressed). The first
// and last scrapes keep ScrapeOptions: they are the run's record of the
// server.
func (cfg *Config) intervalScrapeOptions() scrape.Options {
	o := cfg.ScrapeOptions()
	if o.Accept == scrape.AcceptAuto {
		o.Accept = scrape.AcceptText
	}
	o.Uncompressed = true
	return o
}

// scrapeHint names the flag that lifts the bound a scrape ran into.
func scrapeHint(err error) string {
	var te *scrape.TimeoutError
	var le *scrape.LimitError
	switch {
	case errors.As(err, &te):
		return " (raise --scrape-timeout to wait longer)"
	case errors.As(err, &le) && le.What == "bytes":
		return " (raise --scrape-max-bytes to read it)"
	case errors.As(err, &le):
		return " (raise --scrape-max-samples to read it)"
	}
	return ""
}
