package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/itarconv/itarconv/internal/gcfloor"
	"github.com/itarconv/itarconv/remote"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitData  = 1 // bad or stale data, failed verification
	ExitUsage = 2 // bad flags or arguments, an output that is an input
	// ExitIO: the environment refused (no space, no permission, a
	// read-only file system).
	ExitIO = 3
	// ExitInterrupted is the shell's code for a death by SIGINT.
	ExitInterrupted = 130
	// ExitClosedOutput is the shell's code for a death by SIGPIPE: the
	// reader of standard output went away (`itarconv ls X | head`). The
	// run stops as if interrupted, removing what it had in progress.
	ExitClosedOutput = 141
)

// debugVariable, set to anything, prints the stack of an internal error.
const debugVariable = "ITARCONV_DEBUG"

// usageError marks an error as the caller's: it exits with ExitUsage.
type usageError struct{ error }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// errReported: the command has printed its own report; exit non-zero
// without another message.
var errReported = errors.New("reported")

// env is what every command writes to.
type env struct {
	stdout, stderr io.Writer
	quiet          bool
	// jsonOut is --json: the run's one document on standard output is
	// the envelope (envelope.go) holding result.
	jsonOut bool
	result  any
	// getenv reads the environment (os.Getenv): a job runner's variables
	// say which task of a partitioned run this is.
	getenv func(string) string
	// connections bounds the requests to remote shards in flight.
	connections int
	// noSign sends S3 requests unsigned (--no-sign-request).
	noSign bool
	// remote reads the remote shards of this run, under the bound of
	// connections; the commands' context carries it to the library.
	remote *remote.Client
	// storeSignedURLs lets URLs with a signature or token in their query
	// into the files we keep.
	storeSignedURLs bool
	// memory is --memory: what a command holds of the members until the
	// end, past which it spills beside its output (0: each part's own).
	memory     int64
	memoryFlag string
}

// client is the run's remote client (the default one before the flags
// are read).
func (e *env) client() *remote.Client {
	if e.remote == nil {
		return remote.DefaultClient()
	}
	return e.remote
}

// Main runs the command line with args and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) (code int) {
	// Every write to standard output is checked here, once for all
	// commands: a failed write (a full disk, a closed pipe) fails the run
	// even where a command's own last write went unchecked.
	out := &checkedWriter{w: stdout}
	// Messages, warnings and the progress line name remote shards by their
	// URLs: never with user info, a signature or a token.
	stderr = redactingWriter{stderr}
	e := &env{stdout: out, stderr: stderr, getenv: os.Getenv}
	// With --json, standard output carries the envelope only: what is
	// written there otherwise (cobra's help, a completion script) becomes
	// its result's text.
	jsonMode := jsonRequested(args)
	var captured bytes.Buffer
	if jsonMode {
		e.stdout = &captured
	}
	getenv := os.Getenv
	root := newRoot(e)
	command := ""
	// A panic on this goroutine is a bug, reported in one line; the stack
	// only on request.
	defer func() {
		if p := recover(); p != nil {
			code = reportPanic(stderr, getenv, p, debug.Stack())
			if jsonMode || e.jsonOut {
				err := panicError{Value: p}
				code = e.writeEnvelope(out, newEnvelope(command, code, err, nil), code)
			}
		}
	}()
	root.SetArgs(args)
	root.SetOut(e.stdout)
	root.SetErr(stderr)
	// Ctrl-C or SIGTERM cancels the work; outputs in progress are removed
	// and earlier files stay as they were.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A closed standard output makes writes fail with EPIPE instead of
	// killing the process, so that the run unwinds and removes its
	// temporaries; the writer then cancels the rest of the work.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	out.closed = func() { cancel(errClosedOutput) }
	signal.Ignore(syscall.SIGPIPE)
	cmd, err := root.ExecuteContextC(ctx)
	command = commandName(root, cmd, args)
	if err == nil {
		err = out.err
	}
	code = exitCode(ctx, out, stderr, getenv, err)
	if !jsonMode && !e.jsonOut {
		return code
	}
	result := e.result
	if command == "version" && cmd == root {
		result = versionInfo() // --version
	} else if result == nil && captured.Len() > 0 {
		result = textResult{Text: captured.String()}
	}
	return e.writeEnvelope(out, newEnvelope(command, code, err, result), code)
}

// writeEnvelope writes the run's envelope to out and returns the run's
// exit code, or that of a failed write.
func (e *env) writeEnvelope(out *checkedWriter, env envelope, code int) int {
	if err := writeEnvelope(out, env); err != nil {
		if out.closedPipe() {
			return ExitClosedOutput
		}
		fmt.Fprintf(e.stderr, "itarconv: %v\n", err)
		if code == ExitOK {
			return ExitIO
		}
	}
	return code
}

// commandName names the command a run executed for its envelope: its
// path below the root ("index", "completion bash"), "version" for
// --version, and for a command line naming no known command, the word
// given (or "" for none).
func commandName(root, cmd *cobra.Command, args []string) string {
	if cmd != nil && cmd != root {
		return strings.TrimPrefix(cmd.CommandPath(), root.Name()+" ")
	}
	if f := root.Flags().Lookup("version"); f != nil && f.Changed {
		return "version"
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// exitCode is the exit code of a run that ended with err, whose one-line
// message it prints on stderr.
func exitCode(ctx context.Context, out *checkedWriter, stderr io.Writer, getenv func(string) string, err error) int {
	var pe panicError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &pe):
		return reportPanic(stderr, getenv, pe.Value, pe.Stack)
	case out.closedPipe() || errors.Is(context.Cause(ctx), errClosedOutput):
		return ExitClosedOutput
	case errors.Is(err, errReported):
		return ExitData
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "itarconv: interrupted; outputs in progress were removed")
		return ExitInterrupted
	}
	var ue usageError
	// cobra's own refusals (an unknown command) are usage errors too.
	if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command") || userMistake(err) {
		fmt.Fprintf(stderr, "itarconv: %v\n", err)
		fmt.Fprintf(stderr, "Run 'itarconv --help' for usage.\n")
		return ExitUsage
	}
	fmt.Fprintf(stderr, "itarconv: %v\n", err)
	if envError(err) || errors.Is(err, errStdout) {
		return ExitIO
	}
	return ExitData
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "itarconv",
		Short: "Index tar shards for random access and convert datasets between formats",
		Long: `itarconv indexes folds of tar shards (train_0000.tar, ...) into TARIDX files,
the random-access index of glzn's iTar datasets, and reads, lists and
verifies members through them.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().BoolVarP(&e.quiet, "quiet", "q", false, "no progress bar and no summary")
	root.PersistentFlags().BoolVar(&e.jsonOut, "json", false,
		"print one JSON document on standard output, the same envelope for every command: command, ok, result, error (see docs/JSON.md)")
	root.PersistentFlags().BoolVar(&e.storeSignedURLs, "store-signed-urls", false,
		"write URLs whose query carries a signature or token (presigned URLs) into the files an index run keeps (manifests, loader indexes); without it they are refused there")
	root.PersistentFlags().IntVar(&e.connections, "connections", remote.DefaultConnections,
		"requests in flight at once to remote shards (http://, https://, s3://), across all of them")
	root.PersistentFlags().BoolVar(&e.noSign, "no-sign-request", false,
		"read s3:// shards with unsigned requests (a public bucket), as aws s3 --no-sign-request; also AWS_NO_SIGN_REQUEST=1, and the default where no credentials are found")
	root.PersistentFlags().StringVar(&e.memoryFlag, "memory", "",
		"memory for what a command keeps of every member until the end (index rows and sample keys, the loaders' and a conversion's tables), such as 512MiB; past it, sorted runs spill to temporary files beside the output (default: each part's own: 24 MiB for a TARIDX, 16 MiB for TBL's metadata, 256 MiB for Barecat and the loaders' indexes)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if HeapFloor > 0 && floorCommands[cmd.Name()] {
			gcfloor.Start(HeapFloor)
		}
		if e.connections < 1 {
			return usagef("--connections must be at least 1")
		}
		if e.memoryFlag != "" {
			m, err := parseSize(e.memoryFlag)
			if err != nil {
				return usagef("--memory: %v", err)
			}
			e.memory = m
		}
		// One client for the run: its bound is on the requests of all
		// its shards together.
		e.remote = remote.NewClient(remote.Options{Connections: e.connections, NoSign: e.noSign})
		cmd.SetContext(remote.WithClient(cmd.Context(), e.remote))
		return nil
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newIndexCmd(e), newConvertCmd(e), newInspectCmd(e), newLsCmd(e), newCatCmd(e), newVerifyCmd(e), newBenchCmd(e), newMergeCmd(e),
		newVersionCmd(e))
	// --version says what `itarconv version` says; cobra's completion
	// command writes shell completion scripts (bash, zsh, fish, PowerShell).
	root.Version = version()
	root.SetVersionTemplate("{{.Version}}\n")
	return root
}

// HeapFloor, set by the binary, is the least heap goal of the commands
// that pass over every shard of a dataset (floorCommands), whose live
// heap is a few megabytes: see package gcfloor. 0: the runtime's own.
// The commands that read an index for random access (ls, cat, inspect)
// and verify keep theirs, so that their memory stays what the live heap
// asks.
var HeapFloor uint64

var floorCommands = map[string]bool{"index": true, "convert": true, "merge": true}

// args checks a command's argument count, as a usage error.
func argsBetween(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < min || (max >= 0 && len(args) > max) {
			return usagef("%s: wrong number of arguments (%d)\nUsage: %s", cmd.Name(), len(args), cmd.UseLine())
		}
		return nil
	}
}

func (e *env) infof(format string, args ...any) {
	if !e.quiet {
		fmt.Fprintf(e.stderr, format, args...)
	}
}

func (e *env) warnf(format string, args ...any) {
	fmt.Fprintf(e.stderr, "warning: "+format, args...)
}

func defaultWorkers() int { return runtime.GOMAXPROCS(0) }

// shardWorkers is --workers, unless the user left it and some shards are
// remote: their scans wait on the network, not on the CPU, and take as
// many workers as there are connections to keep busy.
func (e *env) shardWorkers(cmd *cobra.Command, workers int, shards []string) int {
	if cmd.Flags().Changed("workers") || !remote.AnyURL(shards) {
		return workers
	}
	return max(workers, min(e.connections, len(shards)))
}
