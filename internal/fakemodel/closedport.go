//go:build unix

package fakemodel

import (
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// ClosedPort is a loopback port that refuses every connection for as long as it is held: a
// socket bound to it that never listens. Closing a listener is not enough to get such a port:
// the kernel hands the freed port to the next listener on 127.0.0.1:0 (another test's server, in
// this process or another on a busy machine), and the "closed" endpoint then answers.
type ClosedPort struct {
	Addr string // host:port
	URL  string // http://host:port/v1, as a provider base_url
	fd   int
}

// ReserveClosedPort binds a socket to 127.0.0.1:0 without listening on it. Release it with Close.
func ReserveClosedPort() (*ClosedPort, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("reserve closed port: socket: %w", err)
	}
	// No SO_REUSEADDR, so no other socket can bind the port while this one holds it.
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("reserve closed port: bind: %w", err)
	}
	sa, err := syscall.Getsockname(fd)
	in4, ok := sa.(*syscall.SockaddrInet4)
	if err != nil || !ok {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("reserve closed port: getsockname: %v", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(in4.Port))
	return &ClosedPort{Addr: addr, URL: "http://" + addr + "/v1", fd: fd}, nil
}

// Close gives the port back.
func (p *ClosedPort) Close() error { return syscall.Close(p.fd) }
