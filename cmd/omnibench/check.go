package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnibench/omnibench/internal/metrics/check"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/scrape"
)

// checkOptions holds the flags of `omnibench check`.
type checkOptions struct {
	profiles     []string
	rules        []string
	run          string
	stats        string
	accept       string
	timeout      time.Duration
	format       string
	junit        string
	failuresOnly bool
	verbose      bool
	tls          tlsFlags
}

func newCheckCmd() *cobra.Command {
	o := checkOptions{}
	cmd := &cobra.Command{
		Use:   "check [flags] SCRAPE | BEFORE AFTER",
		Short: "Validate a server's /metrics against the vLLM-Omni profile and YAML rules",
		Long: `check validates Prometheus metrics: one scrape (a URL scraped now, a snapshot
file from "omnibench scrape", or a plain exposition file), or a before/after
pair, whose counters and histograms are then compared as increases.

Rules come from built-in profiles (--profile, default vllm-omni unless
--rules is given; "none" for no profile) and YAML files (--rules, see the
README for the rule language). The vllm-omni profile checks the exposition
format, every pipeline family of the design (type, labels, exact buckets),
the naming conventions, histogram invariants, integer threshold_ms values,
stats gating and promlint (minus the colon and _s warnings the design
mandates).

The format profile (part of vllm-omni) validates the exposition bytes
against the Prometheus text format 0.0.4 or OpenMetrics 1.0, by the
Content-Type the server sent (for a file without one: OpenMetrics when it
ends in "# EOF", else text; --accept text or openmetrics says which).
Every violation is a failed rule naming the line and the offending token.
With these rules and --accept auto, a URL is asked for OpenMetrics, so the
bytes checked are text; a protobuf exposition (--accept proto) gets the
note that the format rules do not apply.

Output: the failed rules, each with family, line, expected and observed,
and one summary line ("45 rules, 0 failed"); --verbose lists every rule;
--format json lists every rule with its full detail.

With --run (the results JSONL of "omnibench run"), rules also compare the
server's counters with what the client observed: completed requests by
finish reason, TTFP observations, audio frames, continuous responses and the
TTFP sum, each within a stated tolerance. Speech streams count where the
server records them (servers since September 2026: told from their
speech_st* counters, or an audio_ttfp_s count that includes them); on older
servers the rules compare chat streams only and say so.

Exit status: 0 every rule passed (or was skipped); 1 a rule failed (an
exposition that does not parse is a failed rule with the format profile),
or a URL could not be scraped (the server could not be reached, or sent no
valid exposition); 2 unusable input (an unreadable snapshot, rules or run
file, bad flags).`,
		Example: `  omnibench check http://localhost:8000/metrics
  omnibench check --profile format metrics.prom
  omnibench check before.prom after.prom --run run.jsonl --junit check.xml
  omnibench check --rules slo.yaml --profile vllm-omni after.prom --format json
  omnibench check --stats off http://localhost:8000/metrics`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.RangeArgs(1, 2)(cmd, args); err != nil {
				return withExitCode(2, err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.profiles, "profile", nil, "built-in rule profile (repeatable): "+strings.Join(check.ProfileNames(), ", ")+" or none; default vllm-omni unless --rules is given")
	f.StringArrayVar(&o.rules, "rules", nil, "YAML rule file (repeatable)")
	f.StringVar(&o.run, "run", "", "results JSONL of the run between the scrapes, for rules that compare with the client")
	f.StringVar(&o.stats, "stats", "auto", "server stats setting: auto (tell from the scrape), on or off")
	f.StringVar(&o.accept, "accept", "auto", "exposition format to ask for when scraping a URL: auto, proto, openmetrics or text")
	f.DurationVar(&o.timeout, "timeout", 10*time.Second, "give up on a URL scrape after this long")
	f.StringVar(&o.format, "format", report.FormatTable, "output format: table, markdown or json")
	f.StringVar(&o.junit, "junit", "", "also write the results as JUnit XML to this file")
	f.BoolVar(&o.failuresOnly, "failures", false, "list only failed rules in the markdown table (the default text output always does)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "list every rule, passed and skipped ones too")
	o.tls.addFlags(f)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withExitCode(2, err) })
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(checkFormats(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("profile", cobra.FixedCompletions(append(check.ProfileNames(), "none"), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("stats", cobra.FixedCompletions([]string{"auto", "on", "off"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("accept", cobra.FixedCompletions(acceptValues(), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func checkFormats() []string {
	return []string{report.FormatTable, report.FormatMarkdown, report.FormatJSON}
}

func runCheck(cmd *cobra.Command, o checkOptions, args []string) error {
	if err := report.CheckFormat(o.format, checkFormats()...); err != nil {
		return withExitCode(2, err)
	}
	stats, err := check.ParseStatsMode(o.stats)
	if err != nil {
		return withExitCode(2, fmt.Errorf("--stats: %w", err))
	}
	accept, err := scrape.ParseAccept(o.accept)
	if err != nil {
		return withExitCode(2, fmt.Errorf("--accept: %w", err))
	}
	rules, err := checkRules(o)
	if err != nil {
		return withExitCode(2, err)
	}
	hc, err := o.tls.httpClient(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	in := check.Input{Stats: stats}
	if o.run != "" {
		_, recs, err := results.ReadFile(o.run)
		if err != nil {
			return withExitCode(2, fmt.Errorf("--run: %w", err))
		}
		fig := check.FiguresFromRecords(recs)
		in.Run = &fig
	}
	if len(args) == 2 {
		if in.Before, in.BeforeExposition, err = checkScrape(cmd.Context(), hc, args[0], accept, o.timeout, rules); err != nil {
			return unusable(err)
		}
	}
	if in.After, in.Exposition, err = checkScrape(cmd.Context(), hc, args[len(args)-1], accept, o.timeout, rules); err != nil {
		return unusable(err)
	}

	rep := check.Evaluate(in, rules)
	out := cmd.OutOrStdout()
	switch o.format {
	case report.FormatJSON:
		err = rep.WriteJSON(out)
	case report.FormatTable:
		err = rep.WriteText(out, o.verbose)
	default:
		err = report.Render(out, o.format, rep.Table(o.failuresOnly && !o.verbose))
	}
	if err != nil {
		return err
	}
	if o.junit != "" {
		if err := writeJUnit(o.junit, rep); err != nil {
			return withExitCode(2, err)
		}
	}
	var status error
	if !rep.OK() {
		status = failure(fmt.Errorf("%d of %d rules failed", rep.Failed, len(rep.Results)))
	}
	pass := fmt.Sprintf("%d of %d rules passed", rep.Passed, len(rep.Results))
	if rep.Skipped > 0 {
		pass += fmt.Sprintf(", %d skipped", rep.Skipped)
	}
	return endReport(out, o.format, false, status, pass)
}

// checkScrape loads one scrape and keeps its bytes for the format rules.
// A body the parser rejects is unusable input, unless the format rules
// are there to report it (they fail, naming the line).
func checkScrape(ctx context.Context, hc *http.Client, arg string, accept scrape.Accept, timeout time.Duration, rules []check.Rule) (scrape.Families, *check.Exposition, error) {
	if accept == scrape.AcceptAuto && hasFormatRule(rules) && isURL(arg) {
		// The format rules validate the bytes of a text format, and
		// protobuf (what auto would get first) is not text.
		accept = scrape.AcceptOpenMetrics
	}
	snap, err := loadSnapshot(ctx, hc, arg, accept, timeout)
	if err != nil {
		return nil, nil, err
	}
	fs, err := snap.Families()
	var pe *scrape.ParseError
	if err != nil && !(errors.As(err, &pe) && hasFormatRule(rules)) {
		if isURL(arg) {
			return nil, nil, failure(err) // the server's exposition, not the user's input
		}
		return nil, nil, err
	}
	x := &check.Exposition{Source: snap.Source(), Format: snap.Format(), Body: snap.Body, LineOffset: snap.BodyLine(), ParseErr: err}
	return fs, x, nil
}

func hasFormatRule(rules []check.Rule) bool {
	for _, r := range rules {
		if r.Check == check.CheckFormat {
			return true
		}
	}
	return false
}

// checkRules assembles the rules: the profiles asked for (vllm-omni when
// neither profiles nor rule files are given), then the rule files.
func checkRules(o checkOptions) ([]check.Rule, error) {
	profiles := o.profiles
	if len(profiles) == 0 && len(o.rules) == 0 {
		profiles = []string{check.ProfileVLLMOmni}
	}
	var rules []check.Rule
	for _, name := range profiles {
		if name == "none" {
			continue
		}
		p, err := check.Profile(name)
		if err != nil {
			return nil, fmt.Errorf("--profile: %w", err)
		}
		rules = append(rules, p...)
	}
	for _, path := range o.rules {
		r, err := check.LoadRules(path)
		if err != nil {
			return nil, fmt.Errorf("--rules: %w", err)
		}
		rules = append(rules, r...)
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("no rules: give --rules FILE or a --profile other than none")
	}
	return rules, nil
}

func writeJUnit(path string, rep *check.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	if err := rep.WriteJUnit(f, time.Now()); err != nil {
		f.Close()
		return fmt.Errorf("--junit %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--junit %s: %w", path, err)
	}
	return nil
}
