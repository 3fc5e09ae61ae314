// Command lanehelper is the helper of the lane's tests: it answers a
// request through helper.Serve, or fails in the way the request asks.
package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/guilds/guilds/sandbox/helper"
)

// Request asks for one behaviour.
type Request struct {
	Mode   string `json:"mode"` // echo, exit, hang, flood
	Pad    string `json:"pad,omitempty"`
	Secret string `json:"secret,omitempty"`
}

// Response tells what the helper received and how it was started.
type Response struct {
	PadBytes int    `json:"pad_bytes"`
	Secret   string `json:"secret"`
	Cmdline  string `json:"cmdline"` // this process's argv as the kernel shows it
}

func main() {
	if len(os.Args) != 2 {
		os.Exit(2)
	}
	os.Exit(helper.Serve("lanehelper", os.Args[1], helper.ReadOptions{MaxFile: 1 << 20}, os.Stdout, os.Stderr, serve))
}

func serve(r Request) Response {
	switch r.Mode {
	case "exit":
		_, _ = fmt.Fprintln(os.Stderr, "some progress\nlanehelper: the thing broke")
		os.Exit(3)
	case "hang":
		for { // until the exec's timeout stops it
			time.Sleep(time.Hour)
		}
	case "flood":
		_, _ = os.Stdout.WriteString(strings.Repeat("x", 1<<16))
	}
	cmdline, _ := os.ReadFile("/proc/self/cmdline")
	return Response{PadBytes: len(r.Pad), Secret: r.Secret, Cmdline: string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))}
}
