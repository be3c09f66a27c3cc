package main

import (
	"errors"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/omnibench/omnibench/internal/experiment/abtest"
	"github.com/omnibench/omnibench/internal/secret"
)

// commandRedactor is the one redactor of a command: every credential its
// command line and environment hold. Any flag's value is looked at, not a
// list of names: the API key (and $OMNIBENCH_API_KEY), every -H value, the
// userinfo of any URL (--url, --metrics-url, --push, ab's --a-url ...), the
// secret-looking flags and NAME=value assignments of ab's server commands,
// and any flag whose own name looks secret; then the userinfo of the
// positional URLs (scrape, diff and check take theirs so) and of the proxy
// URLs in the environment (HTTPS_PROXY ...), through which requests carry
// it. The runner, the clients and the scrapes add what they learn on top;
// everything written or printed goes through it.
func commandRedactor(f *pflag.FlagSet) *secret.Redactor {
	var vals []string
	if k := os.Getenv("OMNIBENCH_API_KEY"); k != "" {
		vals = append(vals, k)
	}
	vals = append(vals, secret.FromEnvironment(os.Getenv)...)
	for _, a := range f.Args() {
		vals = append(vals, secret.FromURL(a)...)
	}
	f.VisitAll(func(fl *pflag.Flag) {
		for _, v := range flagElements(fl) {
			switch {
			case fl.Name == "header":
				if _, value, ok := strings.Cut(v, ":"); ok {
					vals = append(vals, secret.FromHeader(value)...)
				}
			case secret.IsSecretName(fl.Name):
				vals = append(vals, v)
			}
			vals = append(vals, secret.FromURL(v)...)
			if argv, err := abtest.SplitCommand(v); err == nil && len(argv) > 1 {
				vals = append(vals, secret.FromArgs(argv)...)
				for _, a := range argv {
					vals = append(vals, secret.FromURL(a)...)
				}
			}
		}
	})
	return secret.New(vals...)
}

// flagElements are the values of a flag, one per element for list flags.
func flagElements(fl *pflag.Flag) []string {
	if sv, ok := fl.Value.(pflag.SliceValue); ok {
		return sv.GetSlice()
	}
	return []string{fl.Value.String()}
}

// redactOutputs routes the command's stdout and stderr through the
// command's redactor (cobra's PersistentPreRunE of the root: every command
// gets it). Reports, tables, logs and progress all go through these two.
func redactOutputs(cmd *cobra.Command, _ []string) error {
	r := commandRedactor(cmd.Flags())
	cmd.SetOut(r.Writer(cmd.OutOrStdout()))
	cmd.SetErr(r.Writer(cmd.ErrOrStderr()))
	return nil
}

// redactErrors wraps the RunE of cmd and of every command below it, so that
// the error a command returns (which may quote a server or a gateway) is
// redacted like its output, wherever it is printed.
func redactErrors(cmd *cobra.Command) {
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(c *cobra.Command, args []string) error {
			return redactError(commandRedactor(c.Flags()), run(c, args))
		}
	}
	for _, sub := range cmd.Commands() {
		redactErrors(sub)
	}
}

// redactError returns err with its message redacted, keeping its exit
// status and its chain for errors.Is and errors.As.
func redactError(r *secret.Redactor, err error) error {
	if err == nil {
		return err
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err == nil {
			return err
		}
		return &exitError{code: ee.code, err: redactError(r, ee.err), noVerdict: ee.noVerdict, reason: r.String(ee.reason)}
	}
	msg := r.String(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

// redactedError is an error whose message had credentials removed.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
