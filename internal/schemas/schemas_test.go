package schemas

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestGenerateIsDeterministic checks that two generations are byte for
// byte the same: the committed files are compared with a fresh generation,
// so any map order or clock in the output would make that test flaky.
func TestGenerateIsDeterministic(t *testing.T) {
	first, err := Generate("../..")
	if err != nil {
		t.Fatal(err)
	}
	second, err := Generate("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ResultsFile, SummaryFile} {
		if len(first[name]) == 0 || !bytes.Equal(first[name], second[name]) {
			t.Errorf("%s: %d bytes, differs between two generations: %v", name, len(first[name]), !bytes.Equal(first[name], second[name]))
		}
	}
}

// TestResultsLineTellsTypesApart checks the results schema's top level: one
// of the three line types, each pinned by its "type" constant, and every
// definition a closed object.
func TestResultsLineTellsTypesApart(t *testing.T) {
	files, err := Generate("../..")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Schema string `json:"$schema"`
		OneOf  []struct {
			Ref string `json:"$ref"`
		} `json:"oneOf"`
		Defs map[string]struct {
			Type                 string          `json:"type"`
			AdditionalProperties json.RawMessage `json:"additionalProperties"`
			Properties           map[string]struct {
				Const string `json:"const"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(files[ResultsFile], &s); err != nil {
		t.Fatal(err)
	}
	if s.Schema != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema %q, want draft 2020-12", s.Schema)
	}
	want := map[string]string{"#/$defs/ResultsHeader": "header", "#/$defs/ResultsRecord": "request", "#/$defs/SchemasClientLine": "client",
		"#/$defs/ResultsScrape": "scrape"}
	if len(s.OneOf) != len(want) {
		t.Fatalf("oneOf %v, want the four line types", s.OneOf)
	}
	for _, alt := range s.OneOf {
		name := alt.Ref[len("#/$defs/"):]
		if got := s.Defs[name].Properties["type"].Const; got != want[alt.Ref] {
			t.Errorf("%s: type const %q, want %q", alt.Ref, got, want[alt.Ref])
		}
	}
	for name, d := range s.Defs {
		if d.Type == "object" && string(d.AdditionalProperties) != "false" {
			t.Errorf("%s is not closed: additionalProperties %s", name, d.AdditionalProperties)
		}
	}
}
