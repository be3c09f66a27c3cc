package scenarios

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/omnibench/omnibench/internal/spelling"
)

// builtinFS holds the built-in scenarios (builtin/<name>.yaml) and prompt
// sets (prompts/<set>.txt; the spoken questions of builtin:voice in
// prompts/voice). It is read-only.
//
//go:embed builtin/*.yaml prompts/*.txt prompts/voice/*.wav
var builtinFS embed.FS

// Names lists the built-in scenarios, sorted.
func Names() []string {
	entries, err := fs.ReadDir(builtinFS, "builtin")
	if err != nil {
		panic(fmt.Sprintf("scenarios: embedded builtin directory: %v", err)) // the embed pattern guarantees it
	}
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Source returns the YAML text of a built-in scenario, comments included.
func Source(name string) ([]byte, error) {
	if !slices.Contains(Names(), name) {
		return nil, unknownScenario(name)
	}
	return builtinFS.ReadFile(path.Join("builtin", name+".yaml"))
}

// Get returns a fresh copy of a built-in scenario, validated. The caller may
// change its fields freely.
func Get(name string) (*Scenario, error) {
	data, err := Source(name)
	if err != nil {
		return nil, err
	}
	file := builtinPrefix + name
	s, err := parse(file, data)
	if err != nil {
		return nil, err
	}
	if err := validateAt(file, data, s); err != nil {
		return nil, err
	}
	return s, nil
}

// Open returns the built-in scenario called nameOrPath, or else loads the
// file at that path: what a --scenario flag accepts.
func Open(nameOrPath string) (*Scenario, error) {
	if slices.Contains(Names(), nameOrPath) {
		return Get(nameOrPath)
	}
	if !strings.ContainsAny(nameOrPath, `/\`) && !strings.HasSuffix(nameOrPath, ".yaml") && !strings.HasSuffix(nameOrPath, ".yml") {
		// Looks like a name, not a path: say which names exist.
		return nil, unknownScenario(nameOrPath)
	}
	return Load(nameOrPath)
}

// unknownScenario is the error of a scenario name that is not built in,
// with the nearest built-in names first when there are any.
func unknownScenario(name string) error {
	return fmt.Errorf("scenarios: unknown scenario %q%s (built-in: %s; or give a YAML file path)",
		name, spelling.Phrase("", spelling.Nearest(name, Names())), strings.Join(Names(), ", "))
}
