// Package dashboards holds omnibench's Grafana dashboards (Grafana 10 JSON
// model) and reads their queries, so tests can run every panel's PromQL
// against a real Prometheus and tools can ship the JSON.
//
// omnibench.json shows the client's series (omnibench:*, from `omnibench run
// --metrics-addr`, --metrics-out or --push) beside the server's (vllm:omni_*
// or vllm_omni:*, chosen by the server_prefix variable) for one model
// (model_name variable): TTFP, underrun, continuity, RTF and end-to-end
// latency quantiles, request and error rates, and the load generator's
// health.
package dashboards

import (
	"bytes"
	_ "embed" // the dashboard JSON is embedded
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

//go:embed omnibench.json
var omnibenchJSON []byte // read-only: Omnibench hands out copies

// Omnibench returns the client-vs-server dashboard's JSON.
func Omnibench() []byte { return bytes.Clone(omnibenchJSON) }

// Query is one panel target.
type Query struct {
	Panel  string // panel title
	RefID  string
	Expr   string // PromQL with Grafana variables ($model_name, $__rate_interval, ...)
	Legend string
}

// Variable is one templating variable.
type Variable struct {
	Name    string
	Type    string // datasource, query, custom, ...
	Query   string // the query (query variables) or the comma-separated values (custom)
	Current string // the current value saved in the dashboard ("" when none)
}

// dashboard is the part of Grafana's JSON model this package reads.
type dashboard struct {
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name    string          `json:"name"`
			Type    string          `json:"type"`
			Query   json.RawMessage `json:"query"`
			Current struct {
				Value json.RawMessage `json:"value"`
			} `json:"current"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	Title   string `json:"title"`
	Type    string `json:"type"`
	Targets []struct {
		RefID  string `json:"refId"`
		Expr   string `json:"expr"`
		Legend string `json:"legendFormat"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row holds its panels
}

// Queries returns every panel target of a dashboard, rows included, in
// panel order.
func Queries(dashboardJSON []byte) ([]Query, error) {
	var d dashboard
	if err := json.Unmarshal(dashboardJSON, &d); err != nil {
		return nil, fmt.Errorf("dashboards: parsing the dashboard JSON: %w", err)
	}
	var out []Query
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				out = append(out, Query{Panel: p.Title, RefID: t.RefID, Expr: t.Expr, Legend: t.Legend})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out, nil
}

// Variables returns a dashboard's templating variables.
func Variables(dashboardJSON []byte) ([]Variable, error) {
	var d dashboard
	if err := json.Unmarshal(dashboardJSON, &d); err != nil {
		return nil, fmt.Errorf("dashboards: parsing the dashboard JSON: %w", err)
	}
	out := make([]Variable, 0, len(d.Templating.List))
	for i, v := range d.Templating.List {
		q, err := stringOrQuery(v.Query)
		if err != nil {
			return nil, fmt.Errorf("dashboards: templating.list[%d] (%s): query: %w", i, v.Name, err)
		}
		var cur string
		if len(v.Current.Value) > 0 {
			// A multi-value variable saves a list; this package reads single values only.
			if err := json.Unmarshal(v.Current.Value, &cur); err != nil {
				return nil, fmt.Errorf("dashboards: templating.list[%d] (%s): current value: %w", i, v.Name, err)
			}
		}
		out = append(out, Variable{Name: v.Name, Type: v.Type, Query: q, Current: cur})
	}
	return out, nil
}

// stringOrQuery reads a variable's query, which Grafana saves as a string
// or, for Prometheus query variables since Grafana 10, as {"query": ...}.
func stringOrQuery(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var obj struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", err
	}
	return obj.Query, nil
}

// variableRef matches Grafana's $name, ${name} and ${name:format} forms.
func variableRef() *regexp.Regexp {
	return regexp.MustCompile(`\$\{([A-Za-z0-9_]+)(?::[^}]*)?\}|\$([A-Za-z0-9_]+)`)
}

// VariableNames returns the names of the variables expr uses, in order of
// first use.
func VariableNames(expr string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range variableRef().FindAllStringSubmatch(expr, -1) {
		name := m[1] + m[2]
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// Expand substitutes variables in expr as Grafana does for single values
// (no formatting): values[name] for $name and ${name}. It returns an error
// naming the first variable without a value.
func Expand(expr string, values map[string]string) (string, error) {
	var missing []string
	out := variableRef().ReplaceAllStringFunc(expr, func(ref string) string {
		name := strings.Trim(strings.TrimPrefix(ref, "$"), "{}")
		name, _, _ = strings.Cut(name, ":")
		v, ok := values[name]
		if !ok {
			missing = append(missing, name)
			return ref
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("dashboards: no value for variable %q in %s", missing[0], expr)
	}
	return out, nil
}
