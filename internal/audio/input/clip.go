package input

import "encoding/base64"

// Clip is an audio file ready to be sent: identified, measured and
// base64-encoded once, when it is loaded. A Clip is never modified after
// NewClip returns, so any number of requests may share it.
type Clip struct {
	Name string // where it came from, for messages
	Info
	Bytes  int    // size of the file
	Base64 string // standard base64 of the whole file, byte for byte
}

// NewClip inspects data (see Inspect) and encodes it. name is only for
// messages.
func NewClip(name string, data []byte) (*Clip, error) {
	info, err := Inspect(data)
	if err != nil {
		return nil, err
	}
	return &Clip{Name: name, Info: info, Bytes: len(data), Base64: base64.StdEncoding.EncodeToString(data)}, nil
}

// DataURL is the clip as a data: URL ("data:audio/wav;base64,...").
func (c *Clip) DataURL() string { return DataURL(c.Format, c.Base64) }
