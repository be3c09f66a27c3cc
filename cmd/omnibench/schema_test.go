package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/schemas"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/scenarios"
)

// TestOutputMatchesCommittedSchemas runs every request kind against the
// simulator and validates each line of the results file and the summary
// document against the committed schemas in docs/schema/. The schemas close
// every object, so a field added to the output without regenerating them
// fails here.
func TestOutputMatchesCommittedSchemas(t *testing.T) {
	t.Parallel()
	lineSchema := compileSchema(t, schemas.ResultsFile)
	summarySchema := compileSchema(t, schemas.SummaryFile)
	for _, tc := range []struct {
		kind, scenario string
		args           []string
	}{
		{results.KindChat, "chat-voice", nil},
		{results.KindSpeech, "tts-short", nil},
		{results.KindSpeechSSE, "tts-short", nil},
		{results.KindSpeechWS, "tts-short", []string{"--utterances-per-session", "2", "--text-rate", "1000"}},
		{results.KindRealtime, "tts-short", []string{"--turns-per-session", "2"}},
		{results.KindRealtimeAudio, "voice-chat", nil},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			sc, err := scenarios.Get(tc.scenario)
			if err != nil {
				t.Fatal(err)
			}
			scfg := simulator.DefaultConfig()
			scfg.Timing = sweepFastTiming()
			scfg.Model = sc.Model
			url := sweepStartSimulator(t, scfg)
			dir := t.TempDir()
			out, summary := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "summary.json")
			args := append([]string{"run", "--url", url, "--scenario", tc.scenario, "--kind", tc.kind, "-n", "2", "-c", "2",
				"--warmup", "0", "--settle", "0", "--out", out, "--summary", summary, "--format", "json",
				"--slo", "e2e_p95<1m", "--slo", "error_rate<=50%"}, tc.args...)
			stdout, stderr, code := sweepExec(t, args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			validateJSONLines(t, lineSchema, out)
			validateDocument(t, summarySchema, "the summary file", readFile(t, summary))
			validateDocument(t, summarySchema, "the --format json output", []byte(stdout))
		})
	}
}

// TestSchemasRejectAnUnknownField checks that the committed schemas are
// closed: a line or document with a field they do not describe is invalid.
func TestSchemasRejectAnUnknownField(t *testing.T) {
	t.Parallel()
	lineSchema := compileSchema(t, schemas.ResultsFile)
	summarySchema := compileSchema(t, schemas.SummaryFile)
	header := `{"type":"header","schema_version":1,"version":"dev","started_at":"2026-01-01T00:00:00Z","target":"http://127.0.0.1:1","simulator":true,"scenario":"s","seed":1,"mode":"closed","concurrency":1,"rate":0,"arrival":"","requests":1,"duration_s":0,"warmup":0,"model":"m","kind":"chat","percentiles":[50],"continuity_thresholds_ms":[100],"new_field":1}`
	if err := validateJSON(lineSchema, []byte(header)); err == nil {
		t.Errorf("a header line with an unknown field validates")
	}
	if err := validateJSON(lineSchema, []byte(`{"type":"client","saturated":false,"client_delay_ms":0,"new_field":1}`)); err == nil {
		t.Errorf("a client line with an unknown field validates")
	}
	if err := validateJSON(lineSchema, []byte(`{"type":"client","saturated":false,"client_delay_ms":0}`)); err != nil {
		t.Errorf("a client line does not validate: %v", err)
	}
	if err := validateJSON(summarySchema, []byte(`{"schema_version":1,"new_field":1}`)); err == nil {
		t.Errorf("a summary document with an unknown field validates")
	}
}

// compileSchema compiles the committed docs/schema/name.
func compileSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(readFile(t, filepath.Join("../../docs/schema", name))))
	if err != nil {
		t.Fatalf("docs/schema/%s: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(name, doc); err != nil {
		t.Fatalf("docs/schema/%s: %v", name, err)
	}
	s, err := c.Compile(name)
	if err != nil {
		t.Fatalf("docs/schema/%s: %v", name, err)
	}
	return s
}

// validateJSONLines validates every line of the results file at path, and
// checks that it has a header, request and client line.
func validateJSONLines(t *testing.T, s *jsonschema.Schema, path string) {
	t.Helper()
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(readFile(t, path)))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		if err := validateJSON(s, sc.Bytes()); err != nil {
			t.Errorf("results line %d does not match docs/schema/%s (%s): %v\n%.400s", n, schemas.ResultsFile, regenerate, err, sc.Text())
		}
		for _, typ := range []string{results.TypeHeader, results.TypeRequest, results.TypeClient} {
			seen[typ] = seen[typ] || strings.HasPrefix(sc.Text(), `{"type":"`+typ+`"`)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 || !seen[results.TypeHeader] || !seen[results.TypeRequest] || !seen[results.TypeClient] {
		t.Errorf("results file line types %v: want a header, requests and a client line", seen)
	}
}

func validateDocument(t *testing.T, s *jsonschema.Schema, what string, data []byte) {
	t.Helper()
	if err := validateJSON(s, data); err != nil {
		t.Errorf("%s does not match docs/schema/%s (%s): %v", what, schemas.SummaryFile, regenerate, err)
	}
}

func validateJSON(s *jsonschema.Schema, data []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
