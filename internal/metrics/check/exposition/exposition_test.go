package exposition

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

const corpus = "../testdata/format"

// formatOf tells a corpus file's format by its extension.
func formatOf(t testing.TB, name string) Format {
	switch filepath.Ext(name) {
	case ".prom":
		return Text
	case ".om", ".txt":
		return OpenMetrics
	}
	t.Fatalf("%s: unknown extension (want .prom for text, .om for OpenMetrics)", name)
	return Text
}

// realWorld lists the valid expositions real servers wrote: the corpus'
// valid cases (Python prometheus_client 0.16 in both formats among them)
// and the goldens of the scrape package.
func realWorld(t testing.TB) map[string]Format {
	out := map[string]Format{
		"../../../../scrape/testdata/python.prom":     Text,
		"../../../../scrape/testdata/go.prom":         Text,
		"../../../../scrape/testdata/openmetrics.txt": OpenMetrics,
	}
	files, err := filepath.Glob(filepath.Join(corpus, "valid", "*"))
	if err != nil || len(files) < 4 {
		t.Fatalf("valid corpus: %v (%d files)", err, len(files))
	}
	for _, f := range files {
		out[f] = formatOf(t, f)
	}
	return out
}

func TestValidCorpus(t *testing.T) {
	for path, f := range realWorld(t) {
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		res := Validate(body, f)
		for _, v := range res.Violations {
			t.Errorf("%s (%s): %s", path, f, v)
		}
		if res.Samples == 0 || res.Families == 0 {
			t.Errorf("%s: read %d samples of %d families", path, res.Samples, res.Families)
		}
		if f == Text {
			if err := expfmtAccepts(body); err != nil {
				t.Errorf("%s: expfmt rejects a valid case: %v", path, err)
			}
		}
	}
}

// TestInvalidCorpus holds every invalid case to exactly the violations its
// line in invalid/EXPECT lists, and checks that every rule has a case.
func TestInvalidCorpus(t *testing.T) {
	fh, err := os.Open(filepath.Join(corpus, "invalid", "EXPECT"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	covered := map[string]bool{}
	listed := map[string]bool{}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		name, want := fields[0], fields[1:]
		listed[name] = true
		body, err := os.ReadFile(filepath.Join(corpus, "invalid", name))
		if err != nil {
			t.Fatal(err)
		}
		res := Validate(body, formatOf(t, name))
		var got []string
		for _, v := range res.Violations {
			got = append(got, v.Rule+"@"+strconv.Itoa(v.Line))
			covered[v.Rule] = true
			if v.Expected == "" || v.Observed == "" {
				t.Errorf("%s: violation without expected/observed: %+v", name, v)
			}
		}
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: violations %v, want %v\n%s", name, got, want, describe(res))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(corpus, "invalid", "*"))
	for _, f := range files {
		if b := filepath.Base(f); b != "EXPECT" && !listed[b] {
			t.Errorf("%s has no line in EXPECT", b)
		}
	}
	for _, f := range []Format{Text, OpenMetrics} {
		for _, r := range Rules(f) {
			if !covered[r.ID] {
				t.Errorf("rule %s (%s) has no invalid case", r.ID, f)
			}
		}
	}
}

func describe(res *Result) string {
	var b strings.Builder
	for _, v := range res.Violations {
		b.WriteString("  " + v.String() + "\n")
	}
	return b.String()
}

func TestTokenAndFamilyNamed(t *testing.T) {
	res := Validate([]byte("# TYPE c_total counter\nc_total{a=\"1\"} NaN\n"), Text)
	if len(res.Violations) != 1 {
		t.Fatalf("violations: %s", describe(res))
	}
	v := res.Violations[0]
	if v.Line != 2 || v.Family != "c_total" || v.Token != `c_total{a="1"} NaN` || v.Rule != RuleCounter {
		t.Errorf("violation = %+v", v)
	}
	long := Validate([]byte("x z"+strings.Repeat("y", 500)+"\n"), Text)
	if tok := long.Violations[0].Token; len(tok) > maxToken+40 || !strings.HasSuffix(tok, "(501 bytes)") {
		t.Errorf("long token not clipped with its length: %q", tok)
	}
}

func TestStopsAtMaxViolations(t *testing.T) {
	body := bytes.Repeat([]byte("1bad 1\n"), MaxViolations+50)
	res := Validate(body, Text)
	if !res.Stopped || len(res.Violations) != MaxViolations {
		t.Errorf("stopped %v after %d violations", res.Stopped, len(res.Violations))
	}
}

// expfmtAccepts runs expfmt's text parser with the 0.0.4 name rules.
func expfmtAccepts(body []byte) error {
	p := expfmt.NewTextParser(model.LegacyValidation)
	_, err := p.TextToMetricFamilies(bytes.NewReader(body))
	return err
}

// TestLongLabelSet: a label repeated in a long set is found (the set is
// indexed past 32 labels), in the sample and in its exemplar.
func TestLongLabelSet(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 40; i++ {
		b.WriteString("l" + strconv.Itoa(i) + `="v",`)
	}
	set := b.String() + `l7="again"`
	res := Validate([]byte("x{"+set+"} 1\n"), Text)
	if len(res.Violations) != 1 || res.Violations[0].Rule != RuleLabelName || res.Violations[0].Token != "l7" {
		t.Errorf("text: %s", describe(res))
	}
	res = Validate([]byte("# TYPE c counter\nc_total{"+strings.TrimSuffix(b.String(), ",")+"} 1 # {"+set+"} 1\n# EOF\n"), OpenMetrics)
	var rules []string
	for _, v := range res.Violations {
		rules = append(rules, v.Rule+"@"+strconv.Itoa(v.Line))
	}
	// The repeated label, and the exemplar's labels over 128 runes.
	if strings.Join(rules, " ") != "label-name@2 exemplar@2" || res.Violations[0].Token != "l7" {
		t.Errorf("OpenMetrics exemplar: %v\n%s", rules, describe(res))
	}
}
