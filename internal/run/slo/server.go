package slo

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Server figures come from the server's own metrics: the run's breakdown
// (where the time went, stage by stage, replica by replica and hop by
// hop), so that a gate can fail on an attributable cause, not only on the
// symptom the client sees. A figure of the stage or transfer families may
// select its rows with labels in braces, e.g.
// server_stage_queue_p95{stage="1"} or transfer_in_flight_p95{from_stage="1"};
// without labels, or when they select several rows, the figure is the
// largest of them (the worst replica or edge). Quantiles are estimates from
// the server's histogram buckets.

// ServerFigures answers the server figures of SLOs: the run's breakdown
// implements it. ServerFigure returns the figure named (its base name, e.g.
// "server_stage_queue_p95", without labels) over the rows labels select,
// times in seconds, or NaN and why there is none.
type ServerFigures interface {
	ServerFigure(name string, labels map[string]string) (float64, string)
}

// serverDef is one family of server figures.
type serverDef struct {
	name   string   // e.g. "server_stage_queue"; with a statistic suffix when stats
	stats  bool     // takes _mean, _p50, _p95 or _p99
	labels []string // the labels that may select its rows
}

var (
	stageLabels = []string{"stage", "replica"}
	edgeLabels  = []string{"from_stage", "from_replica", "to_stage", "to_replica"}
)

// serverDefs lists the server figures in documentation order (read only).
var serverDefs = [...]serverDef{
	{"server_stage_queue", true, stageLabels},
	{"server_stage_prefill", true, stageLabels},
	{"server_stage_decode", true, stageLabels},
	{"server_stage_e2e", true, stageLabels},
	{"server_stage_ttft", true, stageLabels},
	{"server_stage_itl", true, stageLabels},
	{"transfer_tx", true, edgeLabels},
	{"transfer_rx", true, edgeLabels},
	{"transfer_in_flight", true, edgeLabels},
	{"replica_imbalance", false, nil},
}

// serverStats are the statistics a server figure takes: the exact mean and
// the quantiles the breakdown estimates.
var serverStats = [...]string{"mean", "p50", "p95", "p99"}

// maxSelectLabels bounds the labels of one figure: as many as a figure
// has names for.
const maxSelectLabels = 4

// resolveServer maps a server figure's name to its figure; ok is false
// when name is not one.
func (p *parser) resolveServer(name string, start int) (f figure, ok bool, err error) {
	for _, d := range serverDefs {
		if !d.stats {
			if name == d.name {
				return figure{name: d.name, kind: kindPlain, metric: -1, server: d.name, serverDef: d.find()}, true, nil
			}
			continue
		}
		stat, found := strings.CutPrefix(name, d.name+"_")
		if !found {
			continue
		}
		for _, s := range serverStats {
			if stat == s {
				return figure{name: name, kind: kindTime, unit: "ms", metric: -1, server: name, serverDef: d.find()}, true, nil
			}
		}
		return figure{}, true, p.errAt(start+len(d.name)+1, "unknown statistic %q of a server figure (want %s)",
			stat, strings.Join(serverStats[:], ", "))
	}
	return figure{}, false, nil
}

// find is the address of d in serverDefs, which a figure keeps.
func (d serverDef) find() *serverDef {
	for i := range serverDefs {
		if serverDefs[i].name == d.name {
			return &serverDefs[i]
		}
	}
	return nil
}

// labels reads `{name="value",...}` after a server figure's name and
// adds them to fig, whose canonical name then carries them sorted.
func (p *parser) labels(fig *figure) error {
	open := p.pos
	if fig.server == "" {
		return p.errAt(open, "labels in braces select the rows of a server figure (server_stage_*, transfer_*); %s has none", fig.name)
	}
	p.pos++ // '{'
	labels := map[string]string{}
	for {
		p.skipSpace()
		if p.peek() == '}' {
			p.pos++
			break
		}
		if len(labels) == maxSelectLabels {
			return p.errAt(p.pos, "at most %d labels", maxSelectLabels)
		}
		at := p.pos
		for p.pos < len(p.rs) && (isIdentStart(p.rs[p.pos]) || isDigit(p.rs[p.pos])) {
			p.pos++
		}
		label := string(p.rs[at:p.pos])
		if !slices.Contains(fig.serverDef.labels, label) {
			return p.errAt(at, "%s is selected by %s, not %q", fig.server, strings.Join(fig.serverDef.labels, ", "), label)
		}
		p.skipSpace()
		if p.peek() != '=' {
			return p.errAt(p.pos, `expected "=" after the label %s`, label)
		}
		p.pos++
		p.skipSpace()
		value, err := p.quoted()
		if err != nil {
			return err
		}
		labels[label] = value
		p.skipSpace()
		switch p.peek() {
		case ',':
			p.pos++
		case '}':
		default:
			return p.errAt(p.pos, `expected "," or "}" in the labels`)
		}
	}
	fig.labels = newLabelSet(labels)
	fig.name = fig.server + fig.labels.String()
	return nil
}

// quoted reads a double-quoted label value without escapes (stage and
// replica values are numbers).
func (p *parser) quoted() (string, error) {
	if p.peek() != '"' {
		return "", p.errAt(p.pos, `expected a quoted value, e.g. "1"`)
	}
	start := p.pos + 1
	for i := start; i < len(p.rs); i++ {
		switch p.rs[i] {
		case '"':
			p.pos = i + 1
			return string(p.rs[start:i]), nil
		case '\\':
			return "", p.errAt(i, "label values take no escapes")
		}
	}
	return "", p.errAt(len(p.rs), "the quoted value is not closed")
}

// labelSet is the labels of a server figure, sorted by name: an array,
// so that an SLO stays comparable.
type labelSet [maxSelectLabels]struct{ name, value string }

func newLabelSet(labels map[string]string) labelSet {
	names := make([]string, 0, len(labels))
	for n := range labels {
		names = append(names, n)
	}
	sort.Strings(names)
	var set labelSet
	for i, n := range names {
		set[i].name, set[i].value = n, labels[n]
	}
	return set
}

// Map is the labels as a map; nil for none.
func (s labelSet) Map() map[string]string {
	var m map[string]string
	for _, l := range s {
		if l.name != "" {
			if m == nil {
				m = map[string]string{}
			}
			m[l.name] = l.value
		}
	}
	return m
}

// String is the labels as `{a="x",b="y"}`; "" for none.
func (s labelSet) String() string {
	var parts []string
	for _, l := range s {
		if l.name != "" {
			parts = append(parts, fmt.Sprintf("%s=%q", l.name, l.value))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// observeServer is a server figure's value in its unit.
func observeServer(f figure, server ServerFigures) (float64, string) {
	if server == nil {
		return math.NaN(), "the run has no breakdown of the server's metrics (they were not scraped, " +
			"or the results file has no scrape lines)"
	}
	v, why := server.ServerFigure(f.server, f.labels.Map())
	if why != "" || math.IsNaN(v) {
		if why == "" {
			why = "the server's metrics have no such observations"
		}
		return math.NaN(), why
	}
	if f.kind == kindTime {
		v *= 1000 // seconds to the figure's ms
	}
	return v, ""
}
