package main_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// pgProxy stands between one process and PostgreSQL, as the network between a host and the
// database server does: cut ends every connection open now on both sides (the server ended the
// host's sessions while it was cut off, and the host finds them gone once it next uses them),
// and lets new ones through (the network is back); silenceAfter forwards nothing more, either
// way and on any connection, once the host has sent a given statement (the server keeps the
// session, waiting for the rest: a host gone silent); drop closes the host's side of every
// connection.
type pgProxy struct {
	t  *testing.T
	ln net.Listener
	to string // the server's address

	mu      sync.Mutex
	trigger []byte // silence every connection once one of them sends this
	silent  bool
	pairs   []*proxyPair
}

type proxyPair struct{ client, server net.Conn }

// newPGProxy proxies to the server of the PostgreSQL URL u, and returns the same URL through it.
func newPGProxy(t *testing.T, u string) (*pgProxy, string) {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pgProxy{t: t, ln: ln, to: parsed.Host}
	t.Cleanup(p.close)
	go p.accept()
	parsed.Host = ln.Addr().String()
	return p, parsed.String()
}

func (p *pgProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.silent {
			// A host gone silent reaches nothing: its connection opens (the proxy's side) and hangs.
			p.pairs = append(p.pairs, &proxyPair{client: c})
			p.mu.Unlock()
			continue
		}
		p.mu.Unlock()
		s, err := net.Dial("tcp", p.to)
		if err != nil {
			c.Close()
			continue
		}
		pair := &proxyPair{client: c, server: s}
		p.mu.Lock()
		p.pairs = append(p.pairs, pair)
		p.mu.Unlock()
		go p.forward(pair, c, s, true)
		go p.forward(pair, s, c, false)
	}
}

// forward copies from one side to the other until either ends, or the proxy is silenced: then
// neither side is closed, as a network that goes silent closes nothing.
func (p *pgProxy) forward(pair *proxyPair, from, to net.Conn, fromClient bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			p.mu.Lock()
			stop := p.silent
			if !stop && fromClient && p.trigger != nil && bytes.Contains(buf[:n], p.trigger) {
				p.silent = true // this statement reaches the server; nothing after it does
			}
			p.mu.Unlock()
			if stop {
				return
			}
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			p.mu.Lock()
			quiet := p.silent
			p.mu.Unlock()
			if !quiet && errors.Is(err, io.EOF) {
				to.Close() // an orderly end on one side ends the other, as TCP's FIN does
			}
			return
		}
	}
}

// cut ends every connection open now, on both sides; new ones go through.
func (p *pgProxy) cut() {
	p.mu.Lock()
	pairs := p.pairs
	p.pairs = nil
	p.mu.Unlock()
	for _, pair := range pairs {
		pair.client.Close()
		if pair.server != nil {
			pair.server.Close()
		}
	}
}

// silenceAfter makes the proxy forward nothing in either direction once the host sends
// statement, without closing anything.
func (p *pgProxy) silenceAfter(statement string) {
	p.mu.Lock()
	p.trigger = []byte(statement)
	p.mu.Unlock()
}

// drop closes the host's side of every connection: the host learns it is cut off.
func (p *pgProxy) drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pair := range p.pairs {
		pair.client.Close()
	}
}

func (p *pgProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pair := range p.pairs {
		pair.client.Close()
		if pair.server != nil {
			pair.server.Close()
		}
	}
}

// isSilent reports whether silenceAfter's statement has gone by.
func (p *pgProxy) isSilent() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.silent
}
