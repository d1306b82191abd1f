package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/payout/payout/ledger/consolestore"
)

// Sessions live in the ledger's database (Config.Sessions, ledger/consolestore), so that every
// console host on one ledger knows them: a browser signed in on one host is signed in on all, a
// passkey ceremony begun on one finishes on another, and signing out on one signs out everywhere.
// The cookie holds a random token; the ledger holds only its SHA-256, and the CSRF token is derived
// from the token, so that neither can be read out of the ledger. A visitor who is not signed in has
// no row at all until they start a passkey ceremony, and then only for ceremonyTTL.

// ceremonyTTL bounds how long a passkey ceremony stays open: long enough to touch the key.
const ceremonyTTL = 5 * time.Minute

// cookieName names the session cookie; over https the __Host- prefix makes browsers refuse it
// from any other host or path, or without Secure.
func (s *Server) cookieName() string {
	if s.secure {
		return "__Host-payout-console"
	}
	return "payout-console"
}

// session is one browser's state: its token, and who signed in (if anyone).
type session struct {
	token       string // the cookie's value
	tokenSHA256 string // the ledger's key of the session
	csrf        string
	principal   string // the allowed_signers principal that signed in
	credential  []byte // the passkey's credential id
	userHandle  []byte // the user handle the passkey was registered with
	person      *person
}

// with is the session as a handler sees it, with who its person is now.
func (sess *session) with(p *person) *session {
	sess.person = p
	return sess
}

// ceremony is a passkey ceremony under way, as the ledger keeps it between its two requests,
// which may reach two hosts.
type ceremony struct {
	For  string               `json:"for"` // "register", "signin" or "sign"
	Data webauthn.SessionData `json:"data"`
	// Name is the name a registration is for.
	Name string `json:"name,omitempty"`
	// Sign is what a signature is about to sign.
	Sign *pendingSignature `json:"sign,omitempty"`
}

// tokenBytes is the size of a session token: 256 random bits.
const tokenBytes = 32

func randomToken() string {
	b := make([]byte, tokenBytes)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// wellFormed says whether a cookie's value could be a token the console made.
func wellFormed(token string) bool {
	b, err := base64.RawURLEncoding.DecodeString(token)
	return err == nil && len(b) == tokenBytes
}

// tokenDigest is the SHA-256 under which the ledger keeps a session.
func tokenDigest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// csrfToken is the session's CSRF token: derived from the token, so that every host computes
// it and the ledger (which holds the token's plain SHA-256) does not give it away.
func csrfToken(token string) string {
	sum := sha256.Sum256([]byte("payout-console-csrf\x00" + token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// visitor is a session that nobody signed in to, for token.
func visitor(token string) *session {
	return &session{token: token, tokenSHA256: tokenDigest(token), csrf: csrfToken(token)}
}

var errSessions = &pageError{Status: http.StatusServiceUnavailable, What: "The console cannot read or keep sessions in the ledger, so nobody can sign in or act now.",
	Do: "Try again in a minute; if it fails again, ask the administrator to check the ledger."}

// session is the session the cookie names: signed in when the ledger holds it, else a visitor.
// A cookie the console could not have made is nil.
func (s *Server) session(ctx context.Context, token string) (*session, error) {
	if !wellFormed(token) {
		return nil, nil
	}
	sess := visitor(token)
	row, ok, err := s.cfg.Sessions.Session(ctx, sess.tokenSHA256, s.cfg.Now())
	if err != nil {
		s.cfg.Logger.Error("console: read session", "err", err)
		return nil, errSessions
	}
	if ok && row.Principal != "" {
		sess.principal, sess.credential, sess.userHandle = row.Principal, row.Credential, row.UserHandle
	}
	return sess, nil
}

// maxVisitors bounds the passkey ceremonies of people not signed in that the ledger keeps at
// once, each for ceremonyTTL: far above any finance team, low enough that whoever reaches the
// sign-in page cannot fill the ledger.
const maxVisitors = 10_000

// begin opens a passkey ceremony on sess, in the ledger: its answer may reach another host.
func (s *Server) begin(ctx context.Context, sess *session, c ceremony) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	now := s.cfg.Now()
	if err := s.cfg.Sessions.BeginCeremony(ctx, consolestore.Session{TokenSHA256: sess.tokenSHA256, Expires: now.Add(ceremonyTTL),
		Ceremony: string(b), CeremonyExpires: now.Add(ceremonyTTL)}, now, maxVisitors); errors.Is(err, consolestore.ErrBusy) {
		s.cfg.Logger.Warn("console: a sign-in refused: too many under way", "max", maxVisitors)
		return &pageError{Status: http.StatusServiceUnavailable, What: "Too many sign-ins are under way at once.", Do: "Try again in a few minutes."}
	} else if err != nil {
		s.cfg.Logger.Error("console: begin ceremony", "err", err)
		return errSessions
	}
	return nil
}

// take closes the ceremony open on sess and returns it, if it is one for kind: a ceremony is
// answered once, whichever host the answer reaches.
func (s *Server) take(ctx context.Context, sess *session, kind string) (*ceremony, error) {
	raw, err := s.cfg.Sessions.TakeCeremony(ctx, sess.tokenSHA256, s.cfg.Now())
	if err != nil {
		s.cfg.Logger.Error("console: take ceremony", "err", err)
		return nil, errSessions
	}
	var c ceremony
	if raw == "" || json.Unmarshal([]byte(raw), &c) != nil || c.For != kind {
		return nil, errNoCeremony
	}
	return &c, nil
}

// signIn gives the signed-in person a new token, so that a token known before (planted by
// another, or seen in a shared browser) signs nobody in.
func (s *Server) signIn(ctx context.Context, old *session, principal string, credential, userHandle []byte) (*session, error) {
	sess := visitor(randomToken())
	sess.principal, sess.credential, sess.userHandle = principal, credential, userHandle
	if err := s.cfg.Sessions.SignIn(ctx, old.tokenSHA256, consolestore.Session{TokenSHA256: sess.tokenSHA256, Principal: principal,
		Credential: credential, UserHandle: userHandle, Expires: s.cfg.Now().Add(s.cfg.SessionTTL)}); err != nil {
		s.cfg.Logger.Error("console: sign in", "err", err)
		return nil, errSessions
	}
	return sess, nil
}

// end signs sess out on every host.
func (s *Server) end(ctx context.Context, sess *session) error {
	if err := s.cfg.Sessions.End(ctx, sess.tokenSHA256); err != nil {
		s.cfg.Logger.Error("console: sign out", "err", err)
		return errSessions
	}
	return nil
}

func (s *Server) cookie(r *http.Request) string {
	c, err := r.Cookie(s.cookieName())
	if err != nil {
		return ""
	}
	return c.Value
}

func (s *Server) setCookie(w http.ResponseWriter, sess *session) {
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: sess.token, Path: "/", HttpOnly: true, Secure: s.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: int(s.cfg.SessionTTL.Seconds())})
}

func (s *Server) clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: "", Path: "/", HttpOnly: true, Secure: s.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
}
