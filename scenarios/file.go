package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Load reads and validates a scenario file. Decoding is strict: an unknown
// field is an error naming the file, line and field. A relative prompts file
// path is resolved against the scenario file's directory; an empty name
// becomes the file name without its extension.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	s, err := parse(path, data)
	if err != nil {
		return nil, err
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	if src := s.PromptSpec.Source; src != "" && !isBuiltinSource(src) && !filepath.IsAbs(src) {
		s.PromptSpec.Source = filepath.Join(filepath.Dir(path), src)
	}
	if err := validateAt(path, data, s); err != nil {
		return nil, err
	}
	return s, nil
}

// parse decodes one scenario document strictly and applies defaults. file
// names the source in errors.
func parse(file string, data []byte) (*Scenario, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &PositionError{File: file, Msg: "empty scenario file"}
		}
		var root yaml.Node
		_ = yaml.Unmarshal(data, &root) // a type error leaves a parsed tree; a syntax error none
		return nil, yamlError(file, &root, err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, yamlError(file, nil, err)
		}
		return nil, &PositionError{File: file, Line: next.Line, Msg: "a scenario file holds one YAML document; found a second"}
	}
	// yaml.v3 truncates 4.5 into an int field without a word: refuse it.
	var root yaml.Node
	_ = yaml.Unmarshal(data, &root) // decoded above: cannot fail
	if errs := wholeNumbers(file, documentOf(&root), reflect.TypeFor[Scenario](), ""); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	s.applyDefaults()
	return &s, nil
}

// wholeNumbers reports every integer field of t (recursively, by YAML tag)
// whose value in the mapping n is not a YAML integer, such as requests: 4.5.
func wholeNumbers(file string, n *yaml.Node, t reflect.Type, prefix string) []error {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var errs []error
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		kv := mappingValue(n, name)
		if name == "" || name == "-" || kv == nil {
			continue
		}
		switch f.Type.Kind() {
		case reflect.Struct:
			errs = append(errs, wholeNumbers(file, kv.value, f.Type, prefix+name+".")...)
		case reflect.Int, reflect.Int64, reflect.Int32:
			if f.Type == reflect.TypeFor[time.Duration]() {
				continue
			}
			if v := kv.value; v.Kind == yaml.ScalarNode && v.ShortTag() != "!!int" {
				errs = append(errs, &PositionError{File: file, Line: v.Line, Field: prefix + name,
					Msg: fmt.Sprintf("must be a whole number (got %s)", v.Value)})
			}
		}
	}
	return errs
}

// documentOf is the top node of a parsed document.
func documentOf(root *yaml.Node) *yaml.Node {
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		return root.Content[0]
	}
	return root
}

// validateAt validates s and attaches each field error's line in data.
func validateAt(file string, data []byte, s *Scenario) error {
	err := s.Validate()
	if err == nil {
		return nil
	}
	var root yaml.Node
	_ = yaml.Unmarshal(data, &root) // already decoded once: cannot fail
	var errs []error
	for _, e := range unjoin(err) {
		var fe *FieldError
		if errors.As(e, &fe) {
			errs = append(errs, &PositionError{File: file, Line: lineOf(&root, fe.Field), Field: fe.Field, Msg: fe.Msg})
		} else {
			errs = append(errs, &PositionError{File: file, Msg: e.Error()})
		}
	}
	return errors.Join(errs...)
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

var (
	yamlLineRE     = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	unknownFieldRE = regexp.MustCompile(`^field (.+) not found in type (\S+)$`)
)

// yamlError turns a yaml.v3 error into PositionErrors: one per problem, with
// unknown fields named by their YAML path and the fields allowed there, a
// type error named by the field on its line (root is the parsed document, nil
// when there is none), and a parser error moved to its real line.
func yamlError(file string, root *yaml.Node, err error) error {
	var te *yaml.TypeError
	msgs := []string{err.Error()}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	var errs []error
	for _, msg := range msgs {
		pe := &PositionError{File: file, Msg: strings.TrimPrefix(msg, "yaml: ")}
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			pe.Line, _ = strconv.Atoi(m[1])
			pe.Msg = m[2]
			if parserError(pe.Msg) {
				// yaml.v3 prints the parser's 0-based line (it adds one
				// only for scanner errors).
				pe.Line++
			}
		}
		if pe.Msg == "found unexpected end of stream" {
			pe.Msg += " (an unclosed quote or bracket before it?)"
		}
		if strings.HasPrefix(pe.Msg, "cannot unmarshal") && root != nil && pe.Line > 0 {
			pe.Field = fieldAtLine(documentOf(root), pe.Line, "")
			if strings.HasSuffix(pe.Msg, "into time.Duration") {
				pe.Msg += " (write a duration with its unit, e.g. 30s or 1m30s)"
			}
		}
		if m := unknownFieldRE.FindStringSubmatch(pe.Msg); m != nil {
			section, known := sectionOf(m[2])
			pe.Field = section + m[1]
			pe.Msg = "unknown field (known here: " + strings.Join(known, ", ") + ")"
		}
		errs = append(errs, pe)
	}
	return errors.Join(errs...)
}

// parserError reports whether a yaml.v3 message comes from its parser (not
// its scanner): the parser's messages, which yaml.v3 numbers from 0.
func parserError(msg string) bool {
	switch msg {
	case "did not find expected key", "did not find expected node content", "did not find expected '-' indicator",
		"did not find expected ',' or ']'", "did not find expected ',' or '}'", "did not find expected <document start>",
		"did not find expected <stream-start>":
		return true
	}
	return false
}

// fieldAtLine is the YAML path of the deepest key or sequence item on line,
// "" when none is.
func fieldAtLine(n *yaml.Node, line int, prefix string) string {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			path := k.Value
			if prefix != "" {
				path = prefix + "." + k.Value
			}
			if deeper := fieldAtLine(v, line, path); deeper != "" {
				return deeper
			}
			if k.Line == line {
				return path
			}
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			path := fmt.Sprintf("%s[%d]", prefix, i)
			if deeper := fieldAtLine(item, line, path); deeper != "" {
				return deeper
			}
			if item.Line == line && item.Line != n.Line {
				return path
			}
		}
	}
	return ""
}

// sectionOf maps a Go type name from a yaml.v3 message to its YAML path
// prefix and the field names it accepts.
func sectionOf(typeName string) (prefix string, known []string) {
	var t reflect.Type
	switch typeName {
	case "scenarios.Scenario":
		t = reflect.TypeFor[Scenario]()
	case "scenarios.LoadDefaults":
		prefix, t = "load.", reflect.TypeFor[LoadDefaults]()
	case "scenarios.PromptSpec":
		prefix, t = "prompts.", reflect.TypeFor[PromptSpec]()
	default:
		return "", nil
	}
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && name != "-" {
			known = append(known, name)
		}
	}
	return prefix, known
}

// lineOf finds the line of a field path ("load.rate", "modalities[1]") in a
// parsed document: the deepest node of the path that exists, 0 if none.
func lineOf(root *yaml.Node, path string) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := 0
	for _, part := range strings.Split(path, ".") {
		key, idx, hasIdx := strings.Cut(part, "[")
		next := mappingValue(n, key)
		if next == nil {
			return line
		}
		line, n = next.key.Line, next.value
		if hasIdx {
			i, err := strconv.Atoi(strings.TrimSuffix(idx, "]"))
			if err != nil || n.Kind != yaml.SequenceNode || i < 0 || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		}
	}
	return line
}

type keyValue struct{ key, value *yaml.Node }

func mappingValue(n *yaml.Node, key string) *keyValue {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return &keyValue{n.Content[i], n.Content[i+1]}
		}
	}
	return nil
}
