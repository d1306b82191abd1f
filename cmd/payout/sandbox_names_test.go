package main_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startServer starts a long-running command of the binary (sandbox, callbacks) and returns the
// URL it says it listens on; the command is stopped with SIGTERM when the test ends.
func startServer(tb testing.TB, u *user, extraEnv []string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir, cmd.Env = u.dir, append(append([]string(nil), u.env...), extraEnv...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	lines := bufio.NewScanner(stderr)
	url := ""
	for url == "" && lines.Scan() {
		if _, rest, ok := strings.Cut(lines.Text(), "listening on "); ok {
			url, _, _ = strings.Cut(rest, " ")
		}
	}
	if url == "" {
		tb.Fatalf("payout %v did not say where it listens", args)
	}
	go func() {
		for lines.Scan() {
		}
	}()
	return url
}

// Three processes as an operator would run them: `payout sandbox --display-name` (its bank
// holds another name for one account), `payout callbacks` and `payout run`. The sandbox's signed
// callbacks reach the receiver, which flags the one payout in the ledger.
func TestSandboxDisplayNameFlagsAMismatch(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	u := newUser(t, newSandbox(t))
	secrets := []string{"PAYOUT_AUTH_TOKEN=names-token", "PAYOUT_HASH_KEY=names-hash-key-0123456789"}
	receiver := startServer(t, u, secrets, "callbacks", "--listen", "127.0.0.1:0")
	// The payouts stay PENDING long enough for the run to record their invoice numbers: a
	// callback that comes first finds no payout and is only stored.
	service := startServer(t, u, secrets, "sandbox", "--listen", "127.0.0.1:0", "--settle-after", "2s",
		"--display-name", "NM-2=LIM WEI JIE", "--display-name", "5550001111=MUTHU KRISHNAN")
	u.env = append(u.env, secrets...)
	u.env = append(u.env, "PAYOUT_BASE_URL="+strings.TrimSuffix(service, "/"), "PAYOUT_CALLBACK_URL="+receiver)

	file := filepath.Join(u.dir, "names.csv")
	csv := "external_invoice_ref,recipient_reference,bank,third_party_account_no,amount\n" +
		"NM-1,Siti Nurhaliza binti Tarudin,Maybank,1234567890,10.00\n" +
		"NM-2,Tan Mei Ling,Maybank,1234567891,20.00\n" +
		"NM-3,Muthu a/l Krishnan,Maybank,5550001111,30.00\n"
	if err := os.WriteFile(file, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := u.run("run", file); code != 0 {
		t.Fatalf("run exit %d: %s %s", code, out, errOut)
	}

	checked := regexp.MustCompile(`(?m)^name check:\s+(\S+)`)
	want := map[string]string{"NM-1": "match", "NM-2": "MISMATCH:", "NM-3": "match"}
	for ref, check := range want {
		var out string
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			out, _, _ = u.run("status", ref)
			if checked.MatchString(out) {
				break
			}
		}
		if m := checked.FindStringSubmatch(out); m == nil || m[1] != check {
			t.Errorf("status %s: want name check %s:\n%s", ref, check, out)
		}
		if !regexp.MustCompile(`(?m)^state:\s+SUCCEEDED$`).MatchString(out) {
			t.Errorf("status %s: the callback did not settle it:\n%s", ref, out)
		}
	}
	if out, _, _ := u.run("status"); !strings.Contains(out, "name mismatches: 1 payout went") || !strings.Contains(out, "NM-2") {
		t.Errorf("status does not count NM-2's name mismatch:\n%s", out)
	}
	if _, errOut, code := u.run("sandbox", "--display-name", "NM-2"); code != 2 || !strings.Contains(errOut, "REF=NAME") {
		t.Errorf("sandbox --display-name without a name: exit %d, %s", code, errOut)
	}
}
