package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/payout/payout/batch/actor"
	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/audit"
	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/batch/untrusted"
	"github.com/payout/payout/ledger"
)

// exitBroken is the exit code of `payout audit verify` when the trail or the pack does not check
// out: the check finished, and what it found needs attention.
const exitBroken = exitAttention

// stamped gives o the actor and version every event this process appends carries: the OS user
// and host unless o names another actor, and the build's version.
func stamped(o ledger.Options) ledger.Options {
	if o.Actor == "" {
		o.Actor = actor.Current()
	}
	o.Version = buildVersion()
	return o
}

// auditCmd is `payout audit verify [--pack FILE]` and `payout audit export --run RUN --out FILE`.
func auditCmd(ctx context.Context, e *env, args []string) error {
	const usage = "usage: payout audit verify [--pack FILE] [--ledger FILE]\n" +
		"       payout audit export --run RUN --out FILE.zip [--with-input [--input FILE]] [--ledger FILE]\n" +
		"(payout audit verify -h and payout audit export -h list their flags)"
	if len(args) > 0 && isHelpFlag(args[0]) {
		fmt.Fprintln(e.stdout, usage)
		return nil
	}
	if len(args) == 0 {
		fmt.Fprintln(e.stderr, usage)
		return usageError("audit: name verify or export")
	}
	switch args[0] {
	case "verify":
		return auditVerifyCmd(ctx, e, args[1:])
	case "export":
		return auditExportCmd(ctx, e, args[1:])
	}
	return usageError("audit: unknown subcommand %q: name verify or export", args[0])
}

// auditVerifyCmd checks the ledger's trail, or with --pack an evidence pack without the ledger.
// Exit 0: intact; 4: something does not match (each finding on stdout); 1: the check could not
// run; 2: usage.
func auditVerifyCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "audit verify", "audit verify [--pack FILE | --head FILE] [--ledger FILE]")
	pack := fs.String("pack", "", "check this evidence pack instead of the ledger (no ledger needed)")
	headFile := fs.String("head", "", "also check a run's signed chain head (the .chain-head file beside its reports, and its .sig) against the ledger")
	signedBy := fs.String("signed-by", "", "with --pack or --head: require a signature by this `PRINCIPAL` of the allowed signers (the service account); unsigned or signed by another is exit 4")
	ledgerFlag := new(string)
	addLedgerFlag(fs, ledgerFlag)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageError("audit verify: unexpected argument %q", fs.Arg(0))
	}
	if *pack != "" {
		return verifyPack(e, *pack, *signedBy, time.Now())
	}
	db, err := openLedgerReadOnly(ctx, e, *ledgerFlag)
	if err != nil {
		return err
	}
	defer db.Close()
	rep, err := db.VerifyChain(ctx)
	if err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	// The chain cannot tell a lowering of the policy appended with its hash computed: its
	// signatures, checked against the allowed signers, can.
	unsigned, err := approval.UnsignedLedgerLowerings(ctx, db, e.getenv(approval.EnvAllowedSigners))
	if err != nil {
		rep.Findings = append(rep.Findings, ledger.Finding{Problem: err.Error()})
	}
	for _, u := range unsigned {
		rep.Findings = append(rep.Findings, ledger.Finding{Problem: u.Error()})
	}
	// Nor can it tell an approval appended with its hash computed: the signature it stores can.
	if err := unprovenApprovals(ctx, db, e.getenv(approval.EnvAllowedSigners), &rep); err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	if *headFile != "" {
		note, finding, err := signedHead(ctx, e, db, *headFile, *signedBy, time.Now())
		if err != nil {
			return err
		}
		if finding != "" {
			rep.Findings = append(rep.Findings, ledger.Finding{Problem: finding})
		} else {
			fmt.Fprintln(e.stdout, note)
		}
	}
	for _, f := range rep.Findings {
		fmt.Fprintln(e.stdout, f)
	}
	if len(rep.Findings) > 0 {
		return &exitError{code: exitBroken, err: fmt.Errorf("audit verify: the trail does not check out: %d finding(s) in %d events, %d row events and %d payouts; chain head %s",
			len(rep.Findings), rep.Events, rep.RowEvents, rep.Payouts, rep.Head)}
	}
	checked := "totals, schema and file" // PostgreSQL has no file check: the server checks its pages
	if ledger.IsURL(ledgerPath(e, *ledgerFlag)) {
		checked = "totals and schema"
	}
	fmt.Fprintf(e.stdout, "intact: %d events, %d row events, %d payouts, %s check ok; chain head %s\n",
		rep.Events, rep.RowEvents, rep.Payouts, checked, rep.Head)
	return nil
}

func verifyPack(e *env, path, signedBy string, now time.Time) error {
	f, fi, err := untrusted.Open(path)
	if err != nil {
		return usageError("audit verify: %v", err)
	}
	defer f.Close()
	rep, err := audit.VerifyPack(f, fi.Size())
	if err != nil {
		return &exitError{code: exitBroken, err: fmt.Errorf("audit verify: %s: %w", path, err)}
	}
	for _, f := range rep.Findings {
		fmt.Fprintln(e.stdout, f)
	}
	if len(rep.Findings) > 0 {
		return &exitError{code: exitBroken, err: fmt.Errorf("audit verify: pack %s does not check out: %d finding(s)", path, len(rep.Findings))}
	}
	note, err := packSignature(e, path, signedBy, now)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "intact: pack of run %s, %d members, %d events of %d payouts, %d report rows checked against them; chain head %s; %s\n",
		rep.Info.RunID, rep.Members, rep.Events, rep.Payouts, rep.Rows, rep.Info.ChainHead, note)
	return nil
}

// packSignature checks the signature beside a pack (FILE.zip.sig, namespace payout-pack) against
// the allowed signers, and says whose it is. An unsigned pack is only consistent in itself:
// anyone can write one, and the note says so, unless signedBy asks for a signer: then an
// unsigned pack, or one another signed, is exit 4. A signature that does not hold is exit 4.
func packSignature(e *env, path, signedBy string, now time.Time) (string, error) {
	id, err := checkSignatureFile(e, path, path+audit.SignatureSuffix, now)
	switch {
	case errors.Is(err, os.ErrNotExist) && signedBy != "":
		return "", &exitError{code: exitBroken, err: fmt.Errorf("audit verify: %s is unsigned (no %s): --signed-by %s asks for its signature",
			path, path+audit.SignatureSuffix, signedBy)}
	case errors.Is(err, os.ErrNotExist):
		return "unsigned: it is consistent in itself, compare its chain head with the ledger's (payout audit verify) to trust it", nil
	case err != nil:
		return "", err
	}
	if err := isSigner(id, signedBy, path); err != nil {
		return "", err
	}
	return fmt.Sprintf("signed by %s (%s)", id.Principal(), id.Fingerprint), nil
}

// isSigner refuses (exit 4) a signature by another than the principal signedBy, when one is asked for.
func isSigner(id signature.Identity, signedBy, path string) error {
	if signedBy == "" || slices.Contains(id.Principals, signedBy) {
		return nil
	}
	return &exitError{code: exitBroken, err: fmt.Errorf("audit verify: %s is signed by %s (%s), not by %s", path, id.Principal(), id.Fingerprint, signedBy)}
}

// Bounds of the files `audit verify` reads whole: whoever hands an auditor a pack or a head may
// have put a link to /dev/zero, a FIFO or a huge file in the place of either or its signature.
const (
	maxSignatureFile = 64 << 10
	maxHeadFile      = 64 << 10
)

// checkSignatureFile checks that sigPath signs the file at path in namespace payout-pack with a
// key the allowed signers ($PAYOUT_ALLOWED_SIGNERS) trust: os.ErrNotExist when there is no
// signature; exit 2 without allowed signers; exit 4 when it does not hold.
func checkSignatureFile(e *env, path, sigPath string, now time.Time) (signature.Identity, error) {
	armored, err := untrusted.ReadSmall(sigPath, maxSignatureFile)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return signature.Identity{}, err
	case errors.Is(err, untrusted.ErrNotRegular), errors.Is(err, untrusted.ErrTooLarge):
		return signature.Identity{}, &exitError{code: exitBroken, err: fmt.Errorf("audit verify: %w: not a signature", err)}
	case err != nil:
		return signature.Identity{}, &exitError{code: exitAborted, err: fmt.Errorf("audit verify: %w", err)}
	}
	allowedPath := e.getenv(approval.EnvAllowedSigners)
	if allowedPath == "" {
		return signature.Identity{}, usageError("audit verify: %s is signed (%s): set %s to the allowed_signers file that names the service account's key, to check it",
			path, sigPath, approval.EnvAllowedSigners)
	}
	allowed, err := signature.LoadAllowedSigners(allowedPath)
	if err != nil {
		return signature.Identity{}, configError(&ConfigError{Field: approval.EnvAllowedSigners, Value: allowedPath, Err: err})
	}
	sig, err := signature.Parse(armored)
	if err != nil {
		return signature.Identity{}, &exitError{code: exitBroken, err: fmt.Errorf("audit verify: %s: %w", sigPath, err)}
	}
	f, _, err := untrusted.Open(path)
	if err != nil {
		return signature.Identity{}, usageError("audit verify: %v", err)
	}
	defer f.Close()
	id, err := allowed.Verify(f, sig, signature.NamespacePack, now)
	if err != nil {
		return signature.Identity{}, &exitError{code: exitBroken, err: fmt.Errorf("audit verify: the signature %s does not hold: %w", sigPath, err)}
	}
	return id, nil
}

// signedHead checks a chain-head statement that a run's end wrote beside its reports: its
// signature (FILE.sig), and that the ledger's chain still holds that head. A finding names a
// head the chain no longer holds: the history the run reported was rewritten since.
func signedHead(ctx context.Context, e *env, db *ledger.DB, path, signedBy string, now time.Time) (note, finding string, err error) {
	data, err := untrusted.ReadSmall(path, maxHeadFile)
	if err != nil {
		return "", "", usageError("audit verify --head: %v", err)
	}
	runID, head, err := approval.ParseHeadStatement(data)
	if err != nil {
		return "", "", usageError("audit verify --head %s: %v", path, err)
	}
	id, err := checkSignatureFile(e, path, path+".sig", now)
	if errors.Is(err, os.ErrNotExist) {
		return "", "", usageError("audit verify --head %s: no signature %s.sig beside it", path, path)
	} else if err != nil {
		return "", "", err
	}
	if err := isSigner(id, signedBy, path); err != nil {
		return "", "", err
	}
	// The check a run makes of the chain since the last signed head, from this one; what it finds
	// past the head VerifyChain has already reported.
	findings, err := db.VerifySince(ctx, head)
	if err != nil {
		return "", "", &exitError{code: exitAborted, err: err}
	}
	for _, f := range findings {
		if f.EventID == head.ID {
			return "", fmt.Sprintf("head %s that run %s reported, signed by %s: %s", head, runID, id.Principal(), f), nil
		}
	}
	return fmt.Sprintf("the head %s that run %s reported, signed by %s (%s), is in the chain", head, runID, id.Principal(), id.Fingerprint), "", nil
}

// auditExportCmd writes a run's evidence pack.
func auditExportCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "audit export", "audit export --run RUN --out FILE.zip [--with-input [--input FILE]] [--ledger FILE] [--tz NAME]")
	runID := fs.String("run", "", "the `RUN` to pack, by its id (payout status lists the runs)")
	out := fs.String("out", "", "the pack to write (a zip file, readable by you only)")
	withInput := fs.Bool("with-input", false, "include the input file; refused unless its SHA-256 is still the run's")
	input := fs.String("input", "", "where the input file is now (default: the name the run was given); implies --with-input")
	ledgerFlag := new(string)
	addLedgerFlag(fs, ledgerFlag)
	var tz zoneOption
	tz.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	zone, err := tz.location(e.getenv)
	if err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		fs.Usage()
		return usageError("audit export: unexpected argument %q", fs.Arg(0))
	case *runID == "" || *out == "":
		fs.Usage()
		return usageError("audit export: --run and --out are required")
	}
	db, err := openLedgerReadOnly(ctx, e, *ledgerFlag)
	if err != nil {
		return err
	}
	defer db.Close()
	run, err := db.GetRun(ctx, *runID)
	if errors.Is(err, ledger.ErrNotFound) {
		return usageError("audit export: no run %q in the ledger (see `payout status`)", *runID)
	} else if err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	o := audit.ExportOptions{RunID: run.ID, Out: *out, Actor: actor.Current(), Now: time.Now(), Zone: zone,
		AllowedSigners: e.getenv(approval.EnvAllowedSigners)}
	key, err := signature.SigningKeyFromEnv(ctx, e.getenv)
	if err != nil {
		return configError(&ConfigError{Field: signature.EnvSigningKey, Value: e.getenv(signature.EnvSigningKey), Err: err})
	}
	if key != nil {
		defer key.Close()
		o.Sign = func(pack io.Reader) ([]byte, error) { return signature.Sign(ctx, pack, signature.NamespacePack, key) }
	}
	if *withInput || *input != "" {
		o.Input = *input
		if o.Input == "" {
			o.Input = run.File
		}
	}
	info, err := audit.Export(ctx, db, o)
	switch {
	case errors.Is(err, audit.ErrInputChanged) || errors.Is(err, os.ErrNotExist):
		return usageError("audit export: %v (name where the run's file is now with --input FILE); no pack written", err)
	case err != nil:
		return &exitError{code: exitAborted, err: fmt.Errorf("audit export: %w; no pack written", err)}
	}
	signed := "unsigned (set $" + signature.EnvSigningKey + " to sign packs)"
	if key != nil {
		signed = "signed by " + key.Fingerprint() + " in " + *out + audit.SignatureSuffix
	}
	fmt.Fprintf(e.stdout, "wrote %s: run %s, %d events; chain head %s; %s\n", *out, info.RunID, info.Events, info.ChainHead, signed)
	return nil
}

// defaultWALWait is how long purge waits for readers of the -wal before it says the -wal still
// holds data: a callback receiver's reads take milliseconds.
const defaultWALWait = 30 * time.Second

// purgeCmd masks the names and account numbers of old final payouts. Exit 0: done; 4: done, but
// payouts last changed before DATE that are not final were left (named on stderr); 2: usage;
// 1: the ledger failed, nothing changed. After masking, it rewrites the ledger's file and empties
// its -wal so that the old bytes are gone too (ledger.DB.Purge); exit 4 when the -wal
// could not be emptied.
func purgeCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "purge", "purge --before YYYY-MM-DD [--wal-wait DURATION] [--ledger FILE]")
	beforeFlag := fs.String("before", "", "mask final payouts last changed before this day (00:00 UTC), at the latest today")
	walWait := fs.Duration("wal-wait", defaultWALWait, "how long to wait for other processes to stop reading the ledger's -wal, which must be emptied")
	ledgerFlag := new(string)
	addLedgerFlag(fs, ledgerFlag)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageError("purge: unexpected argument %q", fs.Arg(0))
	}
	before, err := time.Parse(time.DateOnly, strings.TrimSpace(*beforeFlag))
	if err != nil {
		return usageError("purge: --before %q: want a day as YYYY-MM-DD (UTC)", *beforeFlag)
	}
	if today := time.Now().UTC().Truncate(24 * time.Hour); before.After(today) {
		return usageError("purge: --before %s is after today (%s, UTC): nothing changed", before.Format(time.DateOnly), today.Format(time.DateOnly))
	}
	db, err := openLedgerReadOnly(ctx, e, *ledgerFlag)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := audit.Purge(ctx, db, before, *walWait)
	if err != nil {
		return &exitError{code: exitAborted, err: fmt.Errorf("%w: nothing changed", err)}
	}
	fmt.Fprintf(e.stdout, "purged %d payout(s) last changed before %s (UTC): names and account numbers masked, each with a purge event; also %d rejected input row(s), %d stored callback(s) and %d plan statement(s)\n",
		len(res.Purged), before.Format(time.DateOnly), res.RejectedRows, res.Callbacks, res.Plans)
	for _, p := range res.Left {
		fmt.Fprintf(e.stderr, "left %s: %s is not final; `payout reconcile` settles it, a later purge masks it\n", p.Ref, p.State)
	}
	if err := res.NotForgotten; errors.Is(err, ledger.ErrWALKept) {
		return &exitError{code: exitAttention, err: fmt.Errorf("purge: the names and account numbers are masked in the ledger, but %w: it still holds older copies of them. "+
			"Stop the processes that hold the ledger open (payout callbacks, watch) or wait until they are idle, then run `payout purge --before %s` again: it empties the -wal",
			err, before.Format(time.DateOnly))}
	} else if err != nil {
		return &exitError{code: exitAborted, err: fmt.Errorf("purge: the names and account numbers are masked in the ledger, but wiping their old copies from its files failed: %w; run the purge again", err)}
	}
	if ledger.IsURL(ledgerPath(e, *ledgerFlag)) {
		fmt.Fprintln(e.stdout, "the ledger's tables were rewritten without the old copies (VACUUM FULL); the PostgreSQL server's write-ahead log, its archive and its backups keep them until they rotate out")
	}
	if len(res.Left) > 0 {
		return &exitError{code: exitAttention, err: fmt.Errorf("purge: %d payout(s) last changed before %s are not final and were left as they are", len(res.Left), before.Format(time.DateOnly))}
	}
	return nil
}

// unprovenApprovals adds to rep every approval event whose stored signature does not prove it
// (approval.CheckStoredApprovals).
func unprovenApprovals(ctx context.Context, db *ledger.DB, allowedSigners string, rep *ledger.ChainReport) error {
	events, err := db.LedgerEvents(ctx, ledger.EventFilter{Kind: ledger.EventApproved})
	if err != nil {
		return err
	}
	// A run's approvals at a time: each holds its plan statement as signed, which a whole
	// ledger's would not fit in memory.
	for len(events) > 0 {
		n := 1
		for n < len(events) && events[n].RunID == events[0].RunID {
			n++
		}
		checked, err := approval.CheckStoredApprovals(ctx, db, events[:n], allowedSigners)
		if err != nil {
			return err
		}
		for _, a := range checked {
			if a.Problem != "" {
				rep.Findings = append(rep.Findings, ledger.Finding{EventID: a.Event.ID,
					Problem: fmt.Sprintf("an approval of run %s by %q: %s", a.Event.RunID, a.Event.Facts["principal"], a.Problem)})
			}
		}
		events = events[n:]
	}
	return nil
}
