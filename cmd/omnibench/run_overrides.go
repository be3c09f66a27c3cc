package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/omnibench/omnibench/internal/audio/onset"
	"github.com/omnibench/omnibench/internal/client"
	"github.com/omnibench/omnibench/scenarios"
)

// overrides are the flags the user set that replace a scenario's values.
// haveAPIKey says --api-key (or its variable) gives the credentials.
func (o *runOptions) overrides(f *pflag.FlagSet, haveAPIKey bool) (scenarios.Overrides, error) {
	ov := scenarios.Overrides{
		Kind:            changed(f, "kind", &o.kind),
		Model:           changed(f, "model", &o.model),
		Voice:           changed(f, "voice", &o.voice),
		AudioFormat:     changed(f, "audio-format", &o.audioFormat),
		Modalities:      changed(f, "modalities", &o.modalities),
		Prompts:         changed(f, "prompts", &o.prompts),
		AudioInputStyle: changed(f, "audio-input-style", &o.audioInputStyle),
		PCMSampleRate:   changed(f, "pcm-sample-rate", &o.pcmRate),
		ExtraBody:       o.extraBody,
		HaveAPIKey:      haveAPIKey,
		Percentiles:     o.percentiles,
		Load: scenarios.LoadOverrides{
			Rate:        changed(f, "rate", &o.rate.rate),
			RateStart:   o.rate.start,
			RampUp:      o.rampUp,
			Stages:      o.stages,
			Arrival:     o.arrival,
			Burstiness:  o.burstiness,
			Duration:    changed(f, "duration", &o.duration),
			MaxInflight: o.maxInflight,
			Seed:        o.seed,
			Grace:       o.grace,
		},
	}
	// sweep and capacity bind their own --concurrency (a level list): only
	// the flag bound to these options is an override.
	if fl := f.Lookup("concurrency"); fl != nil && f.Changed("concurrency") && fl.Value.Type() != "string" {
		ov.Load.Concurrency = &o.concurrency
	}
	// A caller's preset (ab's) counts as given, like a flag.
	if f.Changed("requests") || o.requests != 0 {
		ov.Load.Requests = &o.requests
	}
	if f.Changed("warmup") || o.warmup >= 0 {
		ov.Load.Warmup = &o.warmup
	}
	for _, raw := range o.headers {
		h, err := parseHeader(raw)
		if err != nil {
			return ov, err
		}
		ov.Headers = append(ov.Headers, scenarios.Header{Name: h.name, Value: h.value})
	}
	if f.Changed("threshold") {
		th, err := parseThresholds(o.thresholds)
		if err != nil {
			return ov, err
		}
		ov.Thresholds = th
	}
	return ov, nil
}

// changed is v when the user set the flag, else nil.
func changed[T any](f *pflag.FlagSet, name string, v *T) *T {
	if f.Changed(name) {
		return v
	}
	return nil
}

// checkClientBounds refuses client, scrape and self-monitoring flags
// outside their bounds, naming the flag and its value.
func (o *runOptions) checkClientBounds(f *pflag.FlagSet) error {
	for _, c := range []struct {
		name string
		bad  bool
		want string
	}{
		{"max-conns", o.maxConns < 0, "0 or more (0 = follow the load)"},
		{"client-delay-threshold", o.delayLimit <= 0, "greater than 0"},
		{"client-cpu-threshold", !(o.cpuLimit > 0 && o.cpuLimit <= 1), "a share in (0, 1]"},
		{"timeout", o.timeout < 0, "0 or more"},
		{"idle-timeout", o.idleTimeout < 0, "0 or more"},
		{"scrape-timeout", o.scrapeTimeout <= 0, "greater than 0"},
		{"scrape-max-bytes", o.scrapeMaxBytes <= 0, "greater than 0"},
		{"scrape-max-samples", o.scrapeMaxSamples <= 0, "greater than 0"},
		{"scrape-interval", o.scrapeInterval < 0, "0 or more (0 = off)"},
		{"max-event-bytes", o.maxEventBytes < 1, "at least 1"},
		{"audible-threshold", !(o.audibleDB >= onset.MinThresholdDBFS && o.audibleDB < 0), "in [-90, 0) dBFS"},
	} {
		if fl := f.Lookup(c.name); fl != nil && f.Changed(c.name) && c.bad {
			return fmt.Errorf("--%s %s: must be %s", c.name, fl.Value.String(), c.want)
		}
	}
	if o.transport != client.TransportOwn && o.transport != client.TransportStd {
		return fmt.Errorf("--http-transport %q: must be %s or %s", o.transport, client.TransportOwn, client.TransportStd)
	}
	return nil
}
