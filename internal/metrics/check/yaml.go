package check

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ruleFile is the YAML document: `rules:` with a list of rules.
type ruleFile struct {
	Rules []yamlRule `yaml:"rules"`
}

// yamlRule is one rule as written; see Rule for the meaning of each key.
type yamlRule struct {
	Name        string            `yaml:"name"`
	Family      string            `yaml:"family"`
	Match       map[string]string `yaml:"match"`
	Exists      *bool             `yaml:"exists"`
	Optional    bool              `yaml:"optional"`
	Empty       *bool             `yaml:"empty"`
	Type        string            `yaml:"type"`
	Labels      *[]string         `yaml:"labels"`
	Buckets     *bounds           `yaml:"buckets"`
	Expect      string            `yaml:"expect"`
	Measure     string            `yaml:"measure"`
	Quantile    *float64          `yaml:"quantile"`
	Tolerance   *tolerance        `yaml:"tolerance"`
	Check       string            `yaml:"check"`
	Label       string            `yaml:"label"`
	Stats       string            `yaml:"stats"`
	NonNegative bool              `yaml:"nonnegative"`
}

// bounds reads a list of bucket bounds; "+Inf" (or .inf) may be listed and
// is dropped, since every histogram must have it anyway.
type bounds []float64

func (b *bounds) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("line %d: buckets: want a list of numbers", n.Line)
	}
	out := bounds{}
	for _, item := range n.Content {
		s := strings.TrimSpace(item.Value)
		switch strings.ToLower(s) {
		case ".inf", "+.inf":
			s = "+Inf"
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || item.Kind != yaml.ScalarNode || math.IsNaN(v) {
			return fmt.Errorf("line %d: buckets: %q is not a number", item.Line, item.Value)
		}
		if !math.IsInf(v, 1) {
			out = append(out, v)
		}
	}
	*b = out
	return nil
}

// tolerance reads `2`, `"5%"` or `{abs: 1, rel: "10%"}`.
type tolerance Tolerance

func (t *tolerance) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		v, err := ParseTolerance(n.Value)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		*t = tolerance(v)
		return nil
	case yaml.MappingNode:
		var out Tolerance
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			parsed, err := ParseTolerance(v.Value)
			if err != nil {
				return fmt.Errorf("line %d: %w", v.Line, err)
			}
			switch k.Value {
			case "abs":
				if parsed.Rel != 0 {
					return fmt.Errorf("line %d: tolerance abs: %q is a percentage; use rel", v.Line, v.Value)
				}
				out.Abs = parsed.Abs
			case "rel":
				if parsed.Abs != 0 {
					return fmt.Errorf("line %d: tolerance rel: want a percentage such as \"10%%\"", v.Line)
				}
				out.Rel = parsed.Rel
			default:
				return fmt.Errorf("line %d: tolerance: unknown key %q (want abs, rel)", k.Line, k.Value)
			}
		}
		*t = tolerance(out)
		return nil
	}
	return fmt.Errorf("line %d: tolerance: want a number, a percentage or {abs: N, rel: \"P%%\"}", n.Line)
}

// yamlError words the YAML decoder's messages for users: it says "field
// exist not found in type check.yamlRule"; the Go type means nothing to them.
type yamlError struct{ err error }

func (e yamlError) Error() string {
	msg := strings.ReplaceAll(e.err.Error(), " in type check.yamlRule", " (not a rule key)")
	return strings.ReplaceAll(msg, "yaml: unmarshal errors:\n  ", "")
}

func (e yamlError) Unwrap() error { return e.err }

// LoadRules reads a YAML rule file.
func LoadRules(path string) ([]Rule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	return ParseRules(path, data)
}

// ParseRules reads YAML rules; name labels errors and each Rule.Source
// ("rules.yaml:12"). Unknown keys, bad values and rules that assert nothing
// or several things are errors naming the line.
func ParseRules(name string, data []byte) ([]Rule, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var file ruleFile
	if err := dec.Decode(&file); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: no rules (want a document with \"rules:\" and a list)", name)
		}
		return nil, fmt.Errorf("%s: %w", name, yamlError{err})
	}
	// Line numbers of the rules, from the node tree.
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	lines := ruleLines(&doc)
	if len(file.Rules) == 0 {
		return nil, fmt.Errorf("%s: no rules (want a document with \"rules:\" and a list)", name)
	}
	var (
		out  []Rule
		errs []error
	)
	for i, yr := range file.Rules {
		line := 0
		if i < len(lines) {
			line = lines[i]
		}
		where := fmt.Sprintf("%s:%d", name, line)
		r, err := yr.rule()
		if err == nil {
			err = r.Validate()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: rule %d: %w", where, i+1, err))
			continue
		}
		r.Source = where
		out = append(out, r)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// ruleLines returns the line of each item of the top-level rules list.
func ruleLines(doc *yaml.Node) []int {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "rules" && top.Content[i+1].Kind == yaml.SequenceNode {
			var lines []int
			for _, item := range top.Content[i+1].Content {
				lines = append(lines, item.Line)
			}
			return lines
		}
	}
	return nil
}

func (y yamlRule) rule() (Rule, error) {
	r := Rule{
		Name: y.Name, Family: y.Family, Match: y.Match,
		Exists: y.Exists, Optional: y.Optional, Empty: y.Empty, Type: strings.ToLower(y.Type),
		Measure: y.Measure, Quantile: y.Quantile,
		Check: y.Check, Label: y.Label, Stats: y.Stats, NonNegative: y.NonNegative,
	}
	if y.Labels != nil {
		r.Labels = append([]string{}, (*y.Labels)...)
	}
	if y.Buckets != nil {
		r.Buckets = append([]float64{}, (*y.Buckets)...)
	}
	if y.Tolerance != nil {
		r.Tolerance = Tolerance(*y.Tolerance)
	}
	if y.Expect != "" {
		e, err := ParseExpectation(y.Expect)
		if err != nil {
			return r, err
		}
		r.Expect = e
	}
	return r, nil
}
