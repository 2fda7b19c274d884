//go:build unix

package fakemodel

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// A reserved closed port refuses connections and cannot be taken by a listener, which a port
// got by closing a listener can: that is how a "refused" endpoint in a test came to answer.
func TestClosedPortRefusesAndCannotBeTaken(t *testing.T) {
	freed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freed.Close()
	taker, err := net.Listen("tcp", freed.Addr().String())
	if err != nil {
		t.Fatalf("the freed port could not be listened on again (%v); the contrast below proves nothing", err)
	}
	taker.Close()

	p, err := ReserveClosedPort()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if ln, err := net.Listen("tcp", p.Addr); err == nil {
		ln.Close()
		t.Fatalf("a listener took the reserved port %s", p.Addr)
	}
	for range 3 {
		c, err := net.Dial("tcp", p.Addr)
		if err == nil {
			c.Close()
			t.Fatalf("dial %s connected", p.Addr)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("dial %s: %v, want connection refused", p.Addr, err)
		}
	}
	if p.URL != "http://"+p.Addr+"/v1" {
		t.Errorf("URL = %q", p.URL)
	}
}
