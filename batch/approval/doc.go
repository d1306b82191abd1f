// Package approval judges the signatures and refusals beside a file against its plan: who approved it, who refused it, and what is missing.
//
// Approvals (maker-checker): the ledger's policy says how many distinct people must sign a
// file's plan statement before a run pays it; people are the principals of OpenSSH keys listed
// in an allowed_signers file, never operating-system accounts. The judge only answers; the run
// asks it, and records what it accepted.
//
// The same signatures, in the namespace payout-repeat, accept the rows of a file held as possible
// repeats where nobody can run it again with --allow-repeat (folder mode): JudgeRepeats.
//
// The judge works at the door, on the files beside an input; the proof (proof.go) works at the
// till, on what the ledger stored: before each payout's intent a run checks it against the plan
// statements and signatures the chain holds, verified again once a run (Prove, Proof.Check), so
// that a row added to or changed in the ledger by hand, or a plan refused after its rows were
// recorded, is not sent.
package approval
