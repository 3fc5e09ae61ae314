package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// lsp is a language server over stdio, asked one request at a time.
type lsp struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	next int
}

func startLSP(root string, argv []string, env []string) (*lsp, error) {
	cmd := exec.Command(argv[0], argv[1:]...) //nolint:gosec // G204: the server the harness was told to run
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	s := &lsp{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	uri := fileURI(root)
	init := map[string]any{
		"processId": os.Getpid(), "rootUri": uri,
		"workspaceFolders": []map[string]string{{"uri": uri, "name": "bench"}},
		"capabilities": map[string]any{"textDocument": map[string]any{
			"callHierarchy": map[string]any{}, "definition": map[string]any{},
			"documentSymbol": map[string]any{"hierarchicalDocumentSymbolSupport": true}}},
	}
	if err := s.call("initialize", init, nil); err != nil {
		return nil, err
	}
	return s, s.notify("initialized", map[string]any{})
}

func fileURI(p string) string { return "file://" + p }

func (s *lsp) write(msg map[string]any) error {
	msg["jsonrpc"] = "2.0"
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(s.in, "Content-Length: %d\r\n\r\n%s", len(b), b)
	return err
}

func (s *lsp) notify(method string, params any) error {
	return s.write(map[string]any{"method": method, "params": params})
}

// call sends a request and reads until its answer, answering the server's
// own requests (configuration, progress) with null.
func (s *lsp) call(method string, params, result any) error {
	s.next++
	id := s.next
	if err := s.write(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return err
	}
	for {
		body, err := s.read()
		if err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			return err
		}
		if m.Method != "" {
			if len(m.ID) > 0 { // a request from the server
				var reply any
				if m.Method == "workspace/configuration" {
					reply = []any{map[string]any{}}
				}
				if err := s.write(map[string]any{"id": m.ID, "result": reply}); err != nil {
					return err
				}
			}
			continue
		}
		if string(m.ID) != strconv.Itoa(id) {
			continue
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if result == nil {
			return nil
		}
		return json.Unmarshal(m.Result, result)
	}
}

func (s *lsp) read() ([]byte, error) {
	n := -1
	for {
		line, err := s.out.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length:"); ok {
			n, err = strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return nil, err
			}
		}
	}
	if n < 0 {
		return nil, fmt.Errorf("a message without Content-Length")
	}
	b := make([]byte, n)
	_, err := io.ReadFull(s.out, b)
	return b, err
}

func (s *lsp) close() {
	_ = s.call("shutdown", nil, nil)
	_ = s.notify("exit", nil)
	_ = s.in.Close()
	_ = s.cmd.Wait()
}

type position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type lspRange struct {
	Start position `json:"start"`
	End   position `json:"end"`
}

type callItem struct {
	Name           string          `json:"name"`
	URI            string          `json:"uri"`
	Range          lspRange        `json:"range"`
	SelectionRange lspRange        `json:"selectionRange"`
	Data           json.RawMessage `json:"data,omitempty"`
	Kind           int             `json:"kind"`
	Detail         string          `json:"detail,omitempty"`
}

// incoming lists the call sites of the definition whose name starts at
// (line, col) of file (both 0-based): file and 0-based line of each.
func (s *lsp) incoming(file string, line, col int) ([]site, error) {
	var items []callItem
	err := s.call("textDocument/prepareCallHierarchy", map[string]any{
		"textDocument": map[string]string{"uri": fileURI(file)},
		"position":     position{line, col},
	}, &items)
	if err != nil {
		return nil, err
	}
	var out []site
	for _, it := range items {
		var calls []struct {
			From       callItem   `json:"from"`
			FromRanges []lspRange `json:"fromRanges"`
		}
		if err := s.call("callHierarchy/incomingCalls", map[string]any{"item": it}, &calls); err != nil {
			return nil, err
		}
		for _, c := range calls {
			for _, r := range c.FromRanges {
				out = append(out, site{file: strings.TrimPrefix(c.From.URI, "file://"), line: r.Start.Line + 1})
			}
		}
	}
	return out, nil
}

// site is a place in a file: its absolute path and 1-based line.
type site struct {
	file string
	line int
}
