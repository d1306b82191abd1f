package main_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMessageCSVQuote: a quote inside an unquoted field is refused with its line, where in the
// line, and how to write the field, not with encoding/csv's words.
func TestMessageCSVQuote(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	data, err := os.ReadFile(samplePath(t))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	lines[6] = strings.Replace(lines[6], ",", `,Haji "Mat" `, 1) // line 7: a nickname in quotes
	bad := filepath.Join(u.dir, "quoted.csv")
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := u.run("run", "--dry-run", bad)
	if code != 3 || strings.Contains(errOut, "non-quoted-field") || !strings.Contains(errOut, "line 7") ||
		!strings.Contains(errOut, "character ") || !strings.Contains(errOut, `double each quote inside it`) {
		t.Errorf("exit %d, stderr %q; want 3, line 7, the character and how to quote the field", code, errOut)
	}
}

// TestMessageServiceUnreachable: a service that does not answer is named by the variable that
// points at it, with what to check.
func TestMessageServiceUnreachable(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	down := &user{tb: t, dir: u.dir, env: append(append([]string(nil), u.env...), "PAYOUT_BASE_URL="+closed)}
	// Each command tries the service a few times before it gives up: side by side, they wait once.
	for _, args := range [][]string{{"run", samplePath(t)}, {"run", "--dry-run", samplePath(t)}, {"providers"}} {
		name := args[0]
		if len(args) > 2 {
			name += " " + args[1]
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, errOut, code := (&user{tb: t, dir: down.dir, env: down.env}).run(args...)
			if code != 1 || !strings.Contains(errOut, "PAYOUT_BASE_URL="+closed) || !strings.Contains(errOut, "check the host and port") {
				t.Errorf("payout %v with nothing at %s: exit %d, stderr %q; want 1 naming PAYOUT_BASE_URL and what to check", args, closed, code, errOut)
			}
		})
	}
}

// TestMessageConfigurationNamesTheVariable: a base URL the client refuses, and a token file that
// cannot be read, are named by their variables, with the reason and never the secret.
func TestMessageConfigurationNamesTheVariable(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	with := func(vars ...string) *user {
		return &user{tb: t, dir: u.dir, env: append(append([]string(nil), u.env...), vars...)}
	}
	for _, bad := range []string{"ftp://payout.example.com", "http://payout.example.com"} {
		_, errOut, code := with("PAYOUT_BASE_URL="+bad).run("run", "--dry-run", samplePath(t))
		if code != 2 || !strings.Contains(errOut, "PAYOUT_BASE_URL=") || strings.Contains(errOut, "BaseURL") {
			t.Errorf("PAYOUT_BASE_URL=%s: exit %d, stderr %q; want 2 naming the variable, not the Go field", bad, code, errOut)
		}
	}

	secretFile := filepath.Join(u.dir, "token")
	if err := os.WriteFile(secretFile, []byte("e2e-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct{ file, reason string }{
		"missing": {filepath.Join(u.dir, "no-such-token"), "there is no such file"},
		"folder":  {u.dir, "it is a folder"},
	}
	if os.Getuid() != 0 {
		if err := os.Chmod(secretFile, 0o000); err != nil {
			t.Fatal(err)
		}
		cases["unreadable"] = struct{ file, reason string }{secretFile, "permission denied"}
	}
	for name, c := range cases {
		_, errOut, code := with("PAYOUT_AUTH_TOKEN=", "PAYOUT_AUTH_TOKEN_FILE="+c.file).run("run", "--dry-run", samplePath(t))
		if code != 2 || !strings.Contains(errOut, "PAYOUT_AUTH_TOKEN_FILE=") || !strings.Contains(errOut, c.reason) || strings.Contains(errOut, "e2e-token") {
			t.Errorf("%s token file: exit %d, stderr %q; want 2 saying %q, without the secret", name, code, errOut, c.reason)
		}
	}
}

// TestMessageJSONOmitsUnknownTimes: --json of a file never run has no year-1 times.
func TestMessageJSONOmitsUnknownTimes(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	out, _, code := u.run("run", "--json", "missing.csv")
	objs := jsonLines(t, out)
	if code != 2 || len(objs) != 1 {
		t.Fatalf("run --json missing.csv: exit %d, stdout %q", code, out)
	}
	assertFailureObject(t, objs[0], "missing.csv", 2)
	if strings.Contains(out, "0001-01-01") {
		t.Errorf("--json prints a time never taken: %s", out)
	}
}

// TestMessageDryRunRefusesAMissingNamedLedger: a dry run checks against the ledger it is told
// of; a named one that is not there is refused as a run refuses it, while a dry run with none
// named and none in the working folder still checks the file alone.
func TestMessageDryRunRefusesAMissingNamedLedger(t *testing.T) {
	t.Parallel()
	u := newUserWithoutLedger(t, newSandbox(t))
	for _, u2 := range []*user{u, {tb: t, dir: u.dir, env: append(append([]string(nil), u.env...), "PAYOUT_LEDGER=ledgr.db")}} {
		args := []string{"run", "--dry-run", samplePath(t)}
		if u2 == u {
			args = append(args, "--ledger", "ledgr.db")
		}
		_, errOut, code := u2.run(args...)
		if code != 2 || !strings.Contains(errOut, "no ledger at") || !strings.Contains(errOut, "payout init") {
			t.Errorf("dry run %v with a missing named ledger: exit %d, stderr %q; want 2 and payout init", args, code, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(u.dir, "ledgr.db")); err == nil {
		t.Error("a dry run made the ledger it was refused")
	}
	if out, errOut, code := u.run("run", "--dry-run", samplePath(t)); code != 0 {
		t.Errorf("dry run with no ledger named: exit %d, %s %s; want 0, the file checked alone", code, out, errOut)
	}
}
