//go:build !linux

package docker

import "errors"

var errNoMounts = errors.New("attaching a home after creation needs Linux")

func sharedFolder(string) (bool, error)   { return false, errNoMounts }
func unshareFolder(string) error          { return nil }
func bindInto(string, string, bool) error { return errNoMounts }
func detach(string) error                 { return nil }
