package engine_test

import (
	"fmt"
	"syscall"
	"testing"
)

// deadURL is an endpoint that refuses every connection, for the test's
// whole life: a socket bound to a port of 127.0.0.1 and never listening
// (a connection to it is reset at once). The port stays bound, so no
// server another test starts meanwhile can take it, as one could a port
// a closed listener let go.
func deadURL(t *testing.T) string {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d/v1", sa.(*syscall.SockaddrInet4).Port)
}
