package scenarios

import (
	"strings"
	"testing"
)

func TestParseSLOsScenarioThenFlags(t *testing.T) {
	sc := &Scenario{Name: "mine", SLOs: []string{"audio_ttfp_p95<500ms"}}
	slos, err := sc.ParseSLOs([]string{"e2e_p50<10s"})
	if err != nil {
		t.Fatal(err)
	}
	if len(slos) != 2 || slos[0].Expr != "audio_ttfp_p95<500ms" || slos[1].Expr != "e2e_p50<10s" {
		t.Fatalf("SLOs %+v: want the scenario's, then the flag's", slos)
	}
}

func TestParseSLOsReportsEverySource(t *testing.T) {
	sc := &Scenario{Name: "mine", SLOs: []string{"nonsense"}}
	_, err := sc.ParseSLOs([]string{"also nonsense"})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"scenario mine: slos[0]", "--slo"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q: want it to name %q", err, want)
		}
	}
}
