package main_test

import (
	"strings"
	"testing"
)

// TestCommandVersionFlag: --version answers as `payout version` does.
func TestCommandVersionFlag(t *testing.T) {
	t.Parallel()
	u := newUserWithoutLedger(t, newSandbox(t))
	want, _, _ := u.run("version")
	for _, flag := range []string{"--version", "-version"} {
		out, errOut, code := u.run(flag)
		if code != 0 || out != want || errOut != "" {
			t.Errorf("payout %s: exit %d, stdout %q, stderr %q; want %q", flag, code, out, errOut, want)
		}
	}
}

// TestCommandSuggestsTheFlagMeant: a flag or a command mistyped close to a known one is named
// back; one far from every flag is only called unknown.
func TestCommandSuggestsTheFlagMeant(t *testing.T) {
	t.Parallel()
	u := newUserWithoutLedger(t, newSandbox(t))
	for typed, meant := range map[string]string{"--dryrun": "--dry-run", "--dry_run": "--dry-run", "-DRY-RUN": "--dry-run",
		"--metric-file": "--metrics-file", "--report-dir=x": "", "--jsn": "--json", "--allow-partail": "--allow-partial"} {
		_, errOut, code := u.run("run", typed, "x.csv")
		switch {
		case meant == "" && code == 2 && strings.Contains(errOut, "did you mean"):
			t.Errorf("run %s: stderr %q suggests a flag for a known one", typed, errOut)
		case meant != "" && (code != 2 || !strings.Contains(errOut, "did you mean "+meant+"?")):
			t.Errorf("run %s: exit %d, stderr %q; want 2 and \"did you mean %s?\"", typed, code, errOut, meant)
		}
	}
	for typed, meant := range map[string]string{"stauts": "status", "rnu": "run", "Reconcile": "reconcile"} {
		if _, errOut, code := u.run(typed); code != 2 || !strings.Contains(errOut, "did you mean "+meant+"?") {
			t.Errorf("payout %s: exit %d, stderr %q; want 2 and \"did you mean %s?\"", typed, code, errOut, meant)
		}
	}
	_, errOut, code := u.run("run", "--colour", "x.csv")
	if code != 2 || !strings.Contains(errOut, "unknown flag --colour") || strings.Contains(errOut, "did you mean") {
		t.Errorf("run --colour: exit %d, stderr %q; want 2, an unknown flag and no guess", code, errOut)
	}
}

// TestCommandHelpArgumentNames: the flag package takes back-quoted text in a flag's help as the
// name of its argument; every name shown is one word (FILE, N, duration), never a phrase.
func TestCommandHelpArgumentNames(t *testing.T) {
	t.Parallel()
	u := newUserWithoutLedger(t, newSandbox(t))
	list, _, _ := u.run("help")
	var helps [][]string
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); strings.HasPrefix(line, "  ") && len(f) > 0 && f[0] != "audit" {
			helps = append(helps, []string{f[0], "-h"})
		}
	}
	helps = append(helps, []string{"audit", "verify", "-h"}, []string{"audit", "export", "-h"})
	for _, args := range helps {
		out, _, code := u.run(args...)
		if code != 0 || !strings.Contains(out, "usage: payout") {
			t.Errorf("payout %v: exit %d, stdout %q", args, code, out)
			continue
		}
		for _, line := range strings.Split(out, "\n") {
			if !strings.HasPrefix(line, "  -") {
				continue
			}
			head, _, _ := strings.Cut(line, "\t")
			f := strings.Fields(head)
			if len(f) > 2 {
				t.Errorf("payout %v shows %q: the argument's name is %q", args, line, strings.Join(f[1:], " "))
			}
		}
	}
}

// TestCommandHelpLeavesOutRefusedFlags: the flags that are refused (the approval policy is in the
// ledger now) are listed by no help, and no typo is corrected to one; given, one is still refused
// saying what replaced it, without taking the file after it as its value.
func TestCommandHelpLeavesOutRefusedFlags(t *testing.T) {
	t.Parallel()
	u := newUserWithoutLedger(t, newSandbox(t))
	refused := []string{"require-approval", "approval-over", "approval-expiry"}
	for _, args := range [][]string{{"help", "run"}, {"help", "watch"}, {"run", "-h"}, {"watch", "--help"}, {"demo", "-h"}} {
		out, errOut, code := u.run(args...)
		if code != 0 || !strings.Contains(out, "-allow-partial") {
			t.Fatalf("payout %v: exit %d: %s %s", args, code, out, errOut)
		}
		for _, name := range refused {
			if strings.Contains(out, "-"+name) {
				t.Errorf("payout %v lists the refused flag --%s:\n%s", args, name, out)
			}
		}
	}
	for _, name := range refused {
		_, errOut, code := u.run("run", "--"+name, "payroll.csv")
		if code != 2 || !strings.Contains(errOut, "payout policy") || strings.Contains(errOut, "payroll.csv") {
			t.Errorf("run --%s payroll.csv: exit %d, stderr %q; want 2 naming payout policy", name, code, errOut)
		}
	}
	if _, errOut, code := u.run("run", "--require-aproval", "payroll.csv"); code != 2 || strings.Contains(errOut, "did you mean") {
		t.Errorf("run --require-aproval: exit %d, stderr %q; want 2 and no guess of a refused flag", code, errOut)
	}
}
