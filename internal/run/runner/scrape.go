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
