package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/scrape"
)

// scrapeOptions holds the flags of `omnibench scrape`.
type scrapeOptions struct {
	output  string
	accept  string
	timeout time.Duration
	raw     bool
	tls     tlsFlags
}

func newScrapeCmd() *cobra.Command {
	o := scrapeOptions{}
	cmd := &cobra.Command{
		Use:   "scrape URL",
		Short: "Save one scrape of a /metrics endpoint as a snapshot file",
		Long: `scrape fetches a Prometheus endpoint once and writes a snapshot: a header
line "# omnibench-snapshot {...}" (URL, Content-Type, fetch time) followed by
the body exactly as received. "omnibench diff" and "omnibench check" read
snapshots (and plain exposition files).

scrape asks for the text format 0.0.4 and writes it to a .prom file: the
header is a comment there, so "promtool check metrics < file.prom" reads
the file as it is. Other formats only when asked, each with its extension:
--accept openmetrics for a .om file, --accept proto for a .pb file (the
extension of -o picks the format when --accept is not given). OpenMetrics
forbids comments and protobuf is binary: for those, "tail -n +2" drops the
header line. --accept auto asks like a Prometheus server (protobuf first).

The body is checked before it is saved: an HTML page, a JSON document or a
malformed exposition is an error naming the URL and the line.

Exit status: 0 saved; 1 the endpoint could not be reached or scraped, or
returned no valid exposition; 2 unusable input (not a URL, bad flags, a
format the file's extension does not hold).`,
		Example: `  omnibench scrape http://localhost:8000/metrics -o before.prom
  promtool check metrics < before.prom
  omnibench scrape http://localhost:8000/metrics -o before.pb      # protobuf
  omnibench scrape http://localhost:8000/metrics --raw > metrics.txt`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.ExactArgs(1)(cmd, args); err != nil {
				return withExitCode(2, err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("accept") {
				o.accept = acceptForFile(o.output)
			}
			return runScrape(cmd, o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "", "snapshot file to write: .prom (text), .om (OpenMetrics) or .pb (protobuf); stdout when not given")
	f.StringVar(&o.accept, "accept", "text", "exposition format to ask for: text, openmetrics, proto or auto; when not given, the extension of -o decides (.pb proto, .om openmetrics, else text)")
	f.DurationVar(&o.timeout, "timeout", 10*time.Second, "give up on the scrape after this long")
	f.BoolVar(&o.raw, "raw", false, "write the body only, without the snapshot header line")
	o.tls.addFlags(f)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withExitCode(2, err) })
	_ = cmd.RegisterFlagCompletionFunc("accept", cobra.FixedCompletions(acceptValues(), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func acceptValues() []string { return []string{"auto", "proto", "openmetrics", "text"} }

// Snapshot file extensions, one per exposition format.
const (
	extText        = ".prom"
	extOpenMetrics = ".om"
	extProtobuf    = ".pb"
)

// acceptForFile is the format scrape asks for when writing path without
// --accept: the one its extension holds, else text.
func acceptForFile(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case extProtobuf:
		return "proto"
	case extOpenMetrics:
		return "openmetrics"
	}
	return "text"
}

// checkExtension refuses to write a format into a file whose extension
// says another: .prom is text (what promtool reads), .pb protobuf only.
func checkExtension(path, format string) error {
	ext := strings.ToLower(filepath.Ext(path))
	want := map[string]string{scrape.FormatText: extText, scrape.FormatOpenMetrics: extOpenMetrics, scrape.FormatProtobuf: extProtobuf}[format]
	switch {
	case ext == want:
		return nil
	case ext == extText || ext == extProtobuf || ext == extOpenMetrics || format == scrape.FormatProtobuf:
		return fmt.Errorf("the server sent a %s exposition, which does not belong in %s: name the file *%s, or ask for the format %s holds (--accept)",
			format, path, want, ext)
	}
	return nil
}

func runScrape(cmd *cobra.Command, o scrapeOptions, url string) error {
	accept, err := scrape.ParseAccept(o.accept)
	if err != nil {
		return withExitCode(2, fmt.Errorf("--accept: %w", err))
	}
	hc, err := o.tls.httpClient(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	snap, err := scrape.FetchWith(ctx, hc, url, accept)
	if err != nil && !isURL(url) {
		return unusable(err) // not a URL: the argument is wrong
	}
	if err != nil {
		return failure(err) // a server that cannot be reached fails, as in run
	}
	fs, err := snap.Families()
	if err != nil {
		return failure(err) // the server's exposition, not the user's input
	}
	write := func(w io.Writer) error {
		if o.raw {
			_, err := w.Write(snap.Body)
			return err
		}
		_, err := snap.WriteTo(w)
		return err
	}
	if o.output == "" {
		return write(cmd.OutOrStdout())
	}
	if err := checkExtension(o.output, snap.Format()); err != nil {
		return withExitCode(2, err)
	}
	if o.raw {
		if err := os.WriteFile(o.output, snap.Body, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", o.output, err)
		}
	} else if err := snap.WriteFile(o.output); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "saved %d families (%s) from %s to %s\n", len(fs), snap.ContentType, snap.URL, o.output)
	return nil
}

// diffOptions holds the flags of `omnibench diff`.
type diffOptions struct {
	format  string
	all     bool
	buckets bool
	accept  string
	timeout time.Duration
	tls     tlsFlags
}

func newDiffCmd() *cobra.Command {
	o := diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff BEFORE AFTER",
		Short: "Show what changed between two scrapes (snapshot files or URLs)",
		Long: `diff compares two scrapes of the same server, each a snapshot file written by
"omnibench scrape", a plain exposition file, or a URL scraped now.

Counters show their increase, histograms the observations made in between
(count, sum, mean and p50/p90/p99 estimated from the bucket increases as
Prometheus histogram_quantile does), gauges both values. A counter or
histogram that went down means the server restarted: it is flagged and its
increase is the after value, as Prometheus increase() assumes. Families are
matched across the two vLLM-Omni prefixes (vllm_omni:X is vllm:omni_X), and
Python "_created" companion families are left out.

Only changed series are shown unless --all is given. The text output keeps
within 100 columns: labels every series shares are said once above the
table, and a long series name gets a line of its own above its figures.

Exit status: 0 printed; 1 a URL could not be scraped (the server could not
be reached, or sent no valid exposition); 2 a snapshot file could not be
read, or bad flags.`,
		Example: `  omnibench diff before.prom after.prom
  omnibench diff before.prom http://localhost:8000/metrics --format markdown
  omnibench diff before.prom after.prom --format json --all`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.ExactArgs(2)(cmd, args); err != nil {
				return withExitCode(2, err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiff(cmd, o, args[0], args[1])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", report.FormatTable, "output format: table, markdown or json")
	f.BoolVar(&o.all, "all", false, "show every series, not only those that changed")
	f.BoolVar(&o.buckets, "buckets", false, "add a table of per-bucket increases")
	f.StringVar(&o.accept, "accept", "auto", "exposition format to ask for when an argument is a URL: auto, proto, openmetrics or text")
	f.DurationVar(&o.timeout, "timeout", 10*time.Second, "give up on a URL scrape after this long")
	o.tls.addFlags(f)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withExitCode(2, err) })
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(diffFormats(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("accept", cobra.FixedCompletions(acceptValues(), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func diffFormats() []string {
	return []string{report.FormatTable, report.FormatMarkdown, report.FormatJSON}
}

func runDiff(cmd *cobra.Command, o diffOptions, before, after string) error {
	if err := report.CheckFormat(o.format, diffFormats()...); err != nil {
		return withExitCode(2, err)
	}
	accept, err := scrape.ParseAccept(o.accept)
	if err != nil {
		return withExitCode(2, fmt.Errorf("--accept: %w", err))
	}
	hc, err := o.tls.httpClient(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	b, err := loadScrape(cmd.Context(), hc, before, accept, o.timeout)
	if err != nil {
		return unusable(err)
	}
	a, err := loadScrape(cmd.Context(), hc, after, accept, o.timeout)
	if err != nil {
		return unusable(err)
	}
	d := scrape.Diff(b, a)
	opts := scrape.TableOptions{All: o.all, Buckets: o.buckets}
	switch o.format {
	case report.FormatJSON:
		return d.WriteJSON(cmd.OutOrStdout(), opts)
	case report.FormatTable:
		return d.WriteText(cmd.OutOrStdout(), opts, 0)
	}
	return report.Render(cmd.OutOrStdout(), o.format, d.Tables(opts)...)
}

// loadScrape reads one scrape: a URL (http:// or https://) is fetched now,
// anything else is a snapshot or exposition file.
func loadScrape(ctx context.Context, hc *http.Client, arg string, accept scrape.Accept, timeout time.Duration) (scrape.Families, error) {
	snap, err := loadSnapshot(ctx, hc, arg, accept, timeout)
	if err != nil {
		return nil, err
	}
	fs, err := snap.Families()
	if err != nil && isURL(arg) {
		return nil, failure(err) // the server's exposition, not the user's input
	}
	return fs, err
}

// loadSnapshot fetches a URL now or reads a snapshot or exposition file.
// A file that does not say its Content-Type (a bare exposition) is read as
// the format --accept names, when it names text or openmetrics.
// hc fetches the URL (nil: net/http's default client).
func loadSnapshot(ctx context.Context, hc *http.Client, arg string, accept scrape.Accept, timeout time.Duration) (*scrape.Snapshot, error) {
	if isURL(arg) {
		fctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		snap, err := scrape.FetchWith(fctx, hc, arg, accept)
		if err != nil {
			return nil, failure(err) // a server that cannot be reached fails, as in run
		}
		return snap, nil
	}
	snap, err := scrape.ReadSnapshot(arg)
	if err != nil {
		return nil, err
	}
	if snap.ContentType == "" {
		switch accept {
		case scrape.AcceptText:
			snap.ContentType = contentTypeText
		case scrape.AcceptOpenMetrics:
			snap.ContentType = contentTypeOpenMetrics
		}
	}
	return snap, nil
}

func isURL(arg string) bool {
	return strings.HasPrefix(arg, "http://") || strings.HasPrefix(arg, "https://")
}

// The Content-Types a bare file is read as with --accept text or openmetrics.
const (
	contentTypeText        = "text/plain; version=0.0.4; charset=utf-8"
	contentTypeOpenMetrics = "application/openmetrics-text; version=1.0.0; charset=utf-8"
)
