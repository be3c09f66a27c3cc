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
		hasData, hasComment bool
	)
	dispatch := func() {
		if !hasData && typ == "" {
			return
		}
		out = append(out, ev{Type: typ, Data: strings.Join(data, "\n"), ID: id, Comment: comment, NoData: !hasData, NoComment: !hasComment})
		typ, data, hasData, comment, hasComment = "", nil, false, "", false
	}
	for _, line := range lines {
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
	return out
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
