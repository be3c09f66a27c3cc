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
		return nil, yamlError(file, err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, yamlError(file, err)
		}
		return nil, &PositionError{File: file, Line: next.Line, Msg: "a scenario file holds one YAML document; found a second"}
	}
	s.applyDefaults()
	return &s, nil
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
// unknown fields named by their YAML path and the fields allowed there.
func yamlError(file string, err error) error {
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
