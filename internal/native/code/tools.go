package code

import (
	"encoding/json"

	"github.com/guilds/guilds/internal/tools"
)

// The eleven code tools.
const (
	ToolShell       = "shell"
	ToolShellStatus = "shell_status"
	ToolFileRead    = "file_read"
	ToolFileEdit    = "file_edit"
	ToolFileWrite   = "file_write"
	ToolCodeSearch  = "code_search"
	ToolCodeMatch   = "code_match"
	ToolCodeMap     = "code_map"
	ToolCodeFind    = "code_find"
	ToolCodeOutline = "code_outline"
	ToolCodeCallers = "code_callers"
)

// Names lists the code tools in the catalog's order.
var Names = []string{ToolShell, ToolShellStatus, ToolFileRead, ToolFileEdit, ToolFileWrite,
	ToolCodeSearch, ToolCodeMatch, ToolCodeMap, ToolCodeFind, ToolCodeOutline, ToolCodeCallers}

// decl is a tool as this package declares it; Register adds the handler.
type decl struct {
	name, description string
	schema            string
	class             tools.Class
	idempotent        bool
}

// pathNote is repeated in every tool that takes a path.
const pathNote = "relative to the working directory (it starts at /home/agent), or absolute under /home/agent"

var decls = []decl{
	{name: ToolShell, class: tools.ClassShell, description: "Run a bash command in your workspace (/home/agent) and get its " +
		"combined stdout and stderr, shaped: long output keeps its start and its end around a line naming the full log. " +
		"A command that fails ends with exit_code: N; one past its timeout is stopped and ends with exit_code: 124. " +
		"A cd carries over to the next call; exported variables do not. stdin is closed, so use non-interactive flags. " +
		"With background the command keeps running and you get its id (b1, b2, …) for shell_status.",
		schema: `{"type":"object","properties":{
			"command":{"type":"string","minLength":1,"description":"the bash command line"},
			"timeout_seconds":{"type":"integer","minimum":1,"maximum":600,"description":"stop the command after this many seconds (default 120, at most 600)"},
			"background":{"type":"boolean","description":"start the command and return at once; check it with shell_status"}},
			"required":["command"],"additionalProperties":false}`},
	{name: ToolShellStatus, class: tools.ClassCode, description: "Without id, list your background commands with their state. " +
		"With id, that command's state, exit code and the last 40 lines of its log; with stop, end it.",
		schema: `{"type":"object","properties":{
			"id":{"type":"string","pattern":"^b[0-9]+$","description":"a background command's id, such as b1"},
			"stop":{"type":"boolean","description":"end the command named by id"}},
			"additionalProperties":false}`},
	{name: ToolFileRead, class: tools.ClassCode, idempotent: true, description: "Read numbered lines of a text file under a " +
		"\"lines a–b of n\" header; the header says which offset continues a range cut short. " +
		"Reading again lines you already read, from an unchanged file, returns one line pointing at that earlier result.",
		schema: `{"type":"object","properties":{
			"path":{"type":"string","minLength":1,"description":"the file, ` + pathNote + `"},
			"offset":{"type":"integer","minimum":1,"description":"first line to read (default 1)"},
			"limit":{"type":"integer","minimum":1,"maximum":500,"description":"how many lines (default 200, at most 500)"}},
			"required":["path"],"additionalProperties":false}`},
	{name: ToolFileEdit, class: tools.ClassCode, description: "Replace an exact string in a file. The string must occur once, " +
		"or use replace_all; a missing or ambiguous string is an error and changes nothing. The file is replaced atomically and keeps its mode.",
		schema: `{"type":"object","properties":{
			"path":{"type":"string","minLength":1,"description":"the file, ` + pathNote + `"},
			"old_string":{"type":"string","minLength":1,"description":"the exact text to replace, whitespace included"},
			"new_string":{"type":"string","description":"the text to put in its place"},
			"replace_all":{"type":"boolean","description":"replace every occurrence instead of exactly one"}},
			"required":["path","old_string","new_string"],"additionalProperties":false}`},
	{name: ToolFileWrite, class: tools.ClassCode, idempotent: true, description: "Write a whole file, creating missing folders; " +
		"an existing file is replaced atomically and keeps its mode.",
		schema: `{"type":"object","properties":{
			"path":{"type":"string","minLength":1,"description":"the file, ` + pathNote + `"},
			"content":{"type":"string","description":"the complete new content"}},
			"required":["path","content"],"additionalProperties":false}`},
	{name: ToolCodeSearch, class: tools.ClassCode, idempotent: true, description: "Search text in the workspace, respecting .gitignore. " +
		"mode files (default): matching paths with their match counts; content: path:line: text of the matches, with context lines; " +
		"symbols: matches grouped under their enclosing function or class, with its span and how many places reference it. " +
		"Paths in the result are relative to the working directory.",
		schema: `{"type":"object","properties":{
			"pattern":{"type":"string","minLength":1,"description":"a regular expression, or literal text with fixed"},
			"path":{"type":"string","description":"folder or file to search, ` + pathNote + ` (default the working directory)"},
			"glob":{"type":"string","description":"only files matching this glob, such as *.go or src/**/*.ts"},
			"mode":{"type":"string","enum":["files","content","symbols"],"description":"files (default), content or symbols"},
			"fixed":{"type":"boolean","description":"take pattern as literal text"},
			"ignore_case":{"type":"boolean","description":"match letters of either case"},
			"context":{"type":"integer","minimum":0,"maximum":5,"description":"lines of context around each match in content mode (0 to 5)"},
			"limit":{"type":"integer","minimum":1,"maximum":40,"description":"at most this many paths (files, up to 30), lines (content, up to 40) or groups (symbols, up to 20)"}},
			"required":["pattern"],"additionalProperties":false}`},
	{name: ToolCodeMatch, class: tools.ClassCode, idempotent: true, description: "Find code by syntax, free of hits in comments " +
		"and strings: pattern is code with $NAME wildcards, such as \"fmt.Errorf($$$ARGS)\" or \"def $F(self): $$$BODY\". " +
		"Results are path:line: first matched line. The language comes from lang or each file's extension.",
		schema: `{"type":"object","properties":{
			"pattern":{"type":"string","minLength":1,"description":"a code pattern with $NAME (one node) and $$$NAME (any number) wildcards"},
			"lang":{"type":"string","description":"the language of the pattern, such as go, python, typescript, rust or java (default each file's extension)"},
			"path":{"type":"string","description":"folder or file to search, ` + pathNote + ` (default the working directory)"},
			"limit":{"type":"integer","minimum":1,"maximum":100,"description":"at most this many matches (default 30, at most 100)"}},
			"required":["pattern"],"additionalProperties":false}`},
	{name: ToolCodeMap, class: tools.ClassCode, idempotent: true, description: "Map a repository under /home/agent/repos/: " +
		"its directory clusters with file and symbol counts and their most referenced symbols, then the most referenced symbols overall. " +
		"A first call on a large repository builds its graph and can take minutes.",
		schema: `{"type":"object","properties":{
			"repo":{"type":"string","description":"the repository's folder name under /home/agent/repos/ (default the one holding the working directory, else the only one)"}},
			"additionalProperties":false}`},
	{name: ToolCodeFind, class: tools.ClassCode, idempotent: true, description: "Find the symbols and files a question is about, " +
		"ranked, with path:line and their signature; with source, up to 8 lines of each.",
		schema: `{"type":"object","properties":{
			"question":{"type":"string","minLength":1,"description":"what you are looking for, in words or identifiers"},
			"in":{"type":"string","description":"a folder or file of a repository to narrow to, ` + pathNote + `"},
			"source":{"type":"boolean","description":"include up to 8 lines of each hit's source"},
			"limit":{"type":"integer","minimum":1,"maximum":20,"description":"at most this many hits (default 8, at most 20)"}},
			"required":["question"],"additionalProperties":false}`},
	{name: ToolCodeOutline, class: tools.ClassCode, idempotent: true, description: "Every signature in a source file with its " +
		"line span, without bodies.",
		schema: `{"type":"object","properties":{
			"path":{"type":"string","minLength":1,"description":"the file, ` + pathNote + `"}},
			"required":["path"],"additionalProperties":false}`},
	{name: ToolCodeCallers, class: tools.ClassCode, idempotent: true, description: "What references a symbol (direction in, the default), " +
		"or what it references (out), indented by depth, with path:line.",
		schema: `{"type":"object","properties":{
			"symbol":{"type":"string","minLength":1,"description":"the symbol's name, such as Open or Store.Open"},
			"direction":{"type":"string","enum":["in","out"],"description":"in: its callers and references (default); out: what it calls"},
			"depth":{"type":"integer","minimum":1,"maximum":3,"description":"how many levels to follow (1 to 3, default 1)"},
			"in":{"type":"string","description":"a folder or file of a repository to narrow to, ` + pathNote + `"},
			"page":{"type":"integer","minimum":1,"description":"which 25 direct edges to list (default 1); an answer says when more are left"}},
			"required":["symbol"],"additionalProperties":false}`},
}

func (d decl) tool(h tools.Handler) tools.Tool {
	return tools.Tool{Name: d.name, Description: d.description, Schema: json.RawMessage(d.schema),
		Handler: h, Class: d.class, Idempotent: d.idempotent}
}
