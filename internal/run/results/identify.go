package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
)

// identifyLimit caps how much of a file Identify reads: enough for a run
// summary with its /metrics snapshots.
const identifyLimit = 64 << 20

// Identify names what r holds when it is not a results file, so an error can
// say what it got and what it wants: "a run summary document (run --summary
// or run --format json)", "a sweep document", "a Prometheus exposition", or
// "" when it cannot tell. It reads at most 64 MiB of r.
func Identify(r io.Reader) string {
	br := bufio.NewReader(io.LimitReader(r, identifyLimit))
	head, _ := br.Peek(512)
	trimmed := bytes.TrimSpace(head)
	switch {
	case bytes.HasPrefix(trimmed, []byte("# HELP")) || bytes.HasPrefix(trimmed, []byte("# TYPE")):
		return "a Prometheus exposition (what scrape saves)"
	case !bytes.HasPrefix(trimmed, []byte("{")):
		return ""
	}
	keys, command := topLevelKeys(br)
	has := func(k string) bool { return slices.Contains(keys, k) }
	switch {
	case command == "sweep" || command == "capacity":
		return "a " + command + " document (" + command + " --summary or --format json)"
	case has("schema_version") && has("run") && has("summary") && has("load"):
		return "a run summary document (run --summary or run --format json)"
	case has("schema_version") && has("run") && has("summary"):
		return "a report document (report --format json)"
	case len(keys) > 0:
		return "a JSON document with the keys " + strings.Join(keys, ", ")
	}
	return ""
}

// topLevelKeys lists the keys of the JSON object r starts with (the value
// of "command" too, when it is a string), or what it read before the object
// broke off.
func topLevelKeys(r io.Reader) (keys []string, command string) {
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, ""
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys, command
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return keys, command
		}
		keys = append(keys, key)
		if key == "command" {
			_ = json.Unmarshal(v, &command)
		}
	}
	return keys, command
}
