package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/scenarios"
)

func runScenariosCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newScenariosCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func TestScenariosList(t *testing.T) {
	out, err := runScenariosCmd(t)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range scenarios.Names() {
		if !strings.Contains(out, name) {
			t.Errorf("listing lacks %s:\n%s", name, out)
		}
	}
	out, err = runScenariosCmd(t, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var entries []scenarioEntry
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(scenarios.Names()) || entries[0].Kind == "" {
		t.Errorf("json listing %+v", entries)
	}
	if _, err := runScenariosCmd(t, "--format", "xml"); err == nil {
		t.Error("no error for --format xml")
	}
}

func TestScenariosShow(t *testing.T) {
	out, err := runScenariosCmd(t, "speech-pcm")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := scenarios.Source("speech-pcm")
	if out != string(want) {
		t.Errorf("printed %q, want the embedded YAML", out)
	}
	// The printed YAML of a built-in loads back as a file.
	p := filepath.Join(t.TempDir(), "copy.yaml")
	if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = runScenariosCmd(t, p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "pcm_sample_rate: 24000") {
		t.Errorf("checked file printed as:\n%s", out)
	}
	if _, err := runScenariosCmd(t, "no-such-scenario"); err == nil || !strings.Contains(err.Error(), "tts-short") {
		t.Errorf("unknown name: %v", err)
	}
}
