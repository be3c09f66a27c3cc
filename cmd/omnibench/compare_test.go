package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	cmpBase   = "../../compare/testdata/base.jsonl"
	cmpSlower = "../../compare/testdata/slower.jsonl"
	cmpSame   = "../../compare/testdata/same.jsonl"
)

// runCompareCmd runs `omnibench compare args...` on a fresh root and returns
// stdout, stderr and the exit status main would use.
func runCompareCmd(t *testing.T, args ...string) (string, string, int, error) {
	t.Helper()
	root := newRootCmd("test")
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"compare"}, args...))
	ctx := context.Background()
	err := root.ExecuteContext(ctx)
	code := 0
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case err != nil:
		code = 1
	}
	return out.String(), errOut.String(), code, err
}

func TestCompareCmdRegressionExit1(t *testing.T) {
	out, _, code, err := runCompareCmd(t, cmpBase, cmpSlower, "--fail-on-regression", "ttfp:5", "--fail-on-regression", "e2e:50")
	if code != 1 || err == nil || !strings.Contains(err.Error(), "ttfp: +31.54% worse, limit 5%") {
		t.Fatalf("code %d, err %v; want 1 and a ttfp regression", code, err)
	}
	if strings.Contains(err.Error(), "e2e") {
		t.Errorf("e2e (+19%% < 50%%) reported as a regression: %v", err)
	}
	// The table is printed before the verdict.
	if !strings.Contains(out, "+31.54%") || !strings.Contains(out, "gate ttfp:5: FAIL") {
		t.Errorf("stdout:\n%s", out)
	}
}

func TestCompareCmdNoRegressionExit0(t *testing.T) {
	out, _, code, err := runCompareCmd(t, cmpBase, cmpSame, "--fail-on-regression", "ttfp:5")
	if code != 0 || err != nil {
		t.Fatalf("code %d, err %v; want 0", code, err)
	}
	if !strings.Contains(out, "gate ttfp:5: ok") {
		t.Errorf("stdout:\n%s", out)
	}
	// Within the limit: slower is +19 % on e2e, the gate allows 25 %.
	if _, _, code, err := runCompareCmd(t, cmpBase, cmpSlower, "--fail-on-regression", "e2e:25"); code != 0 {
		t.Errorf("e2e:25 on a +19%% change: code %d, err %v", code, err)
	}
}

func TestCompareCmdUsageErrorsExit2(t *testing.T) {
	for name, args := range map[string][]string{
		"bad metric":     {cmpBase, cmpSlower, "--fail-on-regression", "latency:5"},
		"bad format":     {cmpBase, cmpSlower, "--format", "yaml"},
		"bad test":       {cmpBase, cmpSlower, "--test", "z"},
		"bad flag value": {cmpBase, cmpSlower, "--alpha", "x"},
		"one file":       {cmpBase},
		"missing file":   {cmpBase, "nope.jsonl"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, code, err := runCompareCmd(t, args...)
			if code != 2 {
				t.Errorf("code %d, err %v; want 2", code, err)
			}
		})
	}
	_, _, _, err := runCompareCmd(t, cmpBase, cmpSlower, "--fail-on-regression", "latency:5")
	if err == nil || !strings.Contains(err.Error(), `unknown metric "latency"`) {
		t.Errorf("bad metric error = %v", err)
	}
}

func TestCompareCmdFormats(t *testing.T) {
	out, _, code, err := runCompareCmd(t, cmpBase, cmpSlower, "--format", "json", "--fail-on-regression", "ttfp:5")
	if code != 1 {
		t.Fatalf("json: code %d, err %v", code, err)
	}
	var v struct {
		Regression bool `json:"regression"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || !v.Regression {
		t.Errorf("json output (%v): %s", err, out)
	}
	out, errOut, code, err := runCompareCmd(t, cmpBase, cmpSame, "--format", "csv", "--test", "utest", "--percentiles", "50")
	// Tidy CSV: one header row, one observation (table, row, column) per line.
	if code != 0 || !strings.HasPrefix(out, "table,row,column,value\n") || !strings.Contains(out, ",ttfp (ms),A median,124.5\n") ||
		!strings.Contains(errOut, "test: utest") {
		t.Errorf("csv: code %d err %v\nstdout:\n%s\nstderr:\n%s", code, err, out, errOut)
	}
}

func TestCompareCmdHTML(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cmp.html")
	if _, _, code, err := runCompareCmd(t, cmpBase, cmpSlower, "--html", path); code != 0 {
		t.Fatalf("code %d, err %v", code, err)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-chart="ab-cdf-ttfp"`, `data-chart="ab-cdf-e2e"`, "base.jsonl", "slower.jsonl"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}
