// Package schemas generates the JSON Schemas (draft 2020-12) of the files
// other tools read: one line of a results JSONL file and the run summary
// document (run --summary, run --format json). The schemas are reflected
// from the Go types that write those files, so they cannot drift from the
// code by hand; they are committed under docs/schema/, and a test in
// cmd/omnibench fails when the committed files are stale or when real
// output does not validate against them.
//
// Every object the Go types close (a struct) is closed in the schema too
// ("additionalProperties": false): a field added to the output without
// regenerating the schema fails validation, because the files are an
// interface.
package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"strings"
	"time"

	"github.com/invopop/jsonschema"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/internal/run/slo"
	"github.com/omnibench/omnibench/scrape"
	"github.com/omnibench/omnibench/stats"
)

// File names of the generated schemas, relative to docs/schema/.
const (
	ResultsFile = "results.schema.json"
	SummaryFile = "summary.schema.json"
)

// baseID is the root of the schemas' $id: a stable name, not a fetchable
// address.
const baseID = "https://github.com/omnibench/omnibench/docs/schema/"

// modulePath is the import path of the module whose doc comments become
// the schemas' descriptions.
const modulePath = "github.com/omnibench/omnibench"

// Generate returns the schema files by name (ResultsFile, SummaryFile),
// each indented JSON ending in a newline. moduleRoot is the repository's
// root directory: the Go doc comments of the types' fields there become
// the descriptions of their properties.
func Generate(moduleRoot string) (map[string][]byte, error) {
	r, err := reflector(moduleRoot)
	if err != nil {
		return nil, err
	}
	resultsSchema, err := resultsLine(r)
	if err != nil {
		return nil, err
	}
	summarySchema, err := summaryDocument(r)
	if err != nil {
		return nil, err
	}
	summarySchema.ID = baseID + SummaryFile
	summarySchema.Title = "omnibench run summary document"
	summarySchema.Description = "The JSON summary of one run: omnibench run --summary FILE, or --format json on stdout."
	files := map[string][]byte{}
	for name, s := range map[string]*jsonschema.Schema{ResultsFile: resultsSchema, SummaryFile: summarySchema} {
		b, err := marshal(s)
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		files[name] = b
	}
	return files, nil
}

// resultsLine is the schema of one line of a results JSONL file: the
// header line first, one request line per request, and the client line
// last, told apart by their "type".
func resultsLine(r *jsonschema.Reflector) (*jsonschema.Schema, error) {
	header := r.Reflect(&results.Header{})
	request := r.Reflect(&results.Record{})
	client := r.Reflect(&clientLine{})
	scrapeLine := r.Reflect(&results.Scrape{})
	root := &jsonschema.Schema{
		Version:     jsonschema.Version,
		ID:          baseID + ResultsFile,
		Title:       "omnibench results JSONL line",
		Description: "One line of a results file (run --out): the header line first, a request line per request as it finished, scrape lines (the first and last /metrics scrape and those during the run, of the families the breakdown reads), and the client line last (absent when the run was killed).",
		Definitions: jsonschema.Definitions{},
	}
	for _, part := range []struct {
		s        *jsonschema.Schema
		def      string
		lineType string
	}{
		{header, "ResultsHeader", results.TypeHeader},
		{request, "ResultsRecord", results.TypeRequest},
		{client, "SchemasClientLine", results.TypeClient},
		{scrapeLine, "ResultsScrape", results.TypeScrape},
	} {
		for name, d := range part.s.Definitions {
			root.Definitions[name] = d
		}
		def, ok := root.Definitions[part.def]
		if !ok {
			return nil, fmt.Errorf("results schema: no definition %s among the reflected types", part.def)
		}
		typ, ok := def.Properties.Get("type")
		if !ok {
			return nil, fmt.Errorf("results schema: %s has no type property", part.def)
		}
		typ.Const = part.lineType
		root.OneOf = append(root.OneOf, &jsonschema.Schema{Ref: "#/$defs/" + part.def})
	}
	return root, nil
}

// summaryDocument is the schema of runner.Document, with its "slos" (raw
// JSON in the Go type, written from []slo.Result) described as what is
// written there.
func summaryDocument(r *jsonschema.Reflector) (*jsonschema.Schema, error) {
	doc := r.Reflect(&runner.Document{})
	results := r.Reflect(&sloResult{})
	for name, d := range results.Definitions {
		doc.Definitions[name] = d
	}
	def, ok := doc.Definitions["RunnerDocument"]
	if !ok {
		return nil, fmt.Errorf("summary schema: no definition RunnerDocument among the reflected types")
	}
	slos, ok := def.Properties.Get("slos")
	if !ok {
		return nil, fmt.Errorf("summary schema: RunnerDocument has no slos property")
	}
	slos.Type = "array"
	slos.Items = &jsonschema.Schema{Ref: "#/$defs/SchemasSloResult"}
	slos.Description = "The verdict on each SLO (--slo, the scenario's, --max-error-rate), in the order given; absent without SLOs."
	nullableBreakdownNumbers(doc.Definitions)
	return doc, nil
}

// nullableBreakdownNumbers describes the numbers of the breakdown's types
// as they are written: null where undefined (a figure without
// observations, a part that cannot be split), as their MarshalJSON does.
func nullableBreakdownNumbers(defs jsonschema.Definitions) {
	for name, d := range defs {
		if !strings.HasPrefix(name, "Breakdown") || d.Properties == nil {
			continue
		}
		for p := d.Properties.Oldest(); p != nil; p = p.Next() {
			if p.Value.Type == "number" {
				p.Value.OneOf = []*jsonschema.Schema{{Type: "number"}, {Type: "null"}}
				p.Value.Type = ""
			}
		}
	}
}

// sloResult mirrors the JSON slo.Result writes (by its MarshalJSON, which
// writes an undefined figure as null): one element of the summary's
// "slos".
type sloResult struct {
	// SLO is the objective as parsed.
	SLO slo.SLO `json:"slo"`
	// Observed is the run's value of the figure, in slo.unit; null when the
	// figure has no data.
	Observed stats.Float `json:"observed"`
	// Pass says whether the SLO held.
	Pass bool `json:"pass"`
	// Margin is the distance from the limit in slo.unit, positive on the
	// passing side; null when the figure has no data.
	Margin stats.Float `json:"margin"`
	// NoData is set when the figure could not be observed; such an SLO
	// always fails.
	NoData bool `json:"no_data,omitempty"`
	// Message says the verdict in one line.
	Message string `json:"message"`
}

// clientLine mirrors the results package's last line: its type and the
// client's health, inlined.
type clientLine struct {
	// Type is "client".
	Type string `json:"type"`
	results.ClientHealth
}

// reflector returns the reflector every schema is made with: closed
// objects, a field required unless it is omitted when empty, and the
// types that marshal themselves described by hand (typeSchema), and the
// doc comments under moduleRoot as descriptions.
func reflector(moduleRoot string) (*jsonschema.Reflector, error) {
	comments, err := docComments(moduleRoot)
	if err != nil {
		return nil, err
	}
	return &jsonschema.Reflector{
		BaseSchemaID:  baseID,
		Mapper:        typeSchema,
		Namer:         definitionName,
		LookupComment: lookupComment(comments),
	}, nil
}

// definitionName names a type's definition in $defs by its package and
// name ("StatsSummary", "SummarySummary"): type names alone collide across
// packages.
func definitionName(t reflect.Type) string {
	if t.PkgPath() == "" { // a builtin, a slice or a map: never a definition
		return t.Name()
	}
	return upperFirst(path.Base(t.PkgPath())) + upperFirst(t.Name())
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// typeSchema describes the types whose JSON encoding is not what
// reflection of their fields would say; nil lets reflection describe the
// rest.
func typeSchema(t reflect.Type) *jsonschema.Schema {
	switch t {
	case reflect.TypeFor[time.Time]():
		return &jsonschema.Schema{Type: "string", Format: "date-time"}
	case reflect.TypeFor[json.RawMessage]():
		return &jsonschema.Schema{Description: "Any JSON value, documented in docs/run.md."}
	case reflect.TypeFor[stats.Float]():
		return nullableNumber("A number, or null when undefined (NaN or infinite).")
	case reflect.TypeFor[scrape.JSONFloat]():
		return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
			{Type: "number"},
			{Type: "string", Enum: []any{"NaN", "+Inf", "-Inf"}},
		}}
	case reflect.TypeFor[stats.Summary]():
		return distribution()
	}
	return nil
}

func nullableNumber(description string) *jsonschema.Schema {
	return &jsonschema.Schema{
		Description: description,
		OneOf:       []*jsonschema.Schema{{Type: "number"}, {Type: "null"}},
	}
}

// distribution is stats.Summary as its MarshalJSON writes it.
func distribution() *jsonschema.Schema {
	props := jsonschema.NewProperties()
	props.Set("n", &jsonschema.Schema{Type: "integer", Description: "Values summarised."})
	for _, name := range []string{"mean", "median", "std", "min", "max"} {
		props.Set(name, nullableNumber("null when undefined (no values, or the std of one)."))
	}
	pv := jsonschema.NewProperties()
	pv.Set("p", nullableNumber("The percentile, 0 to 100."))
	pv.Set("value", nullableNumber("Its value, interpolated as numpy's default does."))
	props.Set("percentiles", &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{
		Type: "object", Properties: pv, Required: []string{"p", "value"}, AdditionalProperties: jsonschema.FalseSchema,
	}})
	props.Set("dropped", &jsonschema.Schema{Type: "integer", Description: "Values left out as not finite."})
	props.Set("warnings", &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "string"}})
	return &jsonschema.Schema{
		Type:                 "object",
		Description:          "A distribution's statistics.",
		Properties:           props,
		Required:             []string{"n", "mean", "median", "std", "min", "max", "percentiles"},
		AdditionalProperties: jsonschema.FalseSchema,
	}
}

// marshal writes s as indented JSON with a final newline.
func marshal(s *jsonschema.Schema) ([]byte, error) {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false) // descriptions say "->" and "<", not \u003e
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
