package main_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/signature/signaturetest"
)

// secretsOf are the files an attacker would point an input at: the merchant token, the hash
// key, a hex secret and the service's private key, made as an administrator makes them.
type secretsOf struct {
	token, hashKey, hex, privateKey string // paths
	texts                           map[string]string
}

func newSecrets(t *testing.T) secretsOf {
	t.Helper()
	dir := t.TempDir()
	random := func(n int) []byte {
		b := make([]byte, n)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	s := secretsOf{token: filepath.Join(dir, "auth-token"), hashKey: filepath.Join(dir, "hash-key"), hex: filepath.Join(dir, "webhook-secret"),
		texts: map[string]string{}}
	for path, text := range map[string]string{s.token: base64.StdEncoding.EncodeToString(random(24)),
		s.hashKey: base64.StdEncoding.EncodeToString(random(24)), s.hex: hex.EncodeToString(random(32))} {
		if err := os.WriteFile(path, []byte(text+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		s.texts[path] = text
	}
	s.privateKey = signaturetest.NewKey(t, dir, "payout-svc").Path
	key, err := os.ReadFile(s.privateKey)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(key), "\n")
	s.texts[s.privateKey] = lines[0] + "\n" + lines[1] // the armour's first line and the key's first bytes
	return s
}

// leaks names each secret that text holds ten characters of, in a row.
func (s secretsOf) leaks(text string) []string {
	var found []string
	for path, secret := range s.texts {
		for _, part := range strings.Split(secret, "\n") {
			for i := 0; i+10 <= len(part); i++ {
				if strings.Contains(text, part[i:i+10]) {
					found = append(found, filepath.Base(path)+" ("+part[i:i+10]+")")
					break
				}
			}
		}
	}
	return found
}

// everything is what a user, a cron mail and an auditor could read after a command: its
// output and every file under the working folder, the ledger included.
func everything(t *testing.T, u *user, outputs ...string) string {
	t.Helper()
	var all strings.Builder
	for _, o := range outputs {
		all.WriteString(o)
	}
	err := filepath.WalkDir(u.dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		all.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return all.String()
}

// TestCommandInputPointedAtASecretLeaksNothing: an input that is a link to the merchant token,
// the hash key, a hex secret or the service's private key is refused when another account made
// the link; when the running account made it, the file fails to parse and no output, report,
// log or --json quotes more than three characters of it. Nothing is sent either way.
func TestCommandInputPointedAtASecretLeaksNothing(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	s := newSecrets(t)
	token := s.texts[s.token]
	sb := sandbox.New(sandbox.Options{AuthToken: token, HashKey: []byte(s.texts[s.hashKey])})
	t.Cleanup(sb.Close)
	u := newUserWithoutLedger(t, sb)
	for i, kv := range u.env {
		if strings.HasPrefix(kv, "PAYOUT_AUTH_TOKEN=") {
			u.env[i] = "PAYOUT_AUTH_TOKEN_FILE=" + s.token
		}
	}
	u.env = append(u.env, "PAYOUT_HASH_KEY_FILE="+s.hashKey)
	if out, errOut, code := u.run("init"); code != 0 {
		t.Fatalf("init: exit %d: %s %s", code, out, errOut)
	}

	var outputs []string
	for _, secret := range []string{s.token, s.hashKey, s.hex, s.privateKey} {
		link := filepath.Join(u.dir, filepath.Base(secret)+".csv")
		if err := os.Symlink(secret, link); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"run", "--json", "--metrics-file", "payout.prom", link}, {"run", "-v", "--dry-run", link}, {"plan", link}} {
			out, errOut, code := u.runWithin(30*time.Second, args...)
			if code == 0 || !strings.Contains(out+errOut, "no column of a payout file at all") {
				t.Errorf("payout %v: exit %d, want a refusal saying the file has no payout column:\n%s%s", args, code, out, errOut)
			}
			outputs = append(outputs, out, errOut)
		}
	}

	if os.Geteuid() == 0 {
		// A link another account made (here: nobody's) is not followed at all, wherever it leads.
		link := filepath.Join(u.dir, "payroll.csv")
		if err := os.Symlink(s.token, link); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(link, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"run", "--json", "payroll.csv"}, {"run", "--dry-run", "payroll.csv"}, {"plan", "payroll.csv"}} {
			out, errOut, code := u.runWithin(30*time.Second, args...)
			if code != 2 || !strings.Contains(errOut, "symbolic link owned by nobody (uid 65534), not by you or root") {
				t.Errorf("payout %v through another account's link: exit %d, want 2 naming the link's owner:\n%s%s", args, code, out, errOut)
			}
			outputs = append(outputs, out, errOut)
		}
	} else {
		t.Log("not root: a link owned by another account cannot be made here; only links of one's own were tried")
	}

	if leaked := s.leaks(everything(t, u, outputs...)); len(leaked) > 0 {
		t.Errorf("outputs and files quote secrets: %v", leaked)
	}
	if n := sb.Stats().Creates; n != 0 {
		t.Errorf("service created %d payouts", n)
	}
}

// TestCommandJunkBesideAFileIsIgnored: a FIFO, a folder, a file of 64 KiB and a dangling link,
// each named like a signature beside a payroll file, are each named in a warning and ignored:
// the two valid signatures beside them pay the file.
func TestCommandJunkBesideAFileIsIgnored(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	sb := newSandbox(t)
	u := newUser(t, sb)
	k := newSigners(t, u)
	if _, errOut, code := u.run("policy", "--approvals", "2"); code != 0 {
		t.Fatal(errOut)
	}
	file := filepath.Join(u.dir, "nov.csv")
	copyFile(t, samplePath(t), file)
	u.signPlan(t, k.alice, "nov.csv", file+".alice.sig")
	u.signPlan(t, k.bob, "nov.csv", file+".bob.sig")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(syscall.Mkfifo(file+".zz.sig", 0o644))
	must(os.Mkdir(file+".folder.sig", 0o755))
	must(os.WriteFile(file+".big.sig", bytes.Repeat([]byte("-----BEGIN SSH SIGNATURE-----\n"), 64<<10/30+1), 0o644))
	must(os.Symlink(filepath.Join(u.dir, "gone"), file+".dangling.sig"))
	warnings := []string{"nov.csv.zz.sig: a named pipe (FIFO), not a regular file: ignored", "nov.csv.folder.sig: a folder, not a regular file: ignored",
		"nov.csv.big.sig: 64 KiB or more, too large for a signature: ignored", "nov.csv.dangling.sig: no such file, or a link to nothing: ignored"}
	if os.Geteuid() == 0 {
		// A link another account made is not followed, even to a valid signature.
		must(os.Symlink(file+".alice.sig", file+".planted.sig"))
		must(os.Lchown(file+".planted.sig", 65534, 65534))
		warnings = append(warnings, "nov.csv.planted.sig: a symbolic link another account made: not followed: ignored")
	}

	out, errOut, code := u.runWithin(60*time.Second, "run", "nov.csv")
	if code != 0 {
		t.Fatalf("run beside junk and two valid signatures: exit %d, want 0\n%s%s", code, out, errOut)
	}
	for _, want := range warnings {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not warn %q:\n%s", want, errOut)
		}
	}
	if n := sb.Stats().Creates; n != 50 {
		t.Errorf("service created %d payouts, want the file's 50", n)
	}
}

// TestCommandAuditReadsNothingUnbounded: a pack, its signature, a chain head and its signature
// that are a FIFO or a link to /dev/zero are refused at once, named; none is read for ever.
func TestCommandAuditReadsNothingUnbounded(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	u := newUser(t, newSandbox(t))
	keys := t.TempDir()
	svc := signaturetest.NewKey(t, keys, "payout-svc")
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(keys, "allowed_signers"), `payout-svc namespaces="payout-pack" `+svc.Public)
	u.env = append(u.env, "PAYOUT_SIGNING_KEY="+svc.Path, "PAYOUT_ALLOWED_SIGNERS="+allowed)
	runID, reports := paidRun(t, u, samplePath(t))
	var head string
	for _, r := range reports {
		if strings.HasSuffix(r, ".chain-head") {
			head = r
		}
	}
	pack := filepath.Join(u.dir, "run.zip")
	if out, errOut, code := u.run("audit", "export", "--run", runID, "--out", pack); code != 0 {
		t.Fatalf("export: exit %d: %s %s", code, out, errOut)
	}
	fifo := filepath.Join(u.dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// replace puts a FIFO or a link to /dev/zero in the place of path for the time of check.
	replace := func(path, with string, check func()) {
		t.Helper()
		saved := path + ".saved"
		if err := os.Rename(path, saved); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(with, path); err != nil {
			t.Fatal(err)
		}
		check()
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(saved, path); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(wantCode int, want string, args ...string) {
		t.Helper()
		out, errOut, code := u.runWithin(20*time.Second, args...)
		if code != wantCode || !strings.Contains(out+errOut, want) {
			t.Errorf("payout %v: exit %d, want %d saying %q\n%s%s", args, code, wantCode, want, out, errOut)
		}
	}
	for _, with := range []struct{ target, kind string }{{fifo, "a named pipe (FIFO)"}, {"/dev/zero", "a device"}} {
		replace(pack+".sig", with.target, func() {
			expect(4, pack+".sig is "+with.kind+", not a regular file: not a signature", "audit", "verify", "--pack", pack, "--signed-by", "payout-svc")
		})
		replace(pack, with.target, func() {
			expect(2, pack+" is "+with.kind+", not a regular file", "audit", "verify", "--pack", pack)
		})
		replace(head+".sig", with.target, func() {
			expect(4, head+".sig is "+with.kind+", not a regular file: not a signature", "audit", "verify", "--head", head)
		})
		replace(head, with.target, func() {
			expect(2, head+" is "+with.kind+", not a regular file", "audit", "verify", "--head", head)
		})
	}
	expect(0, "signed by payout-svc", "audit", "verify", "--pack", pack, "--signed-by", "payout-svc")
	expect(0, "is in the chain", "audit", "verify", "--head", head, "--signed-by", "payout-svc")
}

// TestCommandXLSXDisguisesAreRefused: a workbook whose account column is hidden behind a
// visible decoy is refused naming the sheet and column; one whose amount cell shows "100.00"
// over 9000 is rejected naming the cell. Neither pays anything, run or dry run.
func TestCommandXLSXDisguisesAreRefused(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	sb := newSandbox(t)
	u := newUser(t, sb)
	write := func(name string, disguise func(f *excelize.File)) string {
		t.Helper()
		f := excelize.NewFile()
		defer f.Close()
		rows := [][]any{
			{"external_invoice_ref", "recipient_reference", "bank", "third_party_account_no", "amount", "Account"},
			{"XD-1", "Tan Wei Ming", "Maybank", "0123456789", 9000, "0987654321"},
			{"XD-2", "Lim Mei Ling", "Maybank", "0123456780", 150, "0123456780"},
		}
		for i, row := range rows {
			cell, _ := excelize.CoordinatesToCellName(1, i+1)
			if err := f.SetSheetRow("Sheet1", cell, &row); err != nil {
				t.Fatal(err)
			}
		}
		disguise(f)
		path := filepath.Join(u.dir, name)
		if err := f.SaveAs(path); err != nil {
			t.Fatal(err)
		}
		return name
	}
	hidden := write("hidden.xlsx", func(f *excelize.File) {
		if err := f.SetColVisible("Sheet1", "D", false); err != nil {
			t.Fatal(err)
		}
	})
	lying := write("lying.xlsx", func(f *excelize.File) {
		format := `"100.00"`
		style, err := f.NewStyle(&excelize.Style{CustomNumFmt: &format})
		if err == nil {
			err = f.SetCellStyle("Sheet1", "E2", "E2", style)
		}
		if err != nil {
			t.Fatal(err)
		}
	})
	for _, tc := range []struct{ file, want string }{
		{hidden, `sheet "Sheet1", column D (third_party_account_no, headed in cell D1) is hidden or too narrow to read: unhide it`},
		{lying, `cell E2 of sheet "Sheet1" holds 9000, but its format "\"100.00\"" adds digits of its own to the number: format the cell as Number with 2 decimals`},
	} {
		for _, args := range [][]string{{"run", "--dry-run", tc.file}, {"run", tc.file}, {"run", "--allow-partial", tc.file}} {
			out, errOut, code := u.run(args...)
			wantCode := 3
			if tc.file == lying && args[1] == "--allow-partial" {
				wantCode = 4 // the other row is paid, the lying one rejected
			}
			if code != wantCode || !strings.Contains(out+errOut, tc.want) {
				t.Errorf("payout %v: exit %d, want %d saying %q\n%s%s", args, code, wantCode, tc.want, out, errOut)
			}
		}
	}
	if n := sb.Stats().Creates; n != 1 {
		t.Errorf("service created %d payouts, want only the honest row of lying.xlsx under --allow-partial", n)
	}
}
