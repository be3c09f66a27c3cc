package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/omnibench/omnibench/internal/experiment/abtest"
	"github.com/omnibench/omnibench/internal/experiment/compare"
	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/scenarios"
	"github.com/omnibench/omnibench/stats"
)

// abOptions are the flags of `omnibench ab`: every flag of run (the
// workload, load, client and report settings) plus the arms and the method.
type abOptions struct {
	run runOptions

	aURL, bURL     string
	aCmd, bCmd     string
	aLabel, bLabel string
	logStats       bool
	allowSaturated bool
	serverCmd      string
	statsOnFlag    string
	statsOffFlag   string

	rounds         int
	alpha          float64
	power          float64
	test           string
	startupTimeout time.Duration
	stopGrace      time.Duration
	html           string
	gates          []string
	throughput     bool
}

// abRunFlagsRejected are run flags that have no meaning for ab, with what
// to use instead.
func abRunFlagsRejected() map[string]string {
	return map[string]string{
		"url":           "use --a-url and --b-url",
		"sim-log-stats": "ab sets stats per arm (--log-stats)",
		"scrape":        "ab scrapes each arm's /metrics after its last round",
		"metrics-url":   "ab scrapes <arm URL>/metrics",
		"accept":        "ab asks for the text format, whose lines it counts",
		"summary":       "--out DIR writes ab.json",
	}
}

func newABCmd() *cobra.Command {
	o := &abOptions{}
	cmd := &cobra.Command{
		Use:   "ab",
		Short: "A/B-test two servers, or one server with stats on and off, with interleaved rounds and significance tests",
		Long: `ab runs the same seeded workload against two arms and says whether they
differ: per arm n and mean of e2e, TTFP and the audio RTF (the unit is in
the metric's label), the change of B against A, the Holm-adjusted p and a
verdict at --alpha (Holm-corrected across the three metrics); each arm's
failed requests (count and rate) with Fisher's exact test; Welch's t, df, p
and confidence interval; the Mann-Whitney p and how it was computed (exact;
exact with ties; or, beyond 50 values, or 25 with ties, the normal
approximation with tie and continuity corrections); Hedges' g; the minimum
detectable effect; warnings about serially correlated samples; the
percentiles of both arms; and each arm's /metrics size (lines, families,
series, empty families, upstream vllm: families).

A verdict is given only when the experiment is what it claims:
  --log-stats checks, from each arm's /metrics after its first round and
  with the detection of "check --stats auto", that A has stats on and B off;
  when they do not differ as claimed there is no verdict (exit 2), and the
  error says what each arm showed and which flag is probably wrong.
  A managed server that exits or stops answering GET /health during a round
  ends the run (exit 1) with what broke.
  When the arms' failure rates differ beyond chance (Fisher, --alpha), an arm
  broke: no latency verdict (exit 1), or, with --fail-on-regression and B
  failing more often, a regression (exit 3).
--fail-on-regression METRIC:PCT (e2e, ttfp, audio_rtf) exits 3 when METRIC
got significantly worse in B by more than PCT percent, or when B fails more
often than A beyond chance, as in "omnibench compare".

An arm measured by a saturated load generator (unless --allow-saturated)
or without a successful measured request gets no verdict: the table, the
JSON ("verdict": "no verdict: ...", "refused") and the HTML page say why,
and show no metric's or gate's verdict. A text or Markdown report ends with
its verdict line: PASS, FAIL or NO VERDICT.

Exit status: 0 a verdict (whatever it says), 1 an arm broke, measured
nothing or was refused a verdict, 2 unusable input or arms that do not
differ as claimed, 3 a regression gate failed, 130 interrupted.

Arms come from one of:
  --a-url and --b-url          two running servers;
  --a-cmd and --b-cmd          two server commands, run without a shell, "{port}"
                               replaced by a free loopback port; ab starts each,
                               waits for GET /health, and stops it (SIGTERM to its
                               process group, SIGKILL after --stop-grace), keeping
                               its output in a log file. One server runs at a time;
                               --a-url/--b-url give the address of a command
                               without "{port}";
  --log-stats --server-cmd CMD one server command, A with --stats-on-flag and B
                               with --stats-off-flag;
  nothing (or --log-stats)     the embedded simulator with stats on (A) and off (B).

Method (the stats on/off experiment, docs/compare-and-ab.md): -n requests per arm (default 30),
sequential (-c 1) unless set, split into --rounds rounds per arm run in the
order A B B A A B ..., so drift falls on both arms alike; every round of both
arms starts with --warmup warm-up requests (default 1) and round r uses the
same seed in both arms, so both see the same prompts in the same order.

--throughput also compares what the arms serve: every round is a closed loop
at -c N (a concurrency that saturates the server) for its share of -d, and
gives one sample of requests/s and audio s/s (completed measured requests
and their audio over the round's window). The arms are compared across
rounds with Welch's t (Holm over the two), beside the per-request latencies;
the verdict names both. It needs -c, -d (or -n) and 2 or more --rounds; a
saturated load generator gets no verdict, as in latency mode.

Every run flag works here (scenario, overrides, timeouts, continuity), except
the ones that choose a single target or its scrape.`,
		Example: `  omnibench ab --log-stats
  omnibench ab --log-stats --server-cmd "vllm serve Qwen/Qwen3-Omni-30B-A3B-Instruct --omni --port {port}" \
      --stats-off-flag=--disable-log-stats --out ab-stats
  omnibench ab --a-url http://10.0.0.1:8000 --b-url http://10.0.0.2:8000 -n 60 --rounds 4 --format markdown
  omnibench compare ab-stats/a.jsonl ab-stats/b.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.runAB(cmd.Context(), cmd)
		},
	}
	o.addFlags(cmd.Flags())
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(abtest.Formats(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("test", cobra.FixedCompletions([]string{"welch", "utest"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.SetUsageFunc(groupedUsage)
	return cmd
}

// addFlags binds run's flags with ab's words for those it reads per arm,
// hides those that choose a single target, and binds ab's own.
func (o *abOptions) addFlags(f *pflag.FlagSet) {
	o.run.addFlags(f)
	for name := range abRunFlagsRejected() {
		_ = f.MarkHidden(name)
	}
	usage := func(name, text string) {
		if fl := f.Lookup(name); fl != nil {
			fl.Usage = text
		}
	}
	usage("requests", "measured requests per arm, split across the rounds (default 30)")
	usage("concurrency", "closed loop: concurrent workers (default 1: sequential requests, as the reference experiment runs them)")
	usage("warmup", "warm-up requests at the start of every round of each arm, left out of the figures (default 1)")
	usage("duration", "per arm, split across the rounds (whichever of -n and -d comes first)")
	usage("out", "`DIR` for a.jsonl and b.jsonl (re-analyse with omnibench compare), the /metrics snapshots, ab.json and the server logs")
	usage("format", "report format: table, markdown or json")
	usage("seed", "seed of the prompt order (round 0; later rounds derive theirs), the same for both arms")

	f.StringVar(&o.aURL, "a-url", "", "arm A: base URL of a running server (or, with --a-cmd, the address its server listens on)")
	f.StringVar(&o.bURL, "b-url", "", "arm B: base URL of a running server (or, with --b-cmd, the address its server listens on)")
	f.StringVar(&o.aCmd, "a-cmd", "", "arm A: server command, split like a shell would but run without one; {port} is replaced")
	f.StringVar(&o.bCmd, "b-cmd", "", "arm B: server command, split like a shell would but run without one; {port} is replaced")
	f.StringVar(&o.aLabel, "a-label", "", "name of arm A in the report (default: its URL, command or role)")
	f.StringVar(&o.bLabel, "b-label", "", "name of arm B in the report")
	f.BoolVar(&o.logStats, "log-stats", false, "compare stats on (A) and off (B): of --server-cmd, or of the embedded simulator")
	f.StringVar(&o.serverCmd, "server-cmd", "", "with --log-stats: the server command; A adds --stats-on-flag, B --stats-off-flag")
	f.StringVar(&o.statsOnFlag, "stats-on-flag", "--log-stats", "with --server-cmd: argument(s) that turn stats on (empty: none)")
	f.StringVar(&o.statsOffFlag, "stats-off-flag", "", "with --server-cmd: argument(s) that turn stats off (current vLLM-Omni: --disable-log-stats)")
	f.BoolVar(&o.allowSaturated, "allow-saturated", false, "give a verdict even when an arm was measured by a saturated load generator (default: refuse, exit 1)")
	f.IntVar(&o.rounds, "rounds", abtest.DefaultRounds, "rounds per arm, run in the order A B B A A B ...")
	f.Float64Var(&o.alpha, "alpha", 0.05, "significance level, after Holm correction across e2e, TTFP and audio RTF")
	f.Float64Var(&o.power, "power", 0.8, "power of the minimum detectable effect")
	f.StringVar(&o.test, "test", stats.TestWelch.String(), "test that decides significance: welch (means) or utest (Mann-Whitney)")
	f.DurationVar(&o.startupTimeout, "startup-timeout", abtest.DefaultStartupTimeout, "how long a server command may take to answer GET /health with 200")
	f.DurationVar(&o.stopGrace, "stop-grace", abtest.DefaultStopGrace, "after SIGTERM, how long a server command may take to exit before SIGKILL")
	f.StringVar(&o.html, "html", "", "write a self-contained HTML report (tables and the arms' distributions) to this file")
	f.StringArrayVar(&o.gates, "fail-on-regression", nil, "METRIC:PCT: exit 3 when METRIC got significantly worse in B by more than PCT %, or B fails more often beyond chance (repeatable; metrics: "+strings.Join(abMetricNames(), ", ")+")")
	f.BoolVar(&o.throughput, "throughput", false, "also compare requests/s and audio s/s per round (Welch across rounds): a closed loop at -c N for -d D")
}

// config turns the flags into an abtest configuration.
func (o *abOptions) config(f *pflag.FlagSet) (abtest.Config, error) {
	var cfg abtest.Config
	rcfg, sc, err := o.runConfig(f)
	if err != nil {
		return cfg, err
	}
	test, err := stats.ParseTest(o.test)
	if err != nil {
		return cfg, fmt.Errorf("--test: %w", err)
	}
	var gates []compare.Gate
	for _, g := range o.gates {
		gate, err := compare.ParseGateFor(g, abtest.Metrics())
		if err != nil {
			return cfg, fmt.Errorf("--fail-on-regression: %w", err)
		}
		gates = append(gates, gate)
	}
	cfg = abtest.Config{
		Gates:          gates,
		AllowSaturated: o.allowSaturated,
		Run:            rcfg,
		Rounds:         o.rounds,
		Stats:          stats.Options{Alpha: o.alpha, Power: o.power, Test: test, Percentiles: o.run.percentiles},
		StartupTimeout: o.startupTimeout,
		StopGrace:      o.stopGrace,
		OutDir:         o.run.out,
		Throughput:     o.throughput,
	}
	if o.rounds < 1 {
		return cfg, fmt.Errorf("--rounds %d: want at least 1", o.rounds)
	}
	if o.startupTimeout <= 0 || o.stopGrace <= 0 {
		return cfg, fmt.Errorf("--startup-timeout %v and --stop-grace %v must be positive", o.startupTimeout, o.stopGrace)
	}
	if cfg.A, cfg.B, err = o.arms(f, rcfg, sc); err != nil {
		return cfg, err
	}
	if o.aLabel != "" {
		cfg.A.Label = o.aLabel
	}
	if o.bLabel != "" {
		cfg.B.Label = o.bLabel
	}
	return cfg, nil
}

// checkThroughput refuses a --throughput run whose load cannot measure a
// throughput: it needs a closed loop at a concurrency the user chose (to
// saturate the server; ab's sequential default would measure the latency
// again), an explicit length, and two rounds per arm for Welch's test.
func (o *abOptions) checkThroughput(f *pflag.FlagSet) error {
	switch {
	case !o.throughput:
		return nil
	case !f.Changed("concurrency"):
		return errors.New("--throughput needs -c N, a concurrency that saturates the server")
	case f.Changed("rate"):
		return errors.New("--throughput runs a closed loop at -c N: drop --rate")
	case !f.Changed("duration") && !f.Changed("requests"):
		return errors.New("--throughput needs -d D (per arm, split across the rounds)")
	case o.rounds < abtest.MinThroughputRounds:
		return fmt.Errorf("--throughput needs --rounds %d or more (Welch's test across rounds), got %d", abtest.MinThroughputRounds, o.rounds)
	}
	return nil
}

// runConfig is the workload every round runs: run's flags, with ab's own
// defaults for the load.
func (o *abOptions) runConfig(f *pflag.FlagSet) (runner.Config, *scenarios.Scenario, error) {
	for name, instead := range abRunFlagsRejected() {
		if f.Changed(name) {
			return runner.Config{}, nil, fmt.Errorf("--%s does not apply to ab: %s", name, instead)
		}
	}
	if err := o.checkThroughput(f); err != nil {
		return runner.Config{}, nil, err
	}
	// The original metrics design's method (docs/reference/metric-families.md,
	// section 7), unless the user says otherwise.
	if !f.Changed("requests") && !f.Changed("duration") {
		o.run.requests = 30
	}
	if !f.Changed("warmup") {
		o.run.warmup = 1
	}
	if err := report.CheckFormat(o.run.format, abtest.Formats()...); err != nil {
		return runner.Config{}, nil, err
	}
	rcfg, sc, err := o.run.plan(f)
	if err != nil {
		return rcfg, nil, err
	}
	// One worker, as that method has it, unless -c or --stages set them.
	if !f.Changed("concurrency") && rcfg.Load.Stages == nil {
		rcfg.Load.Concurrency = 1
	}
	// A scenario's open-loop settings do not apply: ab is sequential
	// unless the flags ask for a rate.
	if !f.Changed("rate") {
		rcfg.Load.Rate = 0
		if !f.Changed("arrival") {
			rcfg.Load.Arrival = ""
		}
		if !f.Changed("burstiness") {
			rcfg.Load.Burstiness = 0
		}
	}
	// An A/B weighs what the server's metrics cost: no scrapes during an
	// arm unless --scrape-interval asks for them.
	if !f.Changed("scrape-interval") {
		rcfg.ScrapeInterval = 0
	}
	// Nor do its request count or duration: -n and -d are per arm.
	if !f.Changed("duration") {
		rcfg.Load.Duration = 0
	} else if !f.Changed("requests") {
		rcfg.Load.Requests = 0
	}
	if err := rcfg.Load.Validate(); err != nil {
		return rcfg, nil, err
	}
	redactABFlags(rcfg.Flags)
	return rcfg, sc, nil
}

// arms are the two servers compared: the --log-stats experiment, the arms
// the flags name, or two embedded simulators.
func (o *abOptions) arms(f *pflag.FlagSet, rcfg runner.Config, sc *scenarios.Scenario) (a, b abtest.Arm, err error) {
	armFlags := f.Changed("a-url") || f.Changed("b-url") || f.Changed("a-cmd") || f.Changed("b-cmd")
	switch {
	case o.serverCmd != "" && !o.logStats:
		return a, b, errors.New("--server-cmd runs the --log-stats experiment: add --log-stats (or give --a-cmd and --b-cmd)")
	case o.logStats && armFlags:
		return a, b, errors.New("--log-stats compares one server with stats on and off: give it --server-cmd (or nothing, for the embedded simulator), not --a-url/--b-url/--a-cmd/--b-cmd")
	case !o.logStats && (f.Changed("stats-on-flag") || f.Changed("stats-off-flag")):
		return a, b, errors.New("--stats-on-flag and --stats-off-flag need --log-stats --server-cmd")
	case o.logStats && o.serverCmd != "":
		argv, err := splitFlag("--server-cmd", o.serverCmd)
		if err != nil {
			return a, b, err
		}
		on, err := splitFlag("--stats-on-flag", o.statsOnFlag)
		if err != nil {
			return a, b, err
		}
		off, err := splitFlag("--stats-off-flag", o.statsOffFlag)
		if err != nil {
			return a, b, err
		}
		a, b = abtest.LogStatsArms(argv, on, off)
		return a, b, nil
	case armFlags:
		if a, err = o.arm("a", o.aURL, o.aCmd); err != nil {
			return a, b, err
		}
		b, err = o.arm("b", o.bURL, o.bCmd)
		return a, b, err
	}
	// The embedded simulator serves whatever model the workload names.
	sim := rcfg.Simulator
	if sc.Model != "" {
		sim.Model = sc.Model
	}
	a, b = abtest.SimulatorArms(sim)
	return a, b, nil
}

func abMetricNames() []string {
	var names []string
	for _, m := range abtest.Metrics() {
		names = append(names, m.Name)
	}
	return names
}

// refusal maps an A/B run that gave no verdict to its exit status: 2 for
// an unusable configuration and for arms that do not show the stats they
// claim (a wrong flag, named), 1 for the rest (a server that broke, nothing
// measured).
func (o *abOptions) refusal(err error) error {
	switch {
	case errors.Is(err, abtest.ErrInvalidConfig):
		return withExitCode(2, err)
	case errors.Is(err, abtest.ErrStatsMismatch):
		if o.serverCmd != "" {
			err = fmt.Errorf("%w (given --stats-on-flag %q, --stats-off-flag %q)", err, o.statsOnFlag, o.statsOffFlag)
		}
		return withExitCode(2, err)
	}
	return err
}

// arm builds arm "a" or "b" from its URL and command flags.
func (o *abOptions) arm(name, rawURL, command string) (abtest.Arm, error) {
	if rawURL == "" && command == "" {
		return abtest.Arm{}, fmt.Errorf("arm %s: give --%s-url or --%s-cmd", name, name, name)
	}
	arm := abtest.Arm{URL: rawURL}
	if command != "" {
		argv, err := splitFlag("--"+name+"-cmd", command)
		if err != nil {
			return arm, err
		}
		if len(argv) == 0 {
			return arm, fmt.Errorf("--%s-cmd: empty command", name)
		}
		arm.Cmd = argv
	}
	return arm, nil
}

func splitFlag(flag, value string) ([]string, error) {
	argv, err := abtest.SplitCommand(value)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return argv, nil
}

// redactABFlags keeps secrets in server commands and URLs out of the
// results headers.
func redactABFlags(flags map[string]string) {
	for _, name := range []string{"a-cmd", "b-cmd", "server-cmd"} {
		if v, ok := flags[name]; ok {
			if argv, err := abtest.SplitCommand(v); err == nil {
				flags[name] = abtest.JoinArgs(abtest.RedactArgs(argv))
			} else {
				flags[name] = "[unparsable command]"
			}
		}
	}
	for _, name := range []string{"a-url", "b-url"} {
		if v, ok := flags[name]; ok {
			if u, err := url.Parse(v); err == nil && u.User != nil {
				u.User = nil
				flags[name] = u.String()
			}
		}
	}
}

func (o *abOptions) runAB(ctx context.Context, cmd *cobra.Command) error {
	cfg, err := o.config(cmd.Flags())
	if err != nil {
		return withExitCode(2, err)
	}
	stderr := cmd.ErrOrStderr()
	cfg.Run.Log = stderr
	if isTerminal(stderr) {
		cfg.Run.Progress = stderr
	}
	res, runErr := abtest.Run(ctx, cfg)
	if pe := (*abtest.PortInUseError)(nil); errors.As(runErr, &pe) {
		runErr = withExitCode(2, runErr) // unusable set-up, named by port
	}
	if res == nil || res.Verdict == "" {
		// Nothing was analysed (bad configuration, or a server that
		// failed before the run could finish).
		return o.refusal(runErr)
	}
	status := abStatus(res, runErr)
	verdict := verdictOf(status, res.Verdict)
	if err := res.Write(cmd.OutOrStdout(), o.run.format); err != nil {
		return err
	}
	if o.html != "" {
		page := res.HTML()
		page.Verdict = &verdict
		if err := report.WriteHTMLFile(o.html, page); err != nil {
			return fmt.Errorf("--html: %w", err)
		}
	}
	if res.Interrupted {
		fmt.Fprintln(stderr, "omnibench: interrupted; the results gathered so far were written")
	}
	return endReport(cmd.OutOrStdout(), o.run.format, o.run.wide, status, verdict.Reason)
}

// abStatus is the outcome of an A/B run that analysed its arms: a failed
// gate is a missed gate (exit 3); a verdict refused (a saturated load
// generator, an arm without samples) is a refusal (exit 1) with its
// reason, as in compare; a broken arm or a failed round is a failure.
func abStatus(res *abtest.Result, runErr error) error {
	var re *compare.RegressionError
	switch {
	case runErr == nil:
		return nil
	case errors.As(runErr, &re):
		return missed(runErr)
	case res.Refused != "" && !res.Interrupted:
		return refused(runErr)
	}
	return runErr // a broken arm (abtest.ErrArmBroken), a failed round, an interruption
}
