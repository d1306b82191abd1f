package main_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/payout/payout"

// mayImport says which of the module's packages each package may import. The direction is
// cmd -> batch/... -> {ledger, api, batch/report -> templates}: ledger and api never import each
// other or anything of batch, so each can be read, tested and replaced on its own.
// batch/atomicfile, batch/untrusted, batch/runid and batch/words, which import nothing of the
// module, serve cmd and every package of batch.
// ledger/ledgertest, the suite every ledger engine passes, imports the ledger and the console's
// store the ledger hands out; ledger/sharedrate, the merchant's rate limit kept in a PostgreSQL
// ledger's database, imports the ledger alone, for the settings of the sessions it opens there.
// ledger/consolestore, the web console's sessions in the ledger's database, imports only how the
// ledger's tables hold times (ledger/internal/dbtime): the ledger hands it its database, and
// imports those two alone.
// batch/outcome, the payout's state machine with no I/O, imports only ledger and api, and every
// package of batch may ask it; batch/pool, which schedules tasks it knows only by their times,
// imports nothing of payouts; batch/repeats only the ledger and read; batch/lookup, the run's
// and reconcile's lookups, only the ledger, api, outcome and pool.
func mayImport(from, to string) bool {
	within := func(pkg, root string) bool { return pkg == root || strings.HasPrefix(pkg, root+"/") }
	switch {
	case within(from, "cmd"):
		return !within(to, "cmd")
	case to == "internal/fakeclock":
		// The tests' fake clock: any package's tests may use it (test imports are not held
		// here); of the module's code only the batch tests' harness imports it.
		return from == "batch/internal/batchtest"
	case to == "batch/atomicfile", to == "batch/untrusted", to == "batch/runid", to == "batch/words":
		return within(from, "batch") && from != to
	case from == "batch/untrusted", from == "batch/runid", from == "batch/words":
		return false
	case from == "batch/report":
		return to == "templates"
	case from == "batch/atomicfile":
		return false
	case from == "batch/outcome":
		// The state machine's decisions: pure, below everything of the run but what they decide on.
		return to == "ledger" || to == "api"
	case from == "batch/pool":
		// The pool schedules tasks it knows only by their times: nothing of payouts or the ledger.
		return false
	case from == "batch/lookup":
		// Looking a payout up, retrying, giving up: the state machine decides, the pool schedules.
		return to == "ledger" || to == "api" || to == "batch/outcome" || to == "batch/pool"
	case from == "batch/approval":
		// Judging signatures, and proving a send by what the ledger stores of them.
		return to == "batch/signature" || to == "ledger"
	case from == "batch/retry":
		return to == "ledger" || to == "batch/read" || to == "batch/outcome"
	case from == "batch/repeats":
		return to == "ledger" || to == "batch/read"
	case to == "batch/outcome":
		return within(from, "batch")
	case within(from, "batch"):
		return within(to, "batch") || within(to, "ledger") || within(to, "api")
	case from == "api/sandbox":
		return to == "api"
	case from == "ledger/ledgertest":
		// The conformance suite tests the ledger's contract, and nothing else.
		return to == "ledger" || to == "ledger/consolestore"
	case from == "ledger":
		return to == "ledger/consolestore" || to == "ledger/internal/dbtime"
	case from == "ledger/consolestore":
		return to == "ledger/internal/dbtime"
	case from == "ledger/sharedrate":
		return to == "ledger" // its sessions on the ledger's database are the ledger's sessions
	}
	// api, templates and the module's root (the embedded sample) stand alone; the ledger imports
	// only its console store and its time layout (above).
	return false
}

func TestPackagesImportInOneDirection(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		from := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		seen++
		for _, imp := range fields[1:] {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			to := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			if to == "" && strings.HasPrefix(from, "cmd") {
				continue // the embedded sample file, used by the demo
			}
			if !mayImport(from, to) {
				t.Errorf("%s imports %s: against the direction cmd -> batch/... -> {ledger, api, batch/report -> templates}", fields[0], imp)
			}
		}
	}
	if seen < 6 {
		t.Fatalf("go list named only %d packages:\n%s", seen, out)
	}
}

func TestMayImport(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		from, to string
		want     bool
	}{
		{"cmd/payout", "batch", true},
		{"batch", "ledger", true},
		{"batch/run", "batch/read", true},
		{"batch/report", "templates", true},
		{"batch/report", "ledger", false},
		{"batch/report", "batch/atomicfile", true},
		{"batch/atomicfile", "batch", false},
		{"batch/report", "batch/runid", true},
		{"batch/runid", "batch", false},
		{"ledger", "batch/atomicfile", false},
		{"ledger", "api", false},
		{"api", "ledger", false},
		{"ledger", "batch", false},
		{"api", "batch/report", false},
		{"api/sandbox", "api", true},
		{"api/sandbox", "ledger", false},
		{"ledger/ledgertest", "ledger", true},
		{"ledger/ledgertest", "batch", false},
		{"ledger", "ledger/ledgertest", false},
		{"ledger/sharedrate", "ledger", true},
		{"ledger/sharedrate", "batch/pool", false},
		{"ledger", "ledger/sharedrate", false},
		{"ledger", "ledger/consolestore", true},
		{"ledger/ledgertest", "ledger/consolestore", true},
		{"ledger/consolestore", "ledger", false},
		{"ledger/consolestore", "ledger/internal/dbtime", true},
		{"ledger", "ledger/internal/dbtime", true},
		{"ledger/consolestore", "batch", false},
		{"templates", "batch", false},
		{"batch", "cmd/payout", false},
		{"batch/outcome", "ledger", true},
		{"batch/outcome", "batch", false},
		{"batch/outcome", "batch/read", false},
		{"batch/callbacks", "batch/outcome", true},
		{"ledger", "batch/outcome", false},
		{"batch/pool", "batch/words", true},
		{"batch/pool", "batch/report", false},
		{"batch/words", "batch/report", false},
		{"batch/pool", "ledger", false},
		{"batch/pool", "batch/outcome", false},
		{"batch", "batch/pool", true},
		{"batch/repeats", "ledger", true},
		{"batch/repeats", "batch", false},
		{"batch/retry", "batch/outcome", true},
		{"batch/retry", "batch", false},
		{"batch/approval", "batch/signature", true},
		{"batch/approval", "ledger", true},
		{"batch/approval", "batch", false},
		{"batch/approval", "batch/send", false},
		{"batch/lookup", "batch/pool", true},
		{"batch/lookup", "batch/outcome", true},
		{"batch/lookup", "batch", false},
		{"batch/lookup", "batch/report", false},
		{"batch/reconcile", "batch/lookup", true},
		{"batch/internal/batchtest", "internal/fakeclock", true},
		{"batch", "internal/fakeclock", false},
		{"internal/fakeclock", "batch/pool", false},
	} {
		if got := mayImport(c.from, c.to); got != c.want {
			t.Errorf("mayImport(%q, %q) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}
