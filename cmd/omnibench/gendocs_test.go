package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
)

// regenerate is what a stale-docs failure tells the reader to run.
const regenerate = "run `go run ./cmd/omnibench gen-docs` from the repository's root and commit the result"

// TestGeneratedDocsAreCurrent compares docs/cli, docs/man and docs/schema
// with what gen-docs generates from the code now: a flag, command, help
// topic or output field changed without regenerating fails here.
func TestGeneratedDocsAreCurrent(t *testing.T) {
	t.Parallel()
	want, err := generatedDocs("../..")
	if err != nil {
		t.Fatal(err)
	}
	committed := readGeneratedDirs(t, "../../docs")
	for _, name := range sortedKeys(want) {
		got, ok := committed[name]
		switch {
		case !ok:
			t.Errorf("docs/%s is missing: %s", name, regenerate)
		case !bytes.Equal(got, want[name]):
			t.Errorf("docs/%s is stale: %s", name, regenerate)
		}
	}
	for _, name := range sortedKeys(committed) {
		if _, ok := want[name]; !ok {
			t.Errorf("docs/%s is no longer generated (a command was removed or renamed): %s", name, regenerate)
		}
	}
}

// TestGenDocsCommandWritesTheSet runs the hidden command into an empty
// directory holding one page of a command that no longer exists: it
// writes every generated file and removes the stale page.
func TestGenDocsCommandWritesTheSet(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	stale := filepath.Join(out, cliDir, "omnibench_gone.md")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("a removed command\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, said := execContract(t, "gen-docs", "--root", "../..", "--out", out); code != 0 {
		t.Fatalf("gen-docs: exit %d: %s", code, said)
	}
	want, err := generatedDocs("../..")
	if err != nil {
		t.Fatal(err)
	}
	got := readGeneratedDirs(t, out)
	if !slices.Equal(sortedKeys(got), sortedKeys(want)) {
		t.Fatalf("gen-docs wrote %q, want %q", sortedKeys(got), sortedKeys(want))
	}
	for name, b := range want {
		if !bytes.Equal(got[name], b) {
			t.Errorf("%s: written content differs from the generated", name)
		}
	}
	for _, name := range []string{"cli/omnibench_run.md", "man/omnibench-run.1", "cli/omnibench_help_slo.md", "schema/results.schema.json", "schema/summary.schema.json"} {
		if _, ok := want[name]; !ok {
			t.Errorf("%s not generated", name)
		}
	}
}

// readGeneratedDirs reads every file of the generated directories under
// dir, keyed as generatedDocs keys them.
func readGeneratedDirs(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, sub := range []string{cliDir, manDir, schemaDir} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			t.Errorf("docs/%s: %v: %s", sub, err, regenerate)
			continue
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, sub, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			files[sub+"/"+e.Name()] = b
		}
	}
	return files
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
