package exporter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/prometheus/client_golang/prometheus/push"
	"github.com/prometheus/common/model"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
)

// DefaultPushJob is the Pushgateway job name when none is given.
const DefaultPushJob = "omnibench"

// PushConfig says where and how to push.
type PushConfig struct {
	// URL is the Pushgateway's base URL, e.g. http://127.0.0.1:9091 (a bare
	// host:port means http). Credentials in it (user:password@) are sent as
	// basic auth and never appear in errors.
	URL string
	// Job is the job label of the pushed group; "" means DefaultPushJob.
	Job string
	// Grouping holds the other grouping labels (see ParsePushLabels).
	Grouping map[string]string
	// Client sends the request; nil means a new http.Client. Bound the push
	// with ctx.
	Client *http.Client
}

// Push replaces the group (job plus grouping labels) on the Pushgateway with
// the current series (HTTP PUT). Families without series are not pushed.
func (e *Exporter) Push(ctx context.Context, cfg PushConfig) error {
	base, user, password, err := splitPushURL(cfg.URL)
	if err != nil {
		return err
	}
	job := cfg.Job
	if job == "" {
		job = DefaultPushJob
	}
	client := cfg.Client
	if client == nil {
		client = &http.Client{}
	}
	// The registry's own Gather drops families without series, which a
	// Pushgateway has no use for.
	p := push.New(base, job).Gatherer(e.m.Registry()).Client(client)
	if user != "" || password != "" {
		p = p.BasicAuth(user, password)
	}
	for k, v := range cfg.Grouping {
		p = p.Grouping(k, v)
	}
	if err := p.PushContext(ctx); err != nil {
		return fmt.Errorf("exporter: pushing to the Pushgateway at %s (job %q): %w", base, job, err)
	}
	return nil
}

// splitPushURL returns the URL without credentials, and the credentials.
func splitPushURL(raw string) (base, user, password string, err error) {
	if raw == "" {
		return "", "", "", errors.New("exporter: no Pushgateway URL")
	}
	s := raw
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		// url.Error quotes the input, which may hold a password: say what is
		// wrong without it.
		return "", "", "", errors.New("exporter: the Pushgateway URL does not parse as a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", "", "", fmt.Errorf("exporter: Pushgateway URL scheme %q: want http or https", u.Scheme)
	}
	if u.Host == "" {
		return "", "", "", errors.New("exporter: the Pushgateway URL has no host")
	}
	if u.User != nil {
		user = u.User.Username()
		password, _ = u.User.Password()
		u.User = nil
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", "", "", fmt.Errorf("exporter: Pushgateway URL %s: no query or fragment allowed", u.Redacted())
	}
	return strings.TrimSuffix(u.String(), "/"), user, password, nil
}

// ParsePushLabels parses grouping labels given as "name=value" (the
// --push-label flag). Names must be valid Prometheus label names, distinct,
// and must not be "job" (set by the job name) or a label the exported series
// already carry, which the Pushgateway would refuse.
func ParsePushLabels(pairs []string) (map[string]string, error) {
	reserved := reservedLabels()
	out := make(map[string]string, len(pairs))
	for _, pair := range pairs {
		name, value, ok := strings.Cut(pair, "=")
		name = strings.TrimSpace(name)
		switch {
		case !ok:
			return nil, fmt.Errorf("push label %q: want name=value", pair)
		case !model.LegacyValidation.IsValidLabelName(name) || strings.HasPrefix(name, "__"):
			return nil, fmt.Errorf("push label %q: %q is not a valid label name", pair, name)
		case name == "job":
			return nil, fmt.Errorf("push label %q: the job label is set by the job name", pair)
		case reserved[name]:
			return nil, fmt.Errorf("push label %q: the exported series already carry a %q label", pair, name)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("push label %q: label %q given twice", pair, name)
		}
		out[name] = value
	}
	return out, nil
}

// reservedLabels are the label names of the exported series.
func reservedLabels() map[string]bool {
	r := map[string]bool{"le": true, LabelEndpoint: true, LabelScenario: true}
	for _, specs := range [][]omnimetrics.FamilySpec{omnimetrics.PipelineFamilies(), Families()} {
		for _, s := range specs {
			for _, l := range s.Labels {
				r[l] = true
			}
		}
	}
	return r
}
