package main

import (
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/metrics/check"
	"github.com/omnibench/omnibench/internal/wsclient"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/scenarios"
)

// flagValues are the values shell completion offers for a flag, by flag
// name, wherever a command has it. A command that registered its own
// completion for a flag (check's --format, replay's --mode) keeps it.
var flagValues = map[string][]string{
	"format":          {report.FormatTable, report.FormatMarkdown, report.FormatJSON, report.FormatCSV},
	"kind":            scenarios.Kinds(),
	"ws-audio":        wsclient.SpeechModes(),
	"arrival":         {load.Constant, load.Poisson, load.Gamma},
	"continuity-mode": {continuity.Default.String(), continuity.Reference.String()},
	"accept":          acceptValues(),
	"scrape":          {"auto", "on", "off"},
	"audio-format":    {"wav", "pcm", "flac", "mp3", "opus"},
	"profile":         append(check.ProfileNames(), "none"),
	"by":              {"concurrency", "rate"},
}

// registerCompletions registers value completions for cmd's own flags.
func registerCompletions(cmd *cobra.Command) {
	f := cmd.Flags()
	for name, values := range flagValues {
		if f.Lookup(name) != nil {
			if _, ok := cmd.GetFlagCompletionFunc(name); !ok {
				_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(slices.Clone(values), cobra.ShellCompDirectiveNoFileComp))
			}
		}
	}
	if f.Lookup("scenario") != nil {
		if _, ok := cmd.GetFlagCompletionFunc("scenario"); !ok {
			_ = cmd.RegisterFlagCompletionFunc("scenario", completeScenario)
		}
	}
}

// completeScenario offers the built-in scenario names and the scenario
// files (*.yaml, *.yml) matching what was typed so far.
func completeScenario(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, n := range scenarios.Names() {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	for _, pattern := range []string{"*.yaml", "*.yml"} {
		files, _ := filepath.Glob(toComplete + pattern)
		out = append(out, files...)
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// bashCompletionCheck heads the bash script. Cobra's script calls functions
// of the bash-completion package (_get_comp_words_by_ref); without it every
// TAB would print "command not found", so the script says what is missing
// when it is loaded and defines nothing.
const bashCompletionCheck = `# omnibench's bash completion needs the bash-completion package.
if ! declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
    echo "omnibench: bash completion needs the bash-completion package (apt install bash-completion, dnf install bash-completion, brew install bash-completion@2); load it before this script" >&2
    return 1 2>/dev/null || exit 1
fi
`

// addCompletionCmd adds cobra's completion command now (Execute would add
// it later), with examples. Its scripts go to the command's output as set
// when it runs (cobra's own commands write to the output the root had when
// they were made), and the bash script starts with bashCompletionCheck;
// the command's help says so.
func addCompletionCmd(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	completion, _, err := root.Find([]string{"completion"})
	if err != nil || completion.Name() != "completion" {
		return
	}
	completion.Long += "\nBash completion needs the bash-completion package (apt install bash-completion,\n" +
		"brew install bash-completion@2); the bash script says so when it is loaded without it.\n"
	completion.Example = "  source <(omnibench completion bash)\n  omnibench completion zsh > \"${fpath[1]}/_omnibench\""
	shells := map[string]struct {
		example string
		write   func(w io.Writer, descriptions bool) error
	}{
		"bash": {"  source <(omnibench completion bash)", func(w io.Writer, desc bool) error {
			if _, err := io.WriteString(w, bashCompletionCheck); err != nil {
				return err
			}
			return root.GenBashCompletionV2(w, desc)
		}},
		"zsh": {"  omnibench completion zsh > \"${fpath[1]}/_omnibench\"", func(w io.Writer, desc bool) error {
			if desc {
				return root.GenZshCompletion(w)
			}
			return root.GenZshCompletionNoDesc(w)
		}},
		"fish": {"  omnibench completion fish > ~/.config/fish/completions/omnibench.fish", root.GenFishCompletion},
		"powershell": {"  omnibench completion powershell | Out-String | Invoke-Expression", func(w io.Writer, desc bool) error {
			if desc {
				return root.GenPowerShellCompletionWithDesc(w)
			}
			return root.GenPowerShellCompletion(w)
		}},
	}
	for _, c := range completion.Commands() {
		shell, ok := shells[c.Name()]
		if !ok {
			continue
		}
		c.Example = shell.example
		c.RunE = func(cmd *cobra.Command, _ []string) error {
			noDesc, _ := cmd.Flags().GetBool("no-descriptions")
			return shell.write(cmd.OutOrStdout(), !noDesc)
		}
	}
}
