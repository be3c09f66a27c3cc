// Command imagearchive writes a container image as a one-layer Docker
// archive (the layout of `docker save`: manifest.json, the image config and
// one uncompressed layer tar), which `ctr images import` and `docker load`
// read. It builds omnibench's image, and the pause image of the end-to-end
// cluster, on a machine with no Docker engine and no registry:
//
//	imagearchive -o omnibench.tar -name registry.example/omnibench:v1 \
//	    -add omnibench:/usr/local/bin/omnibench -add /bin/busybox:/bin/busybox \
//	    -link /bin/sh:busybox -entrypoint omnibench
//
// Files keep their permission bits; every time stamp is the Unix epoch, so
// the same inputs give the same image digest.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// pairs is a repeatable SRC:DEST flag.
type pairs [][2]string

func (p *pairs) String() string { return fmt.Sprint(*p) }

func (p *pairs) Set(v string) error {
	a, b, ok := strings.Cut(v, ":")
	if !ok || a == "" || b == "" {
		return fmt.Errorf("%q: want FROM:TO", v)
	}
	*p = append(*p, [2]string{a, b})
	return nil
}

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "imagearchive:", err)
		os.Exit(2)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("imagearchive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "archive to write (required)")
	name := fs.String("name", "", "image reference, REPOSITORY:TAG (required)")
	entrypoint := fs.String("entrypoint", "", "the image's entrypoint, words separated by spaces")
	path := fs.String("path", "/usr/local/bin:/bin", "the image's PATH")
	var adds, links pairs
	fs.Var(&adds, "add", "SRC:DEST: put the file SRC at DEST in the image (repeatable)")
	fs.Var(&links, "link", "DEST:TARGET: a symbolic link DEST to TARGET in the image (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *name == "" || fs.NArg() > 0 {
		return errors.New("usage: imagearchive -o FILE -name REPO:TAG [-add SRC:DEST]... [-link DEST:TARGET]... [-entrypoint CMD]")
	}
	img := Image{Name: *name, Entrypoint: strings.Fields(*entrypoint), Env: []string{"PATH=" + *path}}
	for _, a := range adds {
		data, err := os.ReadFile(a[0])
		if err != nil {
			return fmt.Errorf("-add %s: %w", a[0], err)
		}
		info, err := os.Stat(a[0])
		if err != nil {
			return fmt.Errorf("-add %s: %w", a[0], err)
		}
		img.Files = append(img.Files, File{Path: a[1], Mode: info.Mode().Perm(), Data: data})
	}
	for _, l := range links {
		img.Files = append(img.Files, File{Path: l[0], Link: l[1]})
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	if err := Write(f, img); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", *out, err)
	}
	return f.Close()
}
