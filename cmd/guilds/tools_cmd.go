package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/guilds/guilds/internal/tools"
)

// maxToolsInput bounds what the tools commands read (a result or a schema).
const maxToolsInput = 64 << 20

// toolsCommand runs `guilds tools shape-schema [FILE]` and `guilds tools stamp --remaining N [--cap BYTES] [--secrets-file F]`.
func toolsCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	usage := func() int {
		fmt.Fprintln(stderr, "usage: guilds tools shape-schema [FILE] | guilds tools stamp --remaining N [--cap BYTES] [--secrets-file F]")
		return 2
	}
	if len(args) == 0 {
		return usage()
	}
	var err error
	switch args[0] {
	case "shape-schema":
		err = shapeSchemaCmd(args[1:], stdin, stdout, stderr)
	case "stamp":
		err = stampCmd(args[1:], stdin, stdout, stderr)
	case "-h", "--help", "help":
		usage()
		return 0
	default:
		fmt.Fprintf(stderr, "guilds tools: unknown command %q\n", args[0])
		return usage()
	}
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "guilds tools %s: %v\n", args[0], err)
		}
		return 2
	}
	return 0
}

func shapeSchemaCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("shape-schema", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return errors.New("at most one FILE")
	}
	in := stdin
	if fs.NArg() == 1 && fs.Arg(0) != "-" {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		in = f
	}
	raw, err := readAllLimited(in)
	if err != nil {
		return err
	}
	shaped, warnings, err := tools.Shape(raw)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	_, err = fmt.Fprintf(stdout, "%s\n", shaped)
	return err
}

func stampCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("stamp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	remaining := fs.Int("remaining", -1, "tool calls the run has left (required)")
	capBytes := fs.Int("cap", tools.DefaultCap, "byte cap of the result before the trailer")
	secretsFile := fs.String("secrets-file", "", "file with one secret value per line")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: the raw result is read on stdin", fs.Arg(0))
	}
	if *remaining < 0 {
		return errors.New("--remaining N is required and must be 0 or more")
	}
	if *capBytes < tools.MinCap {
		return fmt.Errorf("--cap must be at least %d bytes", tools.MinCap)
	}
	var red *tools.Redactor
	if *secretsFile != "" {
		secrets, err := readSecrets(*secretsFile)
		if err != nil {
			return err
		}
		red = tools.NewRedactor(secrets, slog.New(slog.NewTextHandler(stderr, nil)))
	}
	raw, err := readAllLimited(stdin)
	if err != nil {
		return err
	}
	out := tools.Stamp(string(raw), tools.StampOptions{Redactor: red, Cap: *capBytes, Remaining: *remaining})
	_, err = io.WriteString(stdout, out+"\n")
	return err
}

// readSecrets reads one secret per line; line ends (LF or CRLF) are not part
// of a value and empty lines are skipped. Errors never quote the file's content.
func readSecrets(path string) ([]string, error) {
	f, err := os.Open(path) //nolint:gosec // G304: the file the operator named on the command line
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if s := strings.TrimSuffix(sc.Text(), "\r"); s != "" {
			out = append(out, s)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading secrets file: %w", err)
	}
	return out, nil
}

func readAllLimited(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxToolsInput+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxToolsInput {
		return nil, fmt.Errorf("input over %d bytes", maxToolsInput)
	}
	return b, nil
}
