package faultproxy

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// echo serves lines back until the connection closes.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(c net.Conn, deadline time.Duration) error {
	_ = c.SetDeadline(time.Now().Add(deadline))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	_, err := bufio.NewReader(c).ReadString('\n')
	return err
}

func TestStallDropHeal(t *testing.T) {
	p, err := New(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := roundTrip(c, 5*time.Second); err != nil {
		t.Fatalf("through a healthy proxy: %v", err)
	}

	p.Stall()
	if err := roundTrip(c, 50*time.Millisecond); err == nil {
		t.Fatal("a round trip went through a stalled proxy")
	}
	p.Heal()
	c2, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := roundTrip(c2, 5*time.Second); err != nil {
		t.Fatalf("after healing: %v", err)
	}

	p.Drop()
	if err := roundTrip(c2, 5*time.Second); err == nil {
		t.Fatal("a dropped connection still worked")
	}
	if c3, err := net.Dial("tcp", p.Addr()); err == nil {
		if roundTrip(c3, time.Second) == nil {
			t.Fatal("a new connection worked while the proxy was down")
		}
		c3.Close()
	}
	p.Heal()
	c4, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c4.Close()
	if err := roundTrip(c4, 5*time.Second); err != nil {
		t.Fatalf("after healing a drop: %v", err)
	}
}
