package auditotel_test

import "strings"

type envMap map[string]string

func (m envMap) get(k string) string { return m[k] }

func cutEq(s string) (string, string, bool) { return strings.Cut(s, "=") }
