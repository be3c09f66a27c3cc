package sse

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// refParse is an independent, deliberately naive implementation of the
// parsing rules (whole input in memory, line endings normalised first),
// used as the oracle for FuzzReader.
func refParse(in string) []ev {
	out, _ := refParseLimit(in, 0)
	return out
}

// refParseLimit is refParse with a cap on a line and on an event's data
// (0: none): it returns the events before the first line or event over the
// cap and names what exceeded it ("line" or "event", "" when none did).
func refParseLimit(in string, max int) ([]ev, string) {
	bom := strings.HasPrefix(in, "\uFEFF")
	in = strings.TrimPrefix(in, "\uFEFF")
	in = strings.ReplaceAll(in, "\r\n", "\n")
	in = strings.ReplaceAll(in, "\r", "\n")
	lines := strings.Split(in, "\n")
	// The last element is what follows the last terminator: an
	// unterminated line, or "" when the input ended with a terminator.
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var (
		out                 []ev
		typ, id, comment    string
		data                []string // joined at dispatch: += would be quadratic
		dataSize            int
		hasData, hasComment bool
	)
	dispatch := func() {
		if !hasData && typ == "" {
			return
		}
		out = append(out, ev{Type: typ, Data: strings.Join(data, "\n"), ID: id, Comment: comment, NoData: !hasData, NoComment: !hasComment})
		typ, data, dataSize, hasData, comment, hasComment = "", nil, 0, false, "", false
	}
	for i, line := range lines {
		size := len(line)
		if i == 0 && bom {
			size += len("\uFEFF") // the cap counts the line as it came
		}
		if max > 0 && size > max {
			return out, "line"
		}
		switch {
		case line == "":
			dispatch()
		case line[0] == ':':
			comment, hasComment = strings.TrimPrefix(line[1:], " "), true
		default:
			name, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch name {
			case "data":
				if hasData {
					dataSize++
				}
				if dataSize += len(value); max > 0 && dataSize > max {
					return out, "event"
				}
				data = append(data, value)
				hasData = true
			case "event":
				typ = value
			case "id":
				if !strings.Contains(value, "\x00") {
					id = value
				}
			}
		}
	}
	dispatch() // the documented choice: a pending event at EOF is kept
	return out, ""
}

func FuzzReader(f *testing.F) {
	seeds := []string{
		"",
		"data: hello\n\n",
		"data: a\r\ndata: b\r\n\r\n",
		"data: a\rdata: b\r\r",
		": keep-alive\n\n: sent=12\ndata: x\n\n",
		"event: speech.audio.delta\ndata: {\"audio\":\"AAAA\"}\n\nevent: speech.audio.done\ndata: {}\n\n",
		"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\nid\ndata: c\n\n",
		"data\ndata:\ndata:  two spaces\nretry: 5\nfoo\n\n",
		"\uFEFFdata: bom\n\n",
		"data: no end",
		"data: a\r",
		"data: " + strings.Repeat("QUJD", 5000) + "\n\n",
		"event: t\n\n\r\n\r\r\n",
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i))
		f.Add([]byte(s), uint8(i)|16) // the same through a lent buffer
	}
	f.Fuzz(func(t *testing.T, in []byte, mode uint8) {
		// Property 1: any input parses like the oracle, whatever the read
		// sizes and buffer size, without panicking.
		var src io.Reader = bytes.NewReader(in)
		if mode&1 != 0 {
			src = iotest.OneByteReader(src)
		}
		r := NewReader(src)
		if mode&2 != 0 {
			r = newReaderSize(src, 16)
		}
		if mode&16 != 0 { // the same buffer size, lent
			pool := &BufferPool{}
			if mode&2 != 0 {
				pool.size = 16
			}
			r = pool.NewReader(src)
		}
		got, err := readAll(r, len(in)+1)
		if err != io.EOF {
			t.Fatalf("final error %v, want io.EOF", err)
		}
		if want := refParse(string(in)); !equalEvents(got, want) {
			t.Fatalf("input %q\n got %+v\nwant %+v", in, got, want)
		}

		// Property 2: events written by Writer read back identically.
		// The input is cut into events at NUL bytes and into type and data
		// at the first 0x1F; what the format cannot carry is removed.
		var (
			buf  bytes.Buffer
			want []ev
		)
		w := NewWriter(&buf)
		for _, part := range bytes.Split(in, []byte{0}) {
			typ, data, _ := bytes.Cut(part, []byte{0x1F})
			typ = bytes.Map(dropLineBreak, typ)
			data = bytes.ReplaceAll(data, []byte("\r"), nil)
			if mode&4 != 0 {
				comment := strings.Map(dropLineBreak, string(data))
				if err := w.Comment(comment); err != nil {
					t.Fatal(err)
				}
				if err := w.Event(string(typ), data); err != nil {
					t.Fatal(err)
				}
				want = append(want, ev{Type: string(typ), Data: string(data), Comment: comment})
				continue
			}
			if err := w.Event(string(typ), data); err != nil {
				t.Fatal(err)
			}
			want = append(want, ev{Type: string(typ), Data: string(data), NoComment: true})
		}
		if buf.Len() > 0 && mode&8 != 0 {
			// Written streams start with "event:", "data:" or ": ", never
			// a BOM, so a BOM in the input cannot change the result.
			in = append([]byte("\uFEFF"), buf.Bytes()...)
			buf.Reset()
			buf.Write(in)
		}
		got, err = readAll(newReaderSize(&buf, 16), len(want)+1)
		if err != io.EOF || !equalEvents(got, want) {
			t.Fatalf("round trip: err %v\n got %+v\nwant %+v", err, got, want)
		}
	})
}

func dropLineBreak(r rune) rune {
	if r == '\r' || r == '\n' {
		return -1
	}
	return r
}

// FuzzReaderLimit checks the caps against the oracle: with a small cap, the
// Reader returns exactly the events before the first line or event over it,
// then a *LimitError naming which, whatever the read and buffer sizes.
func FuzzReaderLimit(f *testing.F) {
	seeds := []string{
		"data: hello\n\n",
		"data: " + strings.Repeat("x", 40) + "\n\n",
		"data: 0123456789\ndata: 0123456789\ndata: 0123456789\n\n",
		strings.Repeat("y", 100),
		"\uFEFFdata: 12345678\n\n",
		": " + strings.Repeat("c", 30) + "\r\ndata: a\r\n\r\n",
		"data: a\n\ndata: " + strings.Repeat("z", 20) + "\n\n",
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i), uint8(16))
		f.Add([]byte(s), uint8(i)|16, uint8(16))
	}
	f.Fuzz(func(t *testing.T, in []byte, mode, limit uint8) {
		max := int(limit%64) + 1
		var src io.Reader = bytes.NewReader(in)
		if mode&1 != 0 {
			src = iotest.OneByteReader(src)
		}
		r := NewReader(src)
		if mode&2 != 0 {
			r = newReaderSize(src, 16)
		}
		if mode&16 != 0 { // the same buffer size, lent
			pool := &BufferPool{}
			if mode&2 != 0 {
				pool.size = 16
			}
			r = pool.NewReader(src)
		}
		r.SetMaxEventBytes(max)
		got, err := readAll(r, len(in)+1)
		want, what := refParseLimit(string(in), max)
		if !equalEvents(got, want) {
			t.Fatalf("input %q, cap %d\n got %+v\nwant %+v (then %q)", in, max, got, want, what)
		}
		if what == "" {
			if err != io.EOF {
				t.Fatalf("input %q, cap %d: error %v, want io.EOF", in, max, err)
			}
			return
		}
		le, ok := err.(*LimitError)
		if !ok || le.What != what || le.Limit != max || le.Size <= int64(max) || le.Offset < 0 || le.Offset > int64(len(in)) {
			t.Fatalf("input %q, cap %d: error %#v, want a %s LimitError", in, max, err, what)
		}
		if _, again := r.Next(); again != err {
			t.Fatalf("the limit error is not sticky: %v", again)
		}
	})
}
