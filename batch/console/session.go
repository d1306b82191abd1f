package console

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"sync"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"
)

// cookieName names the session cookie; over https the __Host- prefix makes browsers refuse it
// from any other host or path, or without Secure.
func (s *Server) cookieName() string {
	if s.secure {
		return "__Host-payout-console"
	}
	return "payout-console"
}

// session is one browser's state: its CSRF token, who signed in (if anyone), and the ceremony
// it is in the middle of.
type session struct {
	mu          sync.Mutex // one request of a browser at a time changes its session
	id, csrf    string
	principal   string // the allowed_signers principal that signed in
	credential  []byte // the passkey's credential id
	userHandle  []byte // the user handle the passkey was registered with
	expires     time.Time
	ceremony    *webauthn.SessionData
	ceremonyFor string // "register", "signin" or "sign"
	pending     *pendingSignature
	registering string // the name a registration is for
	person      *person
}

// with is the session as a handler sees it, with who its person is now.
func (sess *session) with(p *person) *session {
	sess.person = p
	return sess
}

// sessions are held in memory: a restart signs everyone out, and a cookie is only a random id.
type sessions struct {
	mu  sync.Mutex
	ttl time.Duration
	now func() time.Time
	all map[string]*session
}

func newSessions(ttl time.Duration, now func() time.Time) *sessions {
	return &sessions{ttl: ttl, now: now, all: make(map[string]*session)}
}

func randomID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// maxSessions bounds the sessions held: a visitor without a cookie makes one, so a flood of
// visitors would otherwise fill the memory. Past it, sessions nobody signed in to go first.
const maxSessions = 10000

func (ss *sessions) create() *session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	now := ss.now()
	if len(ss.all) >= maxSessions {
		for id, s := range ss.all {
			if now.After(s.expires) || s.principal == "" {
				delete(ss.all, id)
			}
		}
	}
	s := &session{id: randomID(), csrf: randomID(), expires: now.Add(ss.ttl)}
	ss.all[s.id] = s
	return s
}

func (ss *sessions) get(id string) *session {
	if id == "" {
		return nil
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.all[id]
	if s == nil || ss.now().After(s.expires) {
		delete(ss.all, id)
		return nil
	}
	return s
}

// signIn gives the signed-in person a new session id and token, so that an id known before
// (planted by another, or seen in a shared browser) signs nobody in.
func (ss *sessions) signIn(old *session, principal string, credential, userHandle []byte) *session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.all, old.id)
	s := &session{id: randomID(), csrf: randomID(), principal: principal, credential: credential, userHandle: userHandle, expires: ss.now().Add(ss.ttl)}
	ss.all[s.id] = s
	return s
}

func (ss *sessions) end(s *session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.all, s.id)
}

func (s *Server) cookie(r *http.Request) string {
	c, err := r.Cookie(s.cookieName())
	if err != nil {
		return ""
	}
	return c.Value
}

func (s *Server) setCookie(w http.ResponseWriter, sess *session) {
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: sess.id, Path: "/", HttpOnly: true, Secure: s.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: int(s.sessions.ttl.Seconds())})
}

func (s *Server) clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: "", Path: "/", HttpOnly: true, Secure: s.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
}
