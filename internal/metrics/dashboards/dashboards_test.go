package dashboards

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/metrics/exporter"
	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
)

// grafanaBuiltins are Grafana's own variables the dashboard may use.
func grafanaBuiltins() map[string]bool {
	return map[string]bool{"__rate_interval": true, "__interval": true, "__range": true}
}

func TestDashboardStructure(t *testing.T) {
	var d struct {
		UID           string `json:"uid"`
		Title         string `json:"title"`
		SchemaVersion int    `json:"schemaVersion"`
		Panels        []struct {
			ID         int    `json:"id"`
			Type       string `json:"type"`
			Title      string `json:"title"`
			Datasource *struct {
				UID string `json:"uid"`
			} `json:"datasource"`
			GridPos struct{ H, W, X, Y int } `json:"gridPos"`
			Targets []struct {
				RefID      string `json:"refId"`
				Datasource *struct {
					UID string `json:"uid"`
				} `json:"datasource"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(Omnibench(), &d); err != nil {
		t.Fatal(err)
	}
	if d.UID == "" || d.Title == "" || d.SchemaVersion < 36 {
		t.Errorf("uid %q, title %q, schemaVersion %d: want a uid, a title and a Grafana 10 schema", d.UID, d.Title, d.SchemaVersion)
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d used twice", p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %q: gridPos %+v out of the 24-column grid", p.Title, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: datasource %+v, want the ${datasource} variable", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no queries", p.Title)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if tg.RefID == "" || refs[tg.RefID] {
				t.Errorf("panel %q: refId %q empty or repeated", p.Title, tg.RefID)
			}
			refs[tg.RefID] = true
			if tg.Datasource == nil || tg.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q target %s: datasource %+v, want ${datasource}", p.Title, tg.RefID, tg.Datasource)
			}
		}
	}
}

func TestDashboardVariables(t *testing.T) {
	vars, err := Variables(Omnibench())
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Variable{}
	for _, v := range vars {
		byName[v.Name] = v
	}
	if v := byName["model_name"]; v.Type != "query" || !strings.HasPrefix(v.Query, "label_values(") || !strings.HasSuffix(v.Query, ", model_name)") {
		t.Errorf("model_name variable %+v, want a label_values(..., model_name) query", v)
	}
	if v := byName["server_prefix"]; v.Type != "custom" || v.Current != omnimetrics.PrefixDesign ||
		v.Query != omnimetrics.PrefixDesign+","+omnimetrics.PrefixCurrent {
		t.Errorf("server_prefix variable %+v, want the two server prefixes, design form current", v)
	}
	if v := byName["datasource"]; v.Type != "datasource" || v.Query != "prometheus" {
		t.Errorf("datasource variable %+v", v)
	}
}

// TestQueriesUseKnownFamiliesAndVariables checks every query against the
// families the two sides export (the core's table under both prefixes, and
// the exporter's own families) and the dashboard's variables.
func TestQueriesUseKnownFamiliesAndVariables(t *testing.T) {
	qs, err := Queries(Omnibench())
	if err != nil {
		t.Fatal(err)
	}
	vars, err := Variables(Omnibench())
	if err != nil {
		t.Fatal(err)
	}
	defined := grafanaBuiltins()
	for _, v := range vars {
		defined[v.Name] = true
	}
	client := map[string]omnimetrics.FamilySpec{}
	server := map[string]omnimetrics.FamilySpec{}
	for _, s := range omnimetrics.PipelineFamilies() {
		client[s.Name], server[s.Name] = s, s
	}
	for _, s := range exporter.Families() {
		client[s.Name] = s
	}
	name := regexp.MustCompile(`(omnibench:|\$\{server_prefix\})([a-z0-9_]+)`)
	sides := map[string]bool{}
	for _, q := range qs {
		for _, v := range VariableNames(q.Expr) {
			if !defined[v] {
				t.Errorf("panel %q %s: undefined variable $%s", q.Panel, q.RefID, v)
			}
		}
		if !strings.Contains(q.Expr, `model_name="$model_name"`) {
			t.Errorf("panel %q %s does not filter on model_name: %s", q.Panel, q.RefID, q.Expr)
		}
		ms := name.FindAllStringSubmatch(q.Expr, -1)
		if len(ms) == 0 {
			t.Errorf("panel %q %s names no known family: %s", q.Panel, q.RefID, q.Expr)
		}
		for _, m := range ms {
			fams := client
			side := "client"
			if m[1] != omnimetrics.PrefixClient {
				fams, side = server, "server"
			}
			sides[q.Panel+"/"+side] = true
			if !knownSeries(fams, m[2]) {
				t.Errorf("panel %q %s: %s%s is not a %s series", q.Panel, q.RefID, m[1], m[2], side)
			}
		}
		if strings.Contains(q.Expr, "histogram_quantile") && !strings.Contains(q.Expr, "sum by (le)") {
			t.Errorf("panel %q %s: histogram_quantile without sum by (le): %s", q.Panel, q.RefID, q.Expr)
		}
	}
	// The audio and request panels compare the two sides.
	for _, title := range []string{"Time to first audio packet, p50 / p95", "Audio underrun, p95",
		"Continuity OK rate (threshold 100 ms)", "Real-time factor, p50", "Request rate by finish reason", "Errors"} {
		if !sides[title+"/client"] || !sides[title+"/server"] {
			t.Errorf("panel %q does not show both sides", title)
		}
	}
}

// knownSeries reports whether name is a family of fams or one of a
// histogram's _bucket, _sum or _count series.
func knownSeries(fams map[string]omnimetrics.FamilySpec, name string) bool {
	if _, ok := fams[name]; ok {
		return true
	}
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suf); ok {
			if s, ok := fams[base]; ok && s.Type == omnimetrics.TypeHistogram {
				return true
			}
		}
	}
	return false
}

func TestExpand(t *testing.T) {
	got, err := Expand(`rate(${server_prefix}x{m="$model_name"}[$__rate_interval]) + ${model_name:raw}`,
		map[string]string{"server_prefix": "vllm:omni_", "model_name": "Qwen/Q", "__rate_interval": "1m"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `rate(vllm:omni_x{m="Qwen/Q"}[1m]) + Qwen/Q`; got != want {
		t.Errorf("Expand = %s, want %s", got, want)
	}
	if _, err := Expand("$missing", nil); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Expand with a missing variable: %v", err)
	}
	if got := VariableNames("$a ${b} $a ${c:csv}"); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("VariableNames = %v", got)
	}
}

func TestQueriesRejectsBadJSON(t *testing.T) {
	if _, err := Queries([]byte("{")); err == nil {
		t.Error("Queries accepted broken JSON")
	}
	if _, err := Variables([]byte(`{"templating":{"list":[{"name":"x","query":5}]}}`)); err == nil {
		t.Error("Variables accepted a numeric query")
	}
}

// TestOmnibenchReturnsCopy guards the embedded bytes against callers.
func TestOmnibenchReturnsCopy(t *testing.T) {
	a := Omnibench()
	a[0] = 'x'
	if Omnibench()[0] == 'x' {
		t.Error("Omnibench hands out the embedded bytes themselves")
	}
}
