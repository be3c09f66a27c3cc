package scenarios

import (
	"fmt"
	"strings"
)

// A PositionError locates a problem in a scenario or prompts file.
type PositionError struct {
	File  string // path, or "builtin:<name>" for an embedded file
	Line  int    // 1-based; 0 when unknown
	Field string // YAML path such as "load.rate"; "" when not about one field
	Msg   string
}

// Error formats as "file:line: field: msg", leaving out what is unknown.
func (e *PositionError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}
